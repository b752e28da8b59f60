"""The op table: every op's forward and derivative, grouped by family, plus Tensor's operators.

Importing this package fills :data:`REGISTRY` (name → callable, the namespace of the language and of
``import gradcli``) and installs Tensor methods and, last, Tensor's operators (:mod:`.operators`, the table of
infix operators that the language derives its own from). Each name is declared once, with ``@op`` (a primitive:
forward, then its derivative) or ``@composite`` (a function that dispatches to ops), in :mod:`.core.declare`. The
families, a module each, by folder (tests/engine/test_layers.py checks that they import each other without a
cycle):

* :mod:`.elementwise.comparison` — eq/ne/lt/le/gt/ge, bitwise_and/or/xor, isnan/isinf/isfinite, where, dtype
  casts (Tensor.to, .float(), ...)
* :mod:`.elementwise.unary` — sqrt/rsqrt/reciprocal, exp/log, trigonometry, hyperbolic functions, sigmoid, erf,
  neg, abs, sign
* :mod:`.elementwise.arithmetic` — add, sub/rsub, mul, div/true_divide/floor_divide, remainder, pow/square,
  clamp, maximum/minimum
* :mod:`.elementwise.activation` — relu, relu6, leaky_relu, elu, selu, gelu, silu, softplus, hardtanh
* :mod:`.elementwise.special` — erfc, erfinv, lgamma, digamma, polygamma, mvlgamma, i0 and torch.special's
  Bessel, normal-distribution and entropy functions, logit, sinc, xlogy, asinh/acosh/atanh, hypot, copysign,
  fmax/fmin, nan_to_num, lerp, addcmul/addcdiv, logical_and/or/xor/not, gcd/lcm, heaviside
* :mod:`.elementwise.more_math` — logaddexp, logaddexp2, float_power, ldexp, frexp, signbit, isposinf,
  isneginf, bitwise_not, bitwise_left_shift/right_shift, logspace
* :mod:`.creation` — tensor, zeros, ones, full, eye, arange, linspace, rand, randn, randint, *_like, new_*
* :mod:`.random` — randperm, randint_like, normal, bernoulli, multinomial, normal_/uniform_/random_/exponential_,
  initial_seed, seed (PyTorch's generator: :mod:`gradcli.engine.generator`)
* :mod:`.dtype_info` — promote_types, result_type, can_cast, finfo, iinfo, set_default_dtype, set_printoptions
* :mod:`.shape.views` — reshape/view/flatten, transpose/permute/movedim/T, squeeze/unsqueeze, select/narrow and
  slicing, diagonal/diag_embed/diag, flip, clone
* :mod:`.shape.joins` — cat/concat, stack, split, chunk, unbind
* :mod:`.shape.indexing` — ``x[key]``, the ops of ``x[key] = v`` (CopySlices), index_select, gather
* :mod:`.shape.inplace` — the in-place methods (add_, sub_, mul_, div_, pow_, clamp_, fill_, zero_, copy_),
  ``t += v``, ``t[key] = v``, and the version counter that guards saved values
* :mod:`.shape.scatter` — masked_fill, masked_select, masked_scatter, scatter, scatter_add, scatter_reduce,
  index_fill, index_copy, index_add, take, take_along_dim, nonzero (and their in-place methods)
* :mod:`.shape.more_shape` — hstack/vstack/dstack/column_stack, hsplit/vsplit/dsplit/tensor_split, roll, tile,
  repeat_interleave, broadcast_to/broadcast_tensors/broadcast_shapes, atleast_1d/2d/3d, flipud/fliplr/rot90,
  ravel, block_diag, diagflat, meshgrid, cartesian_prod, combinations, tril/triu_indices, select/slice/
  diagonal_scatter, unravel_index, numel, is_tensor, positive
* :mod:`.reduction.reductions` — sum, mean, prod, max/min, amax/amin, argmax/argmin, var/std, logsumexp, norm,
  cumsum, sum_to_size, expand, repeat
* :mod:`.reduction.scans` — cumprod, cummax/cummin, logcumsumexp
* :mod:`.reduction.order` — sort/argsort, topk, kthvalue, median, msort
* :mod:`.reduction.quantile` — quantile, nanquantile
* :mod:`.reduction.search` — isin, searchsorted, bucketize, histc, bincount, unique, unique_consecutive
* :mod:`.linalg.products` — dot, mv, mm, bmm, outer, matmul, linear, einsum; torch.linalg's cross, multi_dot,
  vecdot, matmul, diagonal; cross, vdot
* :mod:`.linalg.structured` — tril, triu, trace, kron, tensordot
* :mod:`.linalg.inverses` — torch.linalg's inv, solve, pinv; inverse, pinverse
* :mod:`.linalg.decompositions` — torch.linalg's cholesky, qr, eigh, eigvalsh, svd, svdvals; qr, svd
* :mod:`.linalg.determinants` — torch.linalg's det, slogdet; det, slogdet, logdet
* :mod:`.linalg.norms` — torch.linalg's vector_norm, matrix_norm, norm; cdist
* :mod:`.linalg.matrix_functions` — torch.linalg's matrix_power, matrix_exp; matrix_power, matrix_exp
* :mod:`.linalg.fused` — addmm, addmv, addbmm, baddbmm, addr (beta * input + alpha * product), inner,
  chain_matmul
* :mod:`.reduction.more_reductions` — nansum, nanmean, nanmedian, std_mean, var_mean, aminmax, count_nonzero,
  dist, diff, cov, corrcoef, trapezoid/trapz, cumulative_trapezoid, mode, renorm
* :mod:`.nn.softmax` — softmax, log_softmax
* :mod:`.nn.loss` — cross_entropy, nll_loss, mse_loss, l1_loss, smooth_l1_loss, huber_loss,
  binary_cross_entropy, binary_cross_entropy_with_logits, kl_div
* :mod:`.nn.embedding` — embedding
* :mod:`.nn.batch_norm` — batch_norm
* :mod:`.nn.dropout` — dropout
* :mod:`.nn.functional` — logsigmoid, softsign, celu, mish, hardswish, hardsigmoid, glu, softmin, layer_norm,
  group_norm, instance_norm, normalize, cosine_similarity, pairwise_distance, bilinear, one_hot
* :mod:`.nn.pooling` — max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool1d/2d
* :mod:`.nn.resampling` — pad, constant_pad_nd, interpolate
* :mod:`.nn.pooling_nd` — max_pool3d, avg_pool3d, adaptive_avg_pool3d, adaptive_max_pool1d/2d/3d,
  fractional_max_pool2d/3d, max_unpool1d/2d/3d, lp_pool1d/2d/3d
* :mod:`.nn.conv` — conv1d/2d/3d, conv_transpose1d/2d/3d
* :mod:`.nn.fold` — unfold/fold, Tensor.unfold
* :mod:`.nn.shrink_and_margins` — hardshrink, softshrink, tanhshrink, threshold, prelu, pixel_shuffle/unshuffle,
  channel_shuffle, rms_norm, and the margin and likelihood losses
* :mod:`.shape.layout` — the memory formats (contiguous_format, channels_last, ...) and permuted allocation
* :mod:`.shape.strided` — stride, storage_offset, dim_order, resize_, untyped_storage, as_strided(_scatter)
* :mod:`.shape.more_scatter` — index_reduce, put, masked_scatter_, fill_diagonal_
* :mod:`.elementwise.inplace_unary` — the in-place unary methods (sin_, exp_, sqrt_, ...)
* :mod:`.linalg.factorizations` — torch.linalg's lu_factor(_ex), lu, lu_solve, solve_triangular, ldl_factor(_ex),
  inv_ex, solve_ex, cholesky_ex; lu, lu_solve, lu_unpack, triangular_solve, cholesky
* :mod:`.linalg.least_squares` — torch.linalg's lstsq, tensorinv, tensorsolve, matrix_rank
* :mod:`.elementwise.more_math2` — deg2rad, rad2deg, nextafter, igamma/igammac (special.gammainc/gammaincc),
  special.zeta
* :mod:`.shape.more_shape2` — argwhere, nonzero_static, vander
* :mod:`.reduction.histograms` — histogram, histogramdd
* :mod:`.reduction.numerical_gradient` — gradient
* :mod:`.legacy` — range (deprecated), typename, set_default_tensor_type (deprecated)
* :mod:`.random_poisson` — poisson (ATen's CPU sampler on PyTorch's generator)
* :mod:`.nn.feature_dropout` — dropout1d/2d/3d, feature_dropout, alpha_dropout, feature_alpha_dropout, rrelu,
  gumbel_softmax, local_response_norm, native_channel_shuffle
* :mod:`.nn.more_losses` — ctc_loss, multi_margin_loss, multilabel_margin_loss, embedding_bag, linear_cross_entropy

The functions of torch.linalg and torch.special are registered under their qualified names (``"linalg.det"``,
``"special.ndtr"``); the namespaces are :mod:`gradcli.api.linalg` and :mod:`gradcli.api.special`.
"""

