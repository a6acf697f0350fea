"""Renderers: results -> what users read (plain text, rich tables, JSON)."""
