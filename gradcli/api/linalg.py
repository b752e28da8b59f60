"""``gradcli.api.linalg``: PyTorch's ``torch.linalg`` namespace (``G.linalg.det(A)``), the functions of the op table
registered as ``"linalg.<name>"`` (the modules of :mod:`gradcli.ops.linalg`).

The language's ``torch.linalg`` is built from the same table (gradcli/language/namespaces.py); a name PyTorch has
in torch.linalg and gradcli lacks says so (NotImplementedError) rather than that it does not exist.
"""

from ..ops import REGISTRY as _REGISTRY

#: The names of torch.linalg that gradcli has.
NAMES = tuple(sorted(n[len("linalg."):] for n in _REGISTRY if n.startswith("linalg.")))

globals().update({n: _REGISTRY["linalg." + n] for n in NAMES})

from ..ops.linalg.inverses import _LinAlgError as LinAlgError  # noqa: E402, F401  (torch.linalg.LinAlgError)

__all__ = [*NAMES, "LinAlgError"]
