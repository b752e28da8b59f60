"""Shape ops: views, indexing, masks and scatters, and the in-place methods.
"""
