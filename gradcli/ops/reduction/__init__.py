"""Reductions, scans, order statistics and quantiles.
"""
