"""Lexicons for the draft rules, shipped as package data (see causal.txt for the format)."""
