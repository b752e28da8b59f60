"""The op table: every op's forward and derivative, grouped by family, plus Tensor's operators.

Importing this package fills :data:`REGISTRY` (name → callable, the namespace of the language and of
``import gradcli``) and installs Tensor methods and, last, Tensor's operators (:mod:`.operators`, the table of
infix operators that the language derives its own from). Families:

* :mod:`.elementwise` — arithmetic, powers, exp/log, trigonometry, clamp/maximum/minimum, where, comparisons,
  dtype casts
* :mod:`.activation` — relu, relu6, leaky_relu, elu, selu, gelu, silu, softplus, hardtanh
* :mod:`.reduction` — sum, mean, prod, max/min, amax/amin, argmax/argmin, var/std, logsumexp, norm, cumsum,
  sum_to_size
* :mod:`.linalg` — dot, mv, mm, bmm, outer, matmul, linear, einsum
* :mod:`.shape` — reshape/view, transpose/permute/movedim/T, squeeze/unsqueeze, expand, narrow, cat/stack,
  split/chunk/unbind, flip, repeat, clone, index_select, gather, indexing
* :mod:`.nn` — softmax, log_softmax
* :mod:`.loss` — cross_entropy, nll_loss, mse_loss, l1_loss, smooth_l1_loss, huber_loss, binary_cross_entropy,
  binary_cross_entropy_with_logits, kl_div
* :mod:`.inplace` — the in-place methods (add_, sub_, mul_, div_, pow_, clamp_, fill_, zero_, copy_), ``t += v``,
  ``t[key] = v``, and the version counter that guards saved values
* :mod:`.creation` — tensor, zeros, ones, full, eye, arange, linspace, rand, randn, randint, *_like, new_*
"""

from . import creation, elementwise, linalg, loss, nn, reduction, shape  # noqa: F401  (fill the registry)
from . import activation  # noqa: F401
from . import inplace  # noqa: F401  (in-place methods: add_, mul_, zero_, fill_, copy_, ...)
from ._core import KINDS, REGISTRY, Op, to_tensor
from .activation import relu
from .elementwise import (abs, add, bitwise_and, bitwise_or, bitwise_xor, div, eq, exp, floor_divide, ge, gt, le,
                          log, lt, mul, ne, neg, pow, reciprocal, remainder, rsub, sigmoid, sign, sqrt, sub, tanh,
                          to, true_divide, where)
from .linalg import dot, matmul, mm, mv, outer
from .loss import binary_cross_entropy_with_logits
from .reduction import mean, norm, sum, sum_to_size
from .shape import expand, flatten, getitem, permute, reshape, select, squeeze, t, transpose, unsqueeze

from . import operators  # noqa: F401  (installs Tensor's operators; imports the ops above)


__all__ = ["REGISTRY", "KINDS", "Op", "to_tensor"] + sorted(n for n in REGISTRY if not n.startswith("_"))
