"""The engine: Tensor, graph nodes and the backward pass, grad modes, hooks, saved values, the run
context, dtypes, PyTorch's random generator, printing, errors and limits.

The lowest layer: it imports nothing else of gradcli.
"""
