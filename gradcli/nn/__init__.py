"""torch.nn for gradcli: modules (``Module`` and the built-in layers), ``Parameter`` and ``init``, computing
as PyTorch 2.13 does (library API layer; the language exposes it as ``torch.nn``)."""
