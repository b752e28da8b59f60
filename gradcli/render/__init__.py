"""Renderers: the only place that formats results (rich tables, JSON)."""