# The families, in the order listed above (importing a module declares its ops). The modules are bound under
# private names so that none hides an op of the same name (scatter, softmax, dropout, ...) in this namespace.
from .elementwise import (comparison as _comparison, unary as _unary, arithmetic as _arithmetic,  # noqa: F401
                          activation as _activation, special as _special, more_math as _more_math)
from . import creation as _creation, random as _random, dtype_info as _dtype_info  # noqa: F401
from .shape import (views as _views, joins as _joins, indexing as _indexing, inplace as _inplace,  # noqa: F401
                    scatter as _scatter, more_shape as _more_shape)
from .reduction import (reductions as _reductions, scans as _scans, order as _order,  # noqa: F401
                        quantile as _quantile, search as _search)
from .linalg import (products as _products, structured as _structured, inverses as _inverses,  # noqa: F401
                     decompositions as _decompositions, determinants as _determinants, norms as _norms,
                     matrix_functions as _matrix_functions, fused as _fused)
from .reduction import more_reductions as _more_reductions  # noqa: F401
from .nn import (softmax as _softmax, loss as _loss, embedding as _embedding, batch_norm as _batch_norm,  # noqa: F401
                 dropout as _dropout, functional as _functional, pooling as _pooling,
                 resampling as _resampling, conv as _conv, fold as _fold,
                 shrink_and_margins as _shrink_and_margins)
