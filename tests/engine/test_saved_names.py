"""The values a graph node saved, under PyTorch's names (``grad_fn._saved_self``, ``_saved_result``,
``_saved_dim``, ...: gradcli/ops/core/saved_names.py), and ``torch.autograd.graph.saved_tensors_hooks``
(gradcli/ops/core/saved_hooks.py), compared with PyTorch.

:func:`test_saved_attributes_against_torch` runs every sample of the op table (tests/ops/opinfo.py) in float64 in
gradcli and in PyTorch and compares the output's ``grad_fn``: the set of ``_saved_*`` names in ``dir()`` and each
value (tensors: dtype, shape, values, requires_grad; other values: type and value). Where gradcli's derivative
rule saves something other than PyTorch's formula, the attribute is listed in :data:`DIFFERENCES` with the
reason; every other attribute of the case is still compared, and :func:`test_differences_are_current` fails
when a listed difference no longer occurs.
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import gradcli as G
from gradcli.ops.core.saved_hooks import save_on_cpu, saved_tensors_hooks

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))
import opinfo  # noqa: E402

from helpers import g_inputs, make_arrays, t_inputs  # noqa: E402


@dataclass(frozen=True)
class Difference:
    """Attributes of ``op``'s nodes that differ from PyTorch's (missing on one side, or another value), in the
    samples whose id contains ``when`` (every sample if None), and why."""

    op: str
    attrs: tuple
    reason: str
    when: str | None = None


_ONLY_NEEDED = ("PyTorch saves an input only when the formula of an input that requires grad uses it (the other "
                "attribute is None); gradcli's rule saves every value it names")
_SCALAR_DEFAULTS = ("gradcli's forward declares the default as a float (1.0); PyTorch's Scalar default is the int 1, "
                    "and a Scalar keeps the Python type it was given")
_CONSTANT_DTYPE = ("a constant input is saved as the array the op computed on, in the promoted dtype; PyTorch saves "
                   "the tensor as given (bool, int64, float32)")
_SYM_SIZES = "PyTorch's formula takes the input's sizes (derivatives.yaml: self.sym_sizes()); gradcli's rule does not"
_INDICES = ("PyTorch's formula uses the indices it saved from the forward (value_selecting_reduction_backward); "
            "gradcli's rule recomputes them from the saved input")
_FULL_REDUCTION = ("PyTorch records the overload without dim (SumBackward0 saves only self_sym_sizes); gradcli's one "
                   "op saves dim and keepdim too")

#: Where gradcli's rule saves other values than PyTorch's derivatives.yaml formula (see the module docstring).
DIFFERENCES = [
    # linear algebra (gradcli/ops/linalg/)
    Difference("linalg.diagonal", ("_saved_dim1", "_saved_dim2"), "PyTorch saves dim1 and dim2 as given (negative "
               "dims as unsigned 64-bit ints); gradcli saves them normalized"),
    Difference("linalg.svd", ("_saved_mat2",), "the sample's reconstruction U diag(S) Vh: PyTorch's mm saves Vh as "
               "a view it keeps, gradcli's the array it multiplied"),
    Difference("logdet", ("_saved_condition",), "PyTorch's logdet node saves its own condition flag; gradcli records "
               "logdet on top of slogdet"),
    Difference("linalg.vector_norm", ("_saved_ord",), _SCALAR_DEFAULTS.replace("1.0", "2.0").replace("int 1", "int 2")),
    Difference("linalg.matrix_norm", ("_saved_ord",), "PyTorch saves ord as given ('fro' or the int); gradcli saves "
               "its float"),
    Difference("linalg.norm", ("_saved_ord",), "PyTorch's linalg.norm is recorded as vector_norm/matrix_norm with ord "
               "as given; gradcli saves its float"),
    Difference("linalg.cross", ("_saved_self", "_saved_other"), _ONLY_NEEDED),
    Difference("vdot", ("_saved_self", "_saved_other"), _ONLY_NEEDED),
    Difference("linalg.svd", ("_saved_self",), _ONLY_NEEDED),
    Difference("svd", ("_saved_self",), _ONLY_NEEDED),
    Difference("cdist", ("_saved_x1", "_saved_x2"), "PyTorch saves the broadcast inputs (expanded views); gradcli saves "
               "the inputs as given"),
    # the conv and nn.functional families (gradcli/ops/nn/: conv.py, pooling.py, resampling.py, functional.py)
    Difference("avg_pool2d", ("_saved_stride",), "PyTorch saves stride as given (() when omitted); gradcli saves "
               "the stride it used (kernel_size by default)"),
    Difference("avg_pool3d", ("_saved_stride",), "PyTorch saves stride as given (() when omitted); gradcli saves "
               "the stride it used (kernel_size by default)"),
    Difference("constant_pad_nd", ("_saved_pad",), "PyTorch saves pad as unsigned 64-bit ints (a negative pad, a crop, "
               "reads 18446744073709551615); gradcli saves the signed pads"),
    Difference("pad", ("_saved_pad",), "PyTorch saves pad as unsigned 64-bit ints (a negative pad, a crop, reads "
               "18446744073709551615); gradcli saves the signed pads"),
    Difference("conv2d", ("_saved_padding", "_saved_output_padding"), "for padding='same' with an even kernel PyTorch "
               "pads the input first and saves the convolution's own padding; gradcli saves the symmetric part"),
    Difference("pairwise_distance", ("_saved_dim",), "PyTorch's NormBackward1 saves dim as a tuple ((1,)); gradcli's "
               "vector_norm saves the int"),
    Difference("mul", ("_saved_self", "_saved_other"), _ONLY_NEEDED, "nograd"),
    Difference("mul", ("_saved_self",), _ONLY_NEEDED + " (a Python number other never requires grad)", "scalar"),
    Difference("div", ("_saved_self", "_saved_other"), _ONLY_NEEDED),
    Difference("div", ("_saved_rounding_mode",), "PyTorch's DivBackward2 saves rounding_mode (also None when "
               "given explicitly); gradcli records div without it"),
    Difference("div", ("_saved_self", "_saved_other"), "div with rounding_mode has a zero derivative: gradcli's "
               "rule saves nothing, PyTorch's DivBackward2 saves self and other", "div-floor"),
    Difference("div", ("_saved_self", "_saved_other"), "div with rounding_mode has a zero derivative: gradcli's "
               "rule saves nothing, PyTorch's DivBackward2 saves self and other", "div-trunc"),
    Difference("remainder", ("_saved_self", "_saved_other"), _ONLY_NEEDED, "nograd"),
    Difference("fmod", ("_saved_self", "_saved_other"), _ONLY_NEEDED, "nograd"),
    Difference("fmod", ("_saved_self",), _CONSTANT_DTYPE, "int"),
    Difference("pow", ("_saved_self", "_saved_other"), "pow(2.0, t) saves the Python number self as 2.0 in PyTorch "
               "(PowBackward2); " + _CONSTANT_DTYPE),
    Difference("dot", ("_saved_self", "_saved_tensor"), _ONLY_NEEDED, "nograd"),
    Difference("mv", ("_saved_self", "_saved_vec"), _ONLY_NEEDED, "nograd"),
    Difference("bmm", ("_saved_self", "_saved_mat2"), _ONLY_NEEDED, "nograd"),
    Difference("maximum", ("_saved_other",), _CONSTANT_DTYPE),
    Difference("where", ("_saved_condition",), _CONSTANT_DTYPE),
    Difference("where", ("_saved_self", "_saved_other"), "where with two numbers is recorded as a multiplication "
               "of the mask; " + _ONLY_NEEDED, "scalars-both"),
    Difference("max", ("_saved_self", "_saved_other"), "this sample's graph ends in a multiplication by 2: "
               + _ONLY_NEEDED + "; " + _CONSTANT_DTYPE, "unpacked"),
    Difference("min", ("_saved_self", "_saved_other"), "this sample's graph ends in a multiplication by 2: "
               + _ONLY_NEEDED + "; " + _CONSTANT_DTYPE, "unpacked"),
    Difference("mm", ("_saved_self",), _ONLY_NEEDED, "nograd"),
    Difference("outer", ("_saved_self",), "PyTorch's self is the vector reshaped to a column (outer is "
               "self.reshape(-1, 1) * vec2)"),
    Difference("linear", ("_saved_mat1",), _ONLY_NEEDED, "nograd"),
    Difference("cat", ("_saved_dim",), "gradcli's cat normalizes dim before recording (PyTorch keeps -1)", "dim-1"),
    Difference("nextafter", ("_saved_other", "_saved_self"), _ONLY_NEEDED, "nograd-input"),
    Difference("special.zeta", ("_saved_self",), "PyTorch's SpecialZetaBackward1 saves the number x as a Scalar; "
               "gradcli's node keeps a number input among its parameters, not as a saved value", "number-x"),
    Difference("stack", ("_saved_dim",), "gradcli's stack normalizes dim before recording (PyTorch keeps -1)",
               "dim-1"),
    Difference("split", ("_saved_self",), "one piece bigger than the tensor is recorded as a multiplication by one; "
               + _ONLY_NEEDED, "bigger"),
    Difference("chunk", ("_saved_dim",), "gradcli's chunk normalizes dim before recording (PyTorch keeps -1)",
               "one-piece"),
    Difference("narrow", ("_saved_dim",), "gradcli's narrow normalizes dim before recording (PyTorch keeps -1)"),
    Difference("embedding", ("_saved_padding_idx",), "PyTorch saves padding_idx=-1 for None; gradcli keeps None"),
    Difference("clone", ("_saved_self", "_saved_other"), "a contiguous clone of a contiguous tensor is recorded as "
               "a multiplication by one; " + _ONLY_NEEDED + "; " + _CONSTANT_DTYPE, "noop"),
    Difference("__getitem__", ("_saved_end",), "gradcli saves the slice's end clipped to the size; PyTorch saves "
               "INT64_MAX for an open end"),
    Difference("__getitem__", ("_saved_start",), "gradcli saves a negative start normalized; PyTorch as given",
               "negative-slice"),
    Difference("tensordot", ("_saved_self_sym_sizes",), "gradcli folds a full contraction to (1, 1) matrices "
               "before its mm", "full"),
    Difference("index_fill", ("_saved_index",), "gradcli saves negative indices normalized; PyTorch as given",
               "negative"),
    Difference("index_fill", ("_saved_dim",), "gradcli's index_fill normalizes dim before recording", "3d"),
    Difference("take", ("_saved_index",), "gradcli saves negative indices normalized; PyTorch as given", "negative"),
    Difference("elu", ("_saved_scale", "_saved_input_scale"), _SCALAR_DEFAULTS),
    Difference("selu", ("_saved_input_scale",), _SCALAR_DEFAULTS),
    Difference("softplus", ("_saved_beta", "_saved_threshold"), _SCALAR_DEFAULTS),
    Difference("norm", ("_saved_ord",), _SCALAR_DEFAULTS),
    Difference("sum", ("_saved_dim", "_saved_keepdim"), _FULL_REDUCTION),
    Difference("sum_to_size", ("_saved_dim", "_saved_keepdim", "_saved_self", "_saved_other"),
               _FULL_REDUCTION + "; a same-size sum_to_size is recorded as a multiplication by one"),
    Difference("prod", ("_saved_dim", "_saved_keepdim"), _FULL_REDUCTION),
    Difference("mean", ("_saved_dim", "_saved_keepdim", "_saved_self_sym_numel", "_saved_self_sym_sizes"),
               _FULL_REDUCTION + "; PyTorch saves self.sym_numel() as well"),
    Difference("l1_loss", ("_saved_dim", "_saved_keepdim", "_saved_self_sym_numel"), _FULL_REDUCTION),
    *[Difference(loss, ("_saved_dim", "_saved_keepdim", "_saved_self_sym_numel"), _FULL_REDUCTION)
      for loss in ("margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss", "gaussian_nll_loss",
                   "multilabel_soft_margin_loss", "triplet_margin_loss", "poisson_nll_loss")],
    # elementwise math and losses of gradcli/ops/elementwise/special.py and gradcli/ops/nn/shrink_and_margins.py
    Difference("hypot", ("_saved_self", "_saved_other"), _ONLY_NEEDED, when="nograd"),
    Difference("copysign", ("_saved_self",), _ONLY_NEEDED, when="nograd"),
    Difference("true_divide", ("_saved_self",), _ONLY_NEEDED, when="nograd"),
    Difference("true_divide", ("_saved_self",), "a Python-number divisor: PyTorch records DivBackward1, which saves "
               "only other; gradcli's rule names self too", when="scalar"),
    Difference("prelu", ("_saved_weight",), "gradcli multiplies by the weight viewed to broadcast along dim 1 (a "
               "view node before the op); PyTorch's kernel saves the weight as given"),
    Difference("soft_margin_loss", ("_saved_target",), "PyTorch saves target as given (the sample's float32 "
               "constant); gradcli saves it converted to the input's dtype"),
    Difference("kl_div", ("_saved_dim", "_saved_keepdim", "_saved_self_sym_numel"), _FULL_REDUCTION),
    Difference("kl_div", ("_saved_self", "_saved_other"), "batchmean divides by the batch size, a Python int, and "
               "log_target's last node saves the target as a constant: " + _ONLY_NEEDED + "; " + _CONSTANT_DTYPE),
    Difference("var", ("_saved_correction",), "PyTorch saves correction=None when it is not given; gradcli's "
               "op holds the default 1"),
    Difference("std", ("_saved_correction",), "PyTorch saves correction=None when it is not given; gradcli's "
               "op holds the default 1"),
    # dropouts, rrelu, ctc_loss, embedding_bag, linear_cross_entropy (gradcli/ops/nn/feature_dropout.py, more_losses.py)
    *[Difference(name, ("_saved_self",), _ONLY_NEEDED + " (the input times a constant mask)")
      for name in ("feature_dropout", "dropout1d", "dropout2d", "dropout3d")],
    *[Difference(name, ("_saved_dim",), "an unbatched input's last node is squeeze(0): PyTorch's SqueezeBackward1 "
                 "saves dim; gradcli's rule reads the input's shape", when="unbatched") for name in ("dropout1d",
                                                                                                     "dropout3d")],
    Difference("rrelu", ("_saved_noise",), "out of training PyTorch saves its noise buffer unwritten (empty_like: "
               "whatever the memory held); gradcli's is zeros", when="eval"),
    Difference("ctc_loss", ("_saved_dim", "_saved_keepdim", "_saved_self_sym_numel"), _FULL_REDUCTION),
    Difference("embedding_bag", ("_saved_include_last_offset", "_saved_per_sample_weights", "_saved_result1",
                                 "_saved_result2", "_saved_result3", "_saved_sparse", "_saved_weight",
                                 "_saved_weight_sym_argsize_0"),
               "PyTorch's node saves the forward's extra outputs (offset2bag, bag_size, max_indices) and the weight's "
               "size; gradcli's rule recomputes the bags from the indices and offsets it saves, and takes a ones "
               "per_sample_weights when none is given"),
    Difference("linear_cross_entropy", ("_saved_self", "_saved_self_sym_sizes", "_saved_total_weight"),
               "the last node is cross_entropy's nll_loss or reduction: " + _ONLY_NEEDED),
]


def _tensor_key(t):
    if isinstance(t, G.Tensor):
        return t.data.dtype.name, tuple(t.shape), t.requires_grad, np.asarray(t.data, dtype=float)
    return (str(t.dtype).replace("torch.", ""), tuple(t.shape), t.requires_grad,
            t.detach().numpy().astype(float))


def _same(a, b, torch) -> bool:
    if isinstance(a, G.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, G.Tensor) and isinstance(b, torch.Tensor)):
            return False
        ka, kb = _tensor_key(a), _tensor_key(b)
        return ka[:3] == kb[:3] and np.allclose(ka[3], kb[3], rtol=1e-12, atol=0, equal_nan=True)
    return type(a) is type(b) and a == b


def saved_differences(case, torch, names: bool = True) -> set:
    """The ``_saved_*`` attributes of the case's output node that differ between gradcli and PyTorch (float64):
    present on one side only (unless ``names`` is False), or with another value."""
    arrays = make_arrays(case.args, case.id)
    gi = g_inputs(case.args, arrays, np.float64)
    ti = t_inputs(torch, case.args, arrays, np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out_t = case.fn(torch, *ti)
        out_g = case.fn(G, *gi)
    if isinstance(out_t, tuple):  # (values, indices)
        out_t, out_g = out_t[0], out_g[0]
    assert (out_t.grad_fn is None) == (out_g.grad_fn is None)
    if out_t.grad_fn is None:
        return set()
    ft, fg = out_t.grad_fn, out_g.grad_fn
    nt = {n for n in dir(ft) if n.startswith("_saved_")}
    ng = {n for n in dir(fg) if n.startswith("_saved_")}
    differ = nt ^ ng if names else set()
    for n in nt & ng:
        if not _same(getattr(fg, n), getattr(ft, n), torch):
            differ.add(n)
    return differ


def _allowed(case) -> set:
    out = set()
    for d in DIFFERENCES:
        if d.op == case.op and (d.when is None or d.when in case.id):
            out.update(d.attrs)
    return out


#: Ops whose rules use other formulas than PyTorch's (PyTorch saves the indices of a sort, the sizes of each input
#: of cat, the strides of mm's inputs): the sets of names differ, so only the values of the attributes both have
#: are compared.
_LU = ("PyTorch's det/slogdet/solve nodes save LAPACK's LU factors and pivots; gradcli's rule saves the input and "
       "its result (and differentiates through numpy.linalg)")
_RESULT = ("PyTorch's node saves the result under its own name (inverse, L); gradcli's rule saves it as result")
_CONV = ("PyTorch's ConvolutionBackward0 saves input, weight, bias_sym_sizes_opt, stride, padding, dilation, "
         "transposed, output_padding and groups; gradcli's rule saves the inputs as self and weight and normalized "
         "stride/padding")
_POOL = ("PyTorch's pooling nodes save self with kernel_size, stride, padding, dilation, ceil_mode (and indices as "
         "result1); gradcli's 1-d pools are its 2-d ones on an unsqueezed input (dim) and its rules save index "
         "maps or matrices")


NAMES_DIFFER = {
    "max": _INDICES, "min": _INDICES, "median": _INDICES, "kthvalue": _INDICES, "topk": _INDICES,
    "sort": _INDICES, "msort": _INDICES, "cummax": _INDICES, "cummin": _INDICES,
    "cumsum": _SYM_SIZES + " (PyTorch's cumsum_backward reads the gradient's sizes)",
    "mm": "PyTorch's mm_mat1_backward also saves sizes and strides (for its layout choice)",
    "matmul": "PyTorch's mm_mat1_backward also saves sizes and strides (for its layout choice)",
    "linear": "PyTorch's addmm/mm save sizes, strides, alpha and beta",
    "outer": "torch.outer is recorded as MulBackward0 of a reshaped self and other; gradcli's op saves vec2",
    "unsqueeze": "PyTorch's UnsqueezeBackward0 saves only dim; gradcli's rule reads the input's shape",
    "squeeze": "PyTorch's SqueezeBackward1 saves self_sym_sizes and dim; gradcli's rule reads the input's shape",
    "cat": "PyTorch saves the sizes of every input (tensors0_sym_sizes, ...); gradcli's rule reads them otherwise",
    "gradient": "the CatBackward0 that ends torch.gradient saves only dim in PyTorch (its pieces' sizes are not "
                "exposed there); gradcli's cat saves each piece's sizes (tensors0_sym_sizes, ...)",
    "stack": "PyTorch saves the sizes of every input (tensors0_sym_sizes, ...); gradcli's rule reads them otherwise",
    "split": "PyTorch's split_backward saves self_sym_sizes and split_size; gradcli's op keeps its pieces' sizes",
    "chunk": "PyTorch's split_backward saves self_sym_sizes and split_size; gradcli's op keeps its pieces' sizes",
    "narrow": "gradcli's narrow is a slice op whose dim is normalized",
    "index_add": "PyTorch saves source and source.dim() for the alpha-scaled formula",
    "index_copy": "PyTorch saves source and source.dim()",
    "index_fill": "gradcli saves the index normalized (negative indices made positive) and the dim normalized",
    "take": "PyTorch's take_backward saves self (for its zeros); gradcli's rule saves its shape; gradcli saves the "
            "index normalized",
    "take_along_dim": "PyTorch records take_along_dim as gather (self, sparse_grad); gradcli's rule saves self's shape",
    "gather": "PyTorch's gather_backward saves self and sparse_grad; gradcli's rule saves self's shape",
    "masked_select": "PyTorch's masked_select_backward saves self; gradcli's rule saves self's shape",
    "embedding": "PyTorch's embedding_backward saves the weight's first size, sparse and scale_grad_by_freq",
    "batch_norm": "PyTorch's native_batch_norm_backward saves input and the saved mean and invstd (result1, result2)",
    "normal": "PyTorch saves the mean's sizes for its zero gradient; gradcli's rule saves none",
    "diag_embed": "PyTorch's diag_embed backward saves dim1 and dim2 too",
    "diag": "PyTorch records diag as diag_embed, which saves dim1 and dim2 too",
    "tensordot": "gradcli's tensordot folds the inputs to matrices before its mm",
    "__getitem__": "gradcli's indexing ops save a normalized key; PyTorch's slice saves end as given (INT64_MAX)",
    "clone": "a contiguous clone of a contiguous tensor is recorded as a multiplication by one",
    "cross_entropy": "PyTorch's nll_loss saves self and total_weight; gradcli's rule saves self's shape",
    "nll_loss": "PyTorch's nll_loss saves self and total_weight; gradcli's rule saves self's shape",
    "mse_loss": _SYM_SIZES.replace("takes", "does not take") + " (PyTorch's mse_loss_backward reads self)",
    "smooth_l1_loss": "PyTorch's formula reads self; gradcli's rule saves its shape too",
    "huber_loss": "PyTorch's formula reads self; gradcli's rule saves its shape too",
    "binary_cross_entropy": "PyTorch's formula reads self; gradcli's rule saves its shape too",
    "binary_cross_entropy_with_logits": "PyTorch's formula reads self; gradcli's rule saves its shape too",
    # the conv and nn.functional families: their rules name what they save in
    # their own terms; PyTorch's names come from aten's convolution/pooling/norm signatures
    "conv1d": _CONV, "conv2d": _CONV, "conv_transpose1d": _CONV, "conv_transpose2d": _CONV,
    "max_pool1d": _POOL, "max_pool2d": _POOL, "avg_pool1d": _POOL, "avg_pool2d": _POOL,
    "adaptive_avg_pool1d": _POOL, "adaptive_avg_pool2d": _POOL,
    "conv3d": _CONV, "conv_transpose3d": _CONV, "max_pool3d": _POOL, "avg_pool3d": _POOL,
    "adaptive_avg_pool3d": _POOL, "adaptive_max_pool1d": _POOL, "adaptive_max_pool2d": _POOL,
    "adaptive_max_pool3d": _POOL, "fractional_max_pool2d": _POOL, "fractional_max_pool3d": _POOL,
    "max_unpool1d": _POOL, "max_unpool2d": _POOL, "max_unpool3d": _POOL, "lp_pool2d": _POOL,
    "pad": "gradcli's reflect/replicate/circular pads are one gather (saving its index maps); PyTorch's "
           "ReflectionPad/ReplicationPad nodes save self and padding, ConstantPadNd saves pad",
    "constant_pad_nd": "PyTorch's ConstantPadNdBackward0 saves pad; gradcli's rule reads the pads it cuts off "
                       "from the shapes",
    "interpolate": "gradcli's Upsample nodes save their interpolation matrices or index maps (mats, maps); "
                   "PyTorch's save output_size, input sizes, align_corners and scales",
    "unfold": "gradcli's Tensor.unfold/Im2Col rules save self's sizes under their own names (PyTorch: "
              "self_sym_sizes, self_sym_argsize_minus_1/2)",
    "fold": "PyTorch's Col2ImBackward0 saves output_size too",
    "layer_norm": "PyTorch's NativeLayerNormBackward0 saves input, normalized_shape, weight, bias and the mean and "
                  "rstd (result1, result2); gradcli's rule saves the normalized input and rstd",
    "group_norm": "PyTorch's NativeGroupNormBackward0 saves input, N, C, HxW, group and the mean and rstd (result1, "
                  "result2); gradcli's rule saves the normalized input and rstd",
    "logsigmoid": "PyTorch's LogSigmoidBackward0 saves a buffer of exp(-|x|) beside self; gradcli's rule recomputes it",
    # linear algebra: gradcli's rules save the decomposition they differentiate through
    # under their own names; PyTorch's nodes save LAPACK's factors (LU, pivots), the input as A, its results
    "det": _LU, "linalg.det": _LU, "slogdet": _LU, "linalg.slogdet": _LU, "linalg.solve": _LU,
    "logdet": "PyTorch's LogdetBackward0 is recorded on top of slogdet's and saves no condition",
    "inverse": _RESULT, "linalg.inv": _RESULT, "linalg.cholesky": _RESULT,
    "linalg.matrix_power": "PyTorch records matrix_power as a chain of mm (sizes, strides) or inverse nodes",
    "matrix_power": "PyTorch records matrix_power as a chain of mm (sizes, strides) or inverse nodes",
    "linalg.matmul": "PyTorch's mm_mat1_backward also saves sizes and strides (for its layout choice)",
    "linalg.matrix_exp": "PyTorch's LinalgMatrixExpBackward0 saves the input as self; gradcli's rule names it A",
    "matrix_exp": "PyTorch's LinalgMatrixExpBackward0 saves the input as self; gradcli's rule names it A",
    "linalg.pinv": "PyTorch records pinv through svd/mm nodes; gradcli's rule saves A and its result",
    "pinverse": "PyTorch records pinv through svd/mm nodes; gradcli's rule saves A and its result",
    "linalg.qr": "PyTorch's LinalgQrBackward0 saves Q, R and mode; gradcli's rule saves A too",
    "qr": "PyTorch's LinalgQrBackward0 saves Q, R and mode; gradcli's rule saves A too",
    "linalg.svd": "PyTorch's LinalgSvdBackward0 saves U, S, Vh and full_matrices; gradcli's rule saves A too",
    "svd": "PyTorch's LinalgSvdBackward0 saves U, S, Vh and full_matrices; gradcli's rule saves A too",
    "linalg.svdvals": "PyTorch's svdvals is recorded as LinalgSvdBackward0 (U, S, Vh); gradcli's rule saves A",
    "linalg.eigh": "PyTorch's LinalgEighBackward0 saves eigenvalues and eigenvectors; gradcli's rule saves A, UPLO",
    "linalg.eigvalsh": "PyTorch's eigvalsh is recorded as LinalgEighBackward0; gradcli's rule saves A, UPLO",
    "linalg.diagonal": "PyTorch saves dim1 and dim2 as given (negative dims as unsigned 64-bit ints); gradcli's "
                       "rule saves them normalized",
    "pairwise_distance": "PyTorch records pairwise_distance as norm(x1 - x2 + eps) (NormBackward1: p, dim); gradcli's "
                         "rule names them ord and dim of vector_norm",
}


# The functions added for PyTorch's documented examples: gradcli's rules save what their own formulas name, and
# PyTorch's derivatives.yaml entries (or the ops PyTorch decomposes them into) save other values or the same
# ones under other names; their gradients are compared with PyTorch's in tests/ops (values, not names).
_JOINS = "PyTorch records these as cat, which saves the sizes of every input (tensors0_sym_sizes, ...)"
_NOT_YET = ("gradcli's rule saves the values its formula names; PyTorch's node saves others (its own formula, or "
            "the node of the op it decomposes into); not matched yet")
NAMES_DIFFER.update({name: _JOINS for name in ("hstack", "vstack", "dstack", "column_stack")})
NAMES_DIFFER.update({name: _NOT_YET for name in (
    "addbmm", "addmm", "aminmax", "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "cartesian_prod",
    "combinations", "cumulative_trapezoid", "float_power", "frexp", "inner", "ldexp", "mode", "nanmean",
    "nanmedian", "nansum", "roll", "slice_scatter", "std_mean", "trapezoid", "var_mean")})

# LU, triangular solves, lstsq and the *_ex variants (gradcli/ops/linalg/factorizations.py, least_squares.py):
# gradcli's rules recompute the factorization from the input (an op with several outputs cannot save them) where
# PyTorch's nodes save LAPACK's factors and results
_FACTORS = ("PyTorch's node saves the factors/results (LU, pivots, L, U, P, solution, L of cholesky_ex, inverse); "
            "gradcli's rule saves the input and recomputes them")
NAMES_DIFFER.update({name: _FACTORS for name in (
    "linalg.lu_factor", "linalg.lu_factor_ex", "lu", "linalg.lu", "lu_unpack", "triangular_solve",
    "linalg.cholesky_ex", "linalg.inv_ex", "linalg.solve_ex", "linalg.lstsq", "linalg.tensorsolve",
    "linalg.tensorinv")})
DIFFERENCES += [Difference(op, ("_saved_pivots",), _CONSTANT_DTYPE) for op in ("linalg.lu_solve", "lu_solve")]

_OTHER_VALUE = ("gradcli's node saves this value in another form than PyTorch's (dims normalized or as a tuple, "
                "a number where PyTorch saves a tensor, or its own operand where PyTorch saves a cast copy)")
DIFFERENCES += [Difference(op, attrs, _OTHER_VALUE) for op, attrs in (
    ("aminmax", ("_saved_dim",)), ("atleast_1d", ("_saved_self",)), ("atleast_2d", ("_saved_self",)),
    ("atleast_3d", ("_saved_self",)), ("cumulative_trapezoid", ("_saved_dim",)), ("float_power", ("_saved_self",)),
    ("inner", ("_saved_self_sym_sizes",)), ("nanmean", ("_saved_other", "_saved_self")), ("nansum", ("_saved_dim",)),
    ("roll", ("_saved_dims", "_saved_shifts")), ("std_mean", ("_saved_dim",)), ("trapezoid", ("_saved_other",)),
    ("var_mean", ("_saved_dim",)))]


ROWS = [(op, c) for op, s, c in opinfo.table_cases() if op.differentiable and op.supports_autograd]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for op, c in ROWS])
def test_saved_attributes_against_torch(case, torch):
    differ = saved_differences(case, torch, names=case.op not in NAMES_DIFFER) - _allowed(case)
    assert not differ, f"{case.op}: _saved_ attributes differ from PyTorch's: {sorted(differ)}"


def test_differences_are_current(torch):
    """Each listed difference occurs in some sample: a fixed op must leave the list."""
    used = set()
    for op, case in ROWS:
        if not any(d.op == op.name for d in DIFFERENCES):
            continue
        differ = saved_differences(case, torch, names=case.op not in NAMES_DIFFER)
        for d in DIFFERENCES:
            if d.op == case.op and (d.when is None or d.when in case.id) and differ & set(d.attrs):
                used.add(d)
    assert [d for d in DIFFERENCES if d not in used] == []


# ============================================================================ semantics, against PyTorch
def _graph_ns(m):
    """``torch.autograd.graph``'s hooks in gradcli or torch."""
    if m is G:
        return saved_tensors_hooks, save_on_cpu
    return m.autograd.graph.saved_tensors_hooks, m.autograd.graph.save_on_cpu


