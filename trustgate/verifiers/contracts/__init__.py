"""Closed lists and verdicts: a draft may cite only what an approved brief lists, and a
reviewer model's verdict is parsed strictly before anything acts on it.

:mod:`.patterns` finds citation identifiers, :mod:`.citations` checks them against the
brief, :mod:`.verdict` parses a verdict and :mod:`.blind` is the blind reviewer's
verifier. The public face is :mod:`trustgate.contracts`.
"""
