"""Linear algebra: products, triangles and traces, and torch.linalg's inverses and solves, decompositions,
determinants, norms and matrix functions.
"""