def _facts(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    c = m.tensor([0.5, -1.0, 2.0])
    y = x.pow(2)
    z = x.exp()
    w = x.sin()
    v = w.cos()
    s = x.sum(0)
    p = x.permute(0)
    return [
        y.grad_fn._saved_self is x,  # a leaf input: the same object
        v.grad_fn._saved_self is w,  # a non-leaf input: PyTorch's is the same object too (see below)
        z.grad_fn._saved_result is z,  # an output: a new tensor whose grad_fn is the node
        z.grad_fn._saved_result.grad_fn is z.grad_fn,
        repr(z.grad_fn._saved_result).split(",")[0],
        y.grad_fn._saved_exponent, type(y.grad_fn._saved_exponent).__name__,
        (x * c).grad_fn._saved_other.tolist(),
        s.grad_fn._saved_dim, s.grad_fn._saved_keepdim, s.grad_fn._saved_self_sym_sizes,
        p.grad_fn._saved_dims,
        x.sum(-1).grad_fn._saved_dim,  # int64_t through PyTorch's unsigned conversion
        sorted(n for n in dir(y.grad_fn) if n.startswith("_saved_")),
        sorted(n for n in dir(z.grad_fn) if n.startswith("_saved_")),
    ]


def test_saved_values_are_pytorchs(torch):
    got, want = _facts(G), _facts(torch)
    assert got[0] is True and want[0] is True
    # gradcli keeps arrays, not the input Tensor objects: a saved non-leaf input is a new tensor of its values
    # with its producer as grad_fn (PyTorch returns the input object itself)
    assert want[1] is True and got[1] is False
    assert got[2:] == want[2:]


def test_reading_a_freed_saved_tensor_raises_pytorchs_error(torch):
    for m in (G, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x.pow(2)
        y.sum().backward()
        with pytest.raises(RuntimeError) as e:
            y.grad_fn._saved_self
        assert str(e.value).startswith("Trying to backward through the graph a second time (or directly access "
                                       "saved tensors after they have already been freed).")
        assert y.grad_fn._saved_exponent == 2  # non-tensor values stay
    gx = G.tensor([1.0], requires_grad=True)
    gy = gx.exp()
    gy.sum().backward(retain_graph=True)
    assert gy.grad_fn._saved_result.tolist() == gy.tolist()  # retained


def test_unknown_saved_name_raises_attribute_error(torch):
    for m in (G, torch):
        y = m.tensor([1.0], requires_grad=True).exp()
        with pytest.raises(AttributeError, match="'ExpBackward0' object has no attribute '_saved_self'"):
            y.grad_fn._saved_self


def test_metadata_is_a_dict_kept_with_the_node(torch):
    for m in (G, torch):
        y = m.tensor([1.0], requires_grad=True).exp()
        assert y.grad_fn.metadata == {}
        y.grad_fn.metadata["step"] = 3
        assert y.grad_fn.metadata == {"step": 3}


def _hooked_run(m):
    hooks, _ = _graph_ns(m)
    log = []
    a = m.tensor([4.0, 5.0], requires_grad=True)
    b = m.tensor([0.5, 2.0], requires_grad=True)

    def pack(t):
        log.append(("pack", tuple(t.shape), t is a or t is b))
        return ("box", t * 1)  # any object: what the node keeps

    def unpack(p):
        log.append(("unpack", p[0]))
        return p[1] * 2  # its values are what backward uses

    with hooks(pack, unpack):
        y = (a * b).sin().sum()
    log.append(("saved_self", y.grad_fn.next_functions[0][0]._saved_self.tolist()))
    y.backward(retain_graph=True)
    y.backward()
    return log, a.grad.tolist(), b.grad.tolist()


def test_saved_tensors_hooks_pack_at_save_and_unpack_at_use(torch):
    got, want = _hooked_run(G), _hooked_run(torch)
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)


def test_saved_tensors_hooks_nest_and_restore(torch):
    for m in (G, torch):
        hooks, _ = _graph_ns(m)
        x = m.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        with hooks(lambda t: seen.append("outer") or t, lambda t: t):
            with hooks(lambda t: seen.append("inner") or t, lambda t: t):
                x.sin()
            x.cos()
        x.tan()  # no hooks any more
        assert seen == ["inner", "outer"]


def test_unpack_hook_must_return_a_tensor(torch):
    for m in (G, torch):
        hooks, _ = _graph_ns(m)
        x = m.tensor([1.0, 2.0], requires_grad=True)
        with hooks(lambda t: 5, lambda p: "x"):
            y = x.sin()
        with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor but got "
                                            "result of type str"):
            y.sum().backward()


