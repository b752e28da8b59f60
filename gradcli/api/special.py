"""``gradcli.api.special``: PyTorch's ``torch.special`` namespace (``G.special.expit(x)``), the functions of the op
table registered as ``"special.<name>"`` (:mod:`gradcli.ops.elementwise.special` declares them, and registers
torch.special's names for ops declared under another name, such as ``special.expit`` for sigmoid).

The language's ``torch.special`` is built from the same table (gradcli/language/namespaces.py); a name PyTorch has
in torch.special and gradcli lacks says so (NotImplementedError) rather than that it does not exist.
"""

from ..ops import REGISTRY as _REGISTRY

#: The names of torch.special that gradcli has.
NAMES = tuple(sorted(n[len("special."):] for n in _REGISTRY if n.startswith("special.")))

globals().update({n: _REGISTRY["special." + n] for n in NAMES})

__all__ = list(NAMES)