from .nn import pooling_nd as _pooling_nd  # noqa: F401,E402
from .linalg import factorizations as _factorizations, least_squares as _least_squares  # noqa: F401
from .nn import feature_dropout as _feature_dropout, more_losses as _more_losses  # noqa: F401,E402
from ..engine.tensor import to_tensor  # noqa: F401
from .core.declare import KINDS, REGISTRY, Op  # noqa: F401
# the names most used, importable from here (``from gradcli.ops import matmul``)
from .elementwise.comparison import (bitwise_and, bitwise_or, bitwise_xor, eq, ge, gt, isfinite, isinf,  # noqa: F401
                                     isnan, le, lt, ne, to, where)
from .elementwise.unary import abs, exp, log, neg, reciprocal, sigmoid, sign, sqrt, tanh  # noqa: F401
from .elementwise.arithmetic import (_sub, add, div, floor_divide, mul, pow, remainder, rsub, sub,  # noqa: F401
                                     true_divide)
from .elementwise.activation import relu  # noqa: F401
from .shape.views import flatten, permute, reshape, select, squeeze, t, transpose, unsqueeze  # noqa: F401
from .shape.indexing import getitem  # noqa: F401
from .reduction.reductions import expand, mean, norm, sum, sum_to_size  # noqa: F401
from .linalg.products import dot, matmul, mm, mv, outer  # noqa: F401
from .nn.loss import binary_cross_entropy_with_logits  # noqa: F401

from . import operators  # noqa: F401  (installs Tensor's operators; imports the ops above)
from .core.declare import formulas_from_notes  # noqa: E402
from .core.formulas import pytorch_names  # noqa: E402

formulas_from_notes(pytorch_names)  # --explain's text for the ops declared with a note only


__all__ = ["REGISTRY", "KINDS", "Op", "to_tensor"] + sorted(n for n in REGISTRY if not n.startswith("_"))

# grad_fn._saved_* (PyTorch's names of saved values) and torch.autograd.graph's saved tensors hooks,
# installed on the engine
from .core import saved_hooks, saved_names  # noqa: F401, E402

# Strides and storage (stride, storage_offset, dim_order, resize_, untyped_storage, empty_permuted, the memory
# formats) and the strided view as_strided with as_strided_scatter
from .shape import strided as _strided  # noqa: F401, E402
from .shape.layout import MEMORY_FORMATS  # noqa: F401, E402
# More scatters: index_reduce, put, masked_scatter_, fill_diagonal_
from .shape import more_scatter as _more_scatter  # noqa: F401, E402
# The in-place forms of the unary elementwise functions (sin_, exp_, sqrt_, ...)
from .elementwise import inplace_unary as _inplace_unary  # noqa: F401, E402
# More elementwise math, shapes, histograms, legacy functions and the Poisson sampler (each module's docstring
# lists its ops): imported after the table above, whose ops they use.
from .elementwise import more_math2 as _more_math2  # noqa: F401, E402  deg2rad, rad2deg, nextafter, igamma, zeta
from .shape import more_shape2 as _more_shape2  # noqa: F401, E402  argwhere, nonzero_static, vander
from . import legacy as _legacy  # noqa: F401, E402  range, typename, set_default_tensor_type
from .reduction import histograms as _histograms  # noqa: F401, E402  histogram, histogramdd
from .reduction import numerical_gradient as _numerical_gradient  # noqa: F401, E402  gradient
from . import random_poisson as _random_poisson  # noqa: F401, E402  poisson
