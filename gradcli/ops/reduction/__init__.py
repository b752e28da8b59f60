"""Reductions, scans and order statistics.
"""
