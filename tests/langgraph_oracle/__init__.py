"""LangGraph's own test suite run against guarded graphs (see ``harness``)."""
