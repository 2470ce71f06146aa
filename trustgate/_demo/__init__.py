"""Bundled sample data and the runners behind ``trustgate demo``."""
