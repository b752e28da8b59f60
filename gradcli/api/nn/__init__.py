"""torch.nn for gradcli: modules (``Module`` and the built-in layers), ``Parameter`` and ``init``, computing
as PyTorch 2.13 does (library API layer; the language exposes it as ``torch.nn``)."""

from . import init, utils  # noqa: F401
from .layers import CLASSES  # noqa: F401
from .layers import *  # noqa: F401,F403
from .module import Module, RemovableHandle, core_of  # noqa: F401
from .parameter import Parameter  # noqa: F401
# normalization layers (LayerNorm, GroupNorm, InstanceNorm1d/2d, BatchNorm2d), more activations, Bilinear,
# ModuleDict, KLDivLoss, CosineSimilarity, PairwiseDistance
from . import extra as _extra  # noqa: E402
from .extra import *  # noqa: F401,F403,E402

CLASSES.update(_extra.CLASSES)

# convolution, pooling, fold and resize modules (gradcli/api/nn/conv.py)
from . import conv as _conv  # noqa: E402
from .conv import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, Conv1d, Conv2d, ConvTranspose1d,  # noqa: E402,F401
                   ConvTranspose2d, Fold, MaxPool1d, MaxPool2d, Unfold, Upsample)

CLASSES.update(_conv.CLASSES)

# padding, shrinkage activations, PReLU, Softmax2d, Unflatten, shuffles, fixed-mode upsampling, RMSNorm and the
# margin and likelihood losses (gradcli/api/nn/more.py)
from . import more as _more  # noqa: E402
from .more import *  # noqa: F401,F403,E402

CLASSES.update(_more.CLASSES)

# the recurrent layers RNN, LSTM, GRU and their cells (gradcli/api/nn/recurrent.py)
from . import recurrent as _recurrent  # noqa: E402
from .recurrent import *  # noqa: F401,F403,E402

CLASSES.update(_recurrent.CLASSES)

# 3-d convolution, pooling and normalization, adaptive max, unpooling, LP and fractional pools
# (gradcli/api/nn/pool3d.py)
from . import pool3d as _pool3d  # noqa: E402
from .pool3d import *  # noqa: F401,F403,E402

CLASSES.update(_pool3d.CLASSES)
# channel-wise and alpha dropouts, RReLU, LocalResponseNorm, the CTC, multi-margin, multi-label margin and linear
# cross-entropy losses (gradcli/api/nn/more2.py)
from . import more2 as _more2  # noqa: E402
from .more2 import *  # noqa: F401,F403,E402

CLASSES.update(_more2.CLASSES)

# every class prints as PyTorch's (torch.nn.modules.linear.Linear): gradcli/api/nn/naming.py
from .naming import name_classes as _name_classes  # noqa: E402

_name_classes([*CLASSES.values(), Module, Parameter])

# MultiheadAttention and the transformer modules (gradcli/api/nn/attention.py, gradcli/api/nn/transformer.py)
from . import transformer as _transformer  # noqa: E402
from .transformer import *  # noqa: F401,F403,E402

CLASSES.update(_transformer.CLASSES)

# ParameterList and ParameterDict (gradcli/api/nn/paramcontainers.py), printing as PyTorch's classes
from . import paramcontainers as _paramcontainers  # noqa: E402
from .paramcontainers import *  # noqa: F401,F403,E402

CLASSES.update(_paramcontainers.CLASSES)
_name_classes(_paramcontainers.CLASSES.values())

# the lazy modules LazyLinear, LazyConv1d/2d/3d, LazyBatchNorm1d/2d/3d (gradcli/api/nn/lazy_modules.py)
from . import lazy_modules as _lazy_modules  # noqa: E402
from .lazy_modules import *  # noqa: F401,F403,E402

CLASSES.update(_lazy_modules.CLASSES)
_name_classes(_lazy_modules.CLASSES.values())
