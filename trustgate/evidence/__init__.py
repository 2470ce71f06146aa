"""Where truth is read from: the workspace, git, artifacts and their ledger, records and briefs."""
