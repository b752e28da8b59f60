"""torch.optim for gradcli: optimizers and learning-rate schedulers computing as PyTorch 2.13's single-tensor
(``foreach=False``) implementations (library API layer; the language exposes it as ``torch.optim``)."""

from . import lr_scheduler  # noqa: F401
from .optimizer import CLASSES, SGD, Adagrad, Adam, AdamW, Optimizer, RMSprop  # noqa: F401
from ..nn.naming import name_classes as _name_classes  # noqa: E402

_name_classes([*CLASSES.values(), *lr_scheduler.CLASSES.values()])
