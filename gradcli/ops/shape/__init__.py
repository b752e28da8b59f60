"""Shape ops: views, joins and splits, indexing, masks and scatters, and the in-place methods.
"""
