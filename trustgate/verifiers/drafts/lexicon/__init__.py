"""The draft rules' vocabulary, shipped as package data (see draft.txt for the format)."""
