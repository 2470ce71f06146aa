"""File evidence: citations replayed against a workspace, changes against git, hashes,
artifacts acquired into the ledger and the trust bar they must meet.

:mod:`.citations` replays file/line citations, :mod:`.changes` checks claimed diffs,
:mod:`.hashes` claimed digests, :mod:`.acquisition` and :mod:`.trust` what the ledger
holds, and :mod:`.checks` are the gate verifiers built on them. The public face is
:mod:`trustgate.files`.
"""