def test_save_on_cpu_gives_the_same_gradients(torch):
    grads = []
    for m in (G, torch):
        _, on_cpu = _graph_ns(m)
        x = m.tensor([0.5, 1.5, -2.0], requires_grad=True)
        with on_cpu():
            y = (x.exp() * x.sin()).sum()
        y.backward()
        grads.append(x.grad.tolist())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


def test_hooks_belong_to_the_run_context():
    x = G.tensor([1.0], requires_grad=True)
    seen = []
    with G.RunContext():
        with saved_tensors_hooks(lambda t: seen.append(1) or t, lambda t: t):
            with G.RunContext():
                x.sin()  # another context: not under the block's hooks
            x.cos()
    assert seen == [1]


def _raw_hooks_run(m):
    log = []
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x.pow(2)
    raw = y.grad_fn._raw_saved_self
    raw.register_hooks(lambda t: log.append(("pack", t.tolist(), t.requires_grad)) or t * 10,
                       lambda p: log.append(("unpack", p.tolist())) or p)
    s = y.grad_fn._saved_self
    log.append(("saved_self", s.tolist(), s.requires_grad))
    errors = []
    try:
        raw.register_hooks(lambda t: t, lambda t: t)
    except RuntimeError as e:
        errors.append(str(e))
    y.sum().backward()
    try:
        raw.register_hooks(lambda t: t, lambda t: t)
    except RuntimeError as e:
        errors.append(str(e))
    names = sorted(n for n in dir(y.grad_fn) if n.startswith("_raw_saved_"))
    return log, x.grad.tolist(), errors, names


def test_raw_saved_tensor_hooks_against_torch(torch):
    assert _raw_hooks_run(G) == _raw_hooks_run(torch)
    assert repr(G.tensor([1.0], requires_grad=True).exp().grad_fn._raw_saved_result).startswith(
        "<torch._C._autograd.SavedTensor object at 0x")
