"""``gradcli.api.special``: PyTorch's ``torch.special`` namespace (``G.special.expit(x)``), the functions of the op
table registered as ``"special.<name>"`` (:mod:`gradcli.ops.elementwise.special` declares them), and
torch.special's names for ops the table has under another name (``special.expit`` is sigmoid).

The language's ``torch.special`` is built from the same table (gradcli/language/namespaces.py); a name PyTorch has
in torch.special and gradcli lacks says so (NotImplementedError) rather than that it does not exist.
"""

from ..ops.elementwise.special import special_namespace as _special_namespace

_MEMBERS = _special_namespace()

#: The names of torch.special that gradcli has.
NAMES = tuple(sorted(_MEMBERS))

globals().update(_MEMBERS)

__all__ = list(NAMES)
