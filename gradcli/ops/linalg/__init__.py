"""Linear algebra: products, triangles and traces, and torch.linalg's matrix functions.
"""
