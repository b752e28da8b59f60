"""PyTorch's library namespaces above the op table: torch.autograd.functional, torch.func,
forward_ad, gradcheck, torch.autograd.graph, torch.linalg, torch.nn and torch.optim.
"""
