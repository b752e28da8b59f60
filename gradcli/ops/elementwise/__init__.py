"""Elementwise ops: arithmetic, math functions, comparisons and activations.
"""
