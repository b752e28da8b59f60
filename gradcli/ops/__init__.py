"""The op table: every op's forward and derivative, grouped by family, plus Tensor's operators.

Importing this package fills :data:`REGISTRY` (name → callable, the namespace of the language and of
``import gradcli``) and installs Tensor methods and, last, Tensor's operators (:mod:`.operators`, the table of
infix operators that the language derives its own from). Each name is declared once, with ``@op`` (a primitive:
forward, then its derivative) or ``@composite`` (a function that dispatches to ops), in :mod:`._core`. The
families, each importing only those above it:

* :mod:`.creation` — tensor, zeros, ones, full, eye, arange, linspace, rand, randn, randint, *_like, new_*
* :mod:`.comparison` — eq/ne/lt/le/gt/ge, bitwise_and/or/xor, isnan/isinf/isfinite, where, dtype casts
  (Tensor.to, .float(), ...)
* :mod:`.unary` — sqrt/rsqrt/reciprocal, exp/log, trigonometry, hyperbolic functions, sigmoid, erf, neg, abs,
  sign (the trivial ones declared from one table)
* :mod:`.arithmetic` — add, sub/rsub, mul, div/true_divide/floor_divide, remainder, pow/square, clamp,
  maximum/minimum
* :mod:`.shape` — reshape/view/flatten, transpose/permute/movedim/T, squeeze/unsqueeze, select/narrow, cat/stack,
  split/chunk/unbind, flip, clone
* :mod:`.reduction` — sum, mean, prod, max/min, amax/amin, argmax/argmin, var/std, logsumexp, norm, cumsum,
  sum_to_size, expand, repeat
* :mod:`.indexing` — ``x[key]``, the ops of ``x[key] = v`` (CopySlices), index_select, gather
* :mod:`.inplace` — the in-place methods (add_, sub_, mul_, div_, pow_, clamp_, fill_, zero_, copy_), ``t += v``,
  ``t[key] = v``, and the version counter that guards saved values
* :mod:`.random` — randperm, randint_like, normal, bernoulli, multinomial, normal_/uniform_/random_/exponential_,
  initial_seed, seed (PyTorch's generator: :mod:`gradcli.engine.generator`)
* :mod:`.linalg` — dot, mv, mm, bmm, outer, matmul, linear, einsum
* :mod:`.activation` — relu, relu6, leaky_relu, elu, selu, gelu, silu, softplus, hardtanh
* :mod:`.nn` — softmax, log_softmax
* :mod:`.scans` — cumprod, cummax/cummin, logcumsumexp (cumsum is in :mod:`.reduction`)
* :mod:`.products` — tril, triu, trace, kron, tensordot
* :mod:`.scatter` — masked_fill, masked_select, scatter, scatter_add, index_fill, index_copy, take, take_along_dim,
  nonzero
* :mod:`.layers` — embedding, batch_norm, dropout, sort/argsort, index_add (torch.nn's layers)
* :mod:`.order` — topk, kthvalue, median, msort
* :mod:`.matrix` — torch.linalg's det, slogdet, inv, solve, cholesky, qr, eigh, eigvalsh, svd, svdvals, pinv,
  matrix_norm, vector_norm, norm, cross, matrix_power, matrix_exp, multi_dot (registered as ``linalg.<name>``),
  det, inverse, slogdet, logdet, qr, svd, pinverse, cross, matrix_power, matrix_exp, cdist
* :mod:`.loss` — cross_entropy, nll_loss, mse_loss, l1_loss, smooth_l1_loss, huber_loss, binary_cross_entropy,
  binary_cross_entropy_with_logits, kl_div
* :mod:`.functional` — logsigmoid, softsign, celu, mish, hardswish, hardsigmoid, glu, softmin, layer_norm,
  group_norm, instance_norm, normalize, cosine_similarity, pairwise_distance, bilinear, one_hot
* :mod:`.more` — quantile, nanquantile, scatter_reduce, masked_scatter
* :mod:`.nn.pooling` — max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool1d/2d
* :mod:`.nn.resampling` — pad, constant_pad_nd, interpolate
* :mod:`.nn.conv` — conv1d/conv2d, conv_transpose1d/2d
* :mod:`.nn.fold` — unfold/fold, Tensor.unfold
"""

from .elementwise import activation, arithmetic, comparison, unary
from . import creation, random
from .shape import indexing, inplace, views as shape
from .linalg import products as linalg
from .nn import loss, softmax as nn
from .reduction import reductions as reduction
from .nn import layers  # noqa: F401  (embedding, batch_norm, dropout, sort/argsort, index_add)  # (importing them fills the registry)
from .reduction import scans  # noqa: F401  (cumprod, cummax/cummin, logcumsumexp)
from .linalg import structured as products  # noqa: F401  (tril, triu, trace, kron, tensordot)
from .shape import scatter  # noqa: F401  (masked_fill/select, scatter(_add), index_fill/copy, take(_along_dim), nonzero)
from .reduction import order  # noqa: F401  (topk, kthvalue, median, msort)
from .nn import functional  # noqa: F401  (torch.nn.functional activations, norms, distances)
from .reduction import quantile as more  # noqa: F401  (quantile, nanquantile, scatter_reduce, masked_scatter)
from .nn import pooling  # noqa: F401  (max/avg/adaptive_avg pools)
from .nn import resampling  # noqa: F401  (pad, constant_pad_nd, interpolate)
from .nn import conv  # noqa: F401  (conv1d/2d, conv_transpose1d/2d)
from .nn import fold as _fold  # noqa: F401  (unfold/fold, Tensor.unfold; private: "fold" names the op)
from .linalg import decompositions as matrix  # noqa: F401  (torch.linalg's functions, det, inverse, cdist, ...)
from ..engine.tensor import to_tensor
from .core.declare import KINDS, REGISTRY, Op
from .elementwise.activation import relu
from .elementwise.arithmetic import (add, div, floor_divide, mul, pow, remainder, rsub, sub, true_divide,  # noqa: F401
                         _sub)
from .elementwise.comparison import (bitwise_and, bitwise_or, bitwise_xor, eq, ge, gt, isfinite, isinf, isnan, le, lt,  # noqa: F401
                         ne, to, where)
from .shape.indexing import getitem
from .linalg.products import dot, matmul, mm, mv, outer
from .nn.loss import binary_cross_entropy_with_logits
from .reduction.reductions import expand, mean, norm, sum, sum_to_size
from .shape.views import flatten, permute, reshape, select, squeeze, t, transpose, unsqueeze
from .elementwise.unary import abs, exp, log, neg, reciprocal, sigmoid, sign, sqrt, tanh

from . import operators  # noqa: F401  (installs Tensor's operators; imports the ops above)


__all__ = ["REGISTRY", "KINDS", "Op", "to_tensor"] + sorted(n for n in REGISTRY if not n.startswith("_"))

# grad_fn._saved_* (PyTorch's names of saved values) and torch.autograd.graph's saved tensors hooks,
# installed on the engine
from .core import saved_hooks, saved_names  # noqa: F401, E402
