"""Where truth is read from: the workspace, git, artifacts and their ledger, records and briefs.

The implementation behind :mod:`trustgate.files`, :mod:`trustgate.drafts` and
:mod:`trustgate.contracts`: import from those. The module paths in here are not part of
the API and may change without a deprecation period.
"""
