"""Caps on the work one call may do, in one place."""

from __future__ import annotations

GIT_TIMEOUT = 30.0
