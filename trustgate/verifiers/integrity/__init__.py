"""Integrity: every price and URL a draft states is one the evidence approved.

:mod:`.check` finds and normalises them and compares them with the evidence set. The
public face is :mod:`trustgate.contracts` (``check_integrity``).
"""
