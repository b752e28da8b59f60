"""What the backward function of every graph node sends to each input, as a formula, for ``gradcli grad --explain``.

Keyed by PyTorch's grad_fn class name (what a graph node is called: ``TanhBackward0``), since that is what a
node of the graph knows; several ops share one (``square`` and ``pow`` record ``PowBackward0``). Written as
PyTorch's ``tools/autograd/derivatives.yaml`` writes them, with its names: one ``name: formula`` per input the
node sends a gradient to, separated by ``;``, where ``input`` is the op's first tensor argument (derivatives.yaml's
``self``), ``other`` its second, the op's other arguments keep their PyTorch names (``alpha``, ``exponent``,
``weight``, ``target``, ``dim``, ``mask``, ``index``, ``source``), ``result`` is the op's output and ``grad`` the
gradient flowing into the node. So ``MulBackward0`` is ``input: grad * other; other: grad * input``: never ``x``
or ``y``, which would read as the program's own variables. Products are elementwise unless written with ``@``,
and a rule that only moves the gradient around says where it goes. The conventions at kinks are PyTorch's:
``relu'(0) = 0``, ``|x|'(0) = 0``, ties of max/min share the gradient.

A node whose name is not here falls back on the derivative note its op declares (:func:`formula`), with the
same names (:func:`pytorch_names`); the tests check that every backward function the op table records has an
entry.
"""

from __future__ import annotations

import re

#: grad_fn name → what the node sends to each of its inputs (see the module docstring for the notation).
FORMULAS: dict[str, str] = {
    # ---------------------------------------------------------------- torch.nn ops
    "SortBackward0": "input: the grad of each sorted value sent back to the position it came from",
    "EmbeddingBackward0": "weight: grad's rows added into the rows of weight that indices looked up (none into "
                          "padding_idx)",
    "NativeBatchNormBackward0": "input: weight * invstd * (grad - mean(grad) - xhat * mean(grad * xhat)) in "
                                "training (the batch's statistics), weight * invstd * grad in eval; weight: "
                                "sum(grad * xhat); bias: sum(grad)",
    # ---------------------------------------------------------------- arithmetic
    "AddBackward0": "input: grad; other: alpha * grad",
    "AddBackward1": "input: grad (other a number)",
    "SubBackward0": "input: grad; other: -alpha * grad",
    "SubBackward1": "input: grad (other a number)",
    "RsubBackward0": "input: -alpha * grad; other: grad (result = other - alpha * input)",
    "RsubBackward1": "input: -alpha * grad (other a number; result = other - alpha * input)",
    "MulBackward0": "input: grad * other; other: grad * input",
    "MulBackward1": "input: grad * other (other a number)",
    "DivBackward0": "input: grad / other; other: -grad * input / other^2",
    "DivBackward1": "input: grad / other (other a number)",
    "DivBackward2": "input: 0 with rounding_mode 'trunc' or 'floor', else grad / other; other: 0 or "
                    "-grad * input / other^2",
    "NegBackward0": "input: -grad",
    "PowBackward0": "input: grad * exponent * input^(exponent - 1) (exponent a number; 0 where exponent = 0)",
    "PowBackward1": "input: grad * exponent * input^(exponent - 1); exponent: grad * result * ln(input)",
    "PowBackward2": "exponent: grad * result * ln(input) (input a number)",
    "ReciprocalBackward0": "input: -grad * result^2",
    "RemainderBackward0": "input: grad (other a number)",
    "RemainderBackward1": "input: grad; other: -grad * floor(input / other)",
    "FmodBackward0": "input: grad (other a number)",
    "FmodBackward1": "input: grad; other: -grad * trunc(input / other)",
    "Atan2Backward0": "input: grad * other / (input^2 + other^2); other: -grad * input / (input^2 + other^2)",
    "MaximumBackward0": "input: grad where input > other, grad / 2 where input = other, else 0; other: the same "
                        "with input and other swapped",
    "MinimumBackward0": "input: grad where input < other, grad / 2 where input = other, else 0; other: the same "
                        "with input and other swapped",
    "XlogyBackward0": "input: grad * ln(other) (0 where input = 0); other: grad * input / other",
    "NotImplemented": "no derivative (floor_divide): backward raises, as in PyTorch",
    # ---------------------------------------------------------------- unary math
    "AbsBackward0": "input: grad * sign(input) (0 at input = 0)",
    "SignBackward0": "input: 0",
    "RoundBackward0": "input: 0",
    "FloorBackward0": "input: 0",
    "CeilBackward0": "input: 0",
    "TruncBackward0": "input: 0",
    "FracBackward0": "input: grad",
    "SqrtBackward0": "input: grad / (2 * result)",
    "RsqrtBackward0": "input: -grad * result^3 / 2",
    "ExpBackward0": "input: grad * result",
    "Exp2Backward0": "input: grad * result * ln(2)",
    "Expm1Backward0": "input: grad * (result + 1)",
    "LogBackward0": "input: grad / input",
    "Log2Backward0": "input: grad / (input * ln(2))",
    "Log10Backward0": "input: grad / (input * ln(10))",
    "Log1PBackward0": "input: grad / (1 + input)",
    "SinBackward0": "input: grad * cos(input)",
    "CosBackward0": "input: -grad * sin(input)",
    "TanBackward0": "input: grad * (1 + result^2)",
    "AsinBackward0": "input: grad / sqrt(1 - input^2)",
    "AcosBackward0": "input: -grad / sqrt(1 - input^2)",
    "AtanBackward0": "input: grad / (1 + input^2)",
    "SinhBackward0": "input: grad * cosh(input)",
    "CoshBackward0": "input: grad * sinh(input)",
    "TanhBackward0": "input: grad * (1 - result^2)",
    "ErfBackward0": "input: grad * 2 / sqrt(pi) * exp(-input^2)",
    "SigmoidBackward0": "input: grad * result * (1 - result)",
    "ClampBackward0": "input: grad where min <= input <= max, else 0; min: grad where result = min; max: grad "
                      "where result = max",
    "ClampBackward1": "input: grad where min <= input <= max (at the bounds too), else 0",
    # ---------------------------------------------------------------- activations
    "ReluBackward0": "input: grad where result > 0, else 0 (0 at input = 0)",
    "HardtanhBackward0": "input: grad where min_val < input < max_val, else 0 (0 at the bounds)",
    "LeakyReluBackward0": "input: grad where input > 0, else negative_slope * grad",
    "EluBackward0": "input: grad * scale where input > 0, else grad * scale * alpha * exp(input) (elu: scale = 1; "
                    "selu: PyTorch's scale and alpha)",
    "GeluBackward0": "input: grad * (Phi(input) + input * phi(input)) (Phi, phi: the normal CDF and density; the "
                     "tanh approximation's derivative with approximate='tanh')",
    "SiluBackward0": "input: grad * sigmoid(input) * (1 + input * (1 - sigmoid(input)))",
    "SoftplusBackward0": "input: grad * sigmoid(beta * input), grad where beta * input > threshold",
    "SoftmaxBackward0": "input: result * (grad - sum(grad * result, dim))",
    "LogSoftmaxBackward0": "input: grad - exp(result) * sum(grad, dim)",
    # ---------------------------------------------------------------- reductions
    "SumBackward0": "input: grad copied to every element",
    "SumBackward1": "input: grad broadcast over the reduced dims",
    "MeanBackward0": "input: grad / n to every element (n: input's number of elements)",
    "MeanBackward1": "input: grad / n broadcast over the reduced dims (n elements reduced)",
    "ProdBackward0": "input: grad * the product of the other elements (result / input where no element is 0)",
    "ProdBackward1": "input: grad * the product of the other elements of the slice along dim",
    "CumsumBackward0": "input: the reverse cumsum of grad along dim",
    "CumprodBackward0": "input: the reverse cumsum of grad * result along dim, divided by input (where no element "
                        "is 0; else the products of the others)",
    "CummaxBackward0": "input: each position's grad added at the index of its running maximum",
    "CumminBackward0": "input: each position's grad added at the index of its running minimum",
    "LogcumsumexpBackward0": "input: sum over j >= k of grad_j * exp(input_k - result_j), along dim",
    "AmaxBackward0": "input: grad / k at each of the k tied maxima of a slice, 0 elsewhere",
    "AminBackward0": "input: grad / k at each of the k tied minima of a slice, 0 elsewhere",
    "MaxBackward0": "input: grad at the index max chose in each slice, 0 elsewhere",
    "MaxBackward1": "input: grad / k at each of the k tied maxima, 0 elsewhere",
    "MinBackward0": "input: grad at the index min chose in each slice, 0 elsewhere",
    "MinBackward1": "input: grad / k at each of the k tied minima, 0 elsewhere",
    "ValueSelectingReductionBackward0": "input: grad at the selected index of each slice, 0 elsewhere",
    "LogsumexpBackward0": "input: grad * exp(input - result) (softmax(input))",
    "VarBackward0": "input: grad * 2 * (input - mean(input)) / (n - correction)",
    "StdBackward0": "input: grad * (input - mean(input)) / ((n - correction) * result) (0 where result is 0)",
    "LinalgVectorNormBackward0": "input: grad * sign(input) * |input|^(ord - 1) / result^(ord - 1) (grad * input / "
                                 "result for ord = 2; 0 where result is 0)",
    # ---------------------------------------------------------------- linear algebra
    "MmBackward0": "input: grad @ mat2^T; mat2: input^T @ grad",
    "BmmBackward0": "batch by batch, input: grad @ mat2^T; mat2: input^T @ grad",
    "MvBackward0": "input: outer(grad, vec); vec: input^T @ grad",
    "DotBackward0": "input: grad * tensor; tensor: grad * input",
    "AddmmBackward0": "input (the bias): grad summed to its shape; mat1: grad @ mat2^T; mat2: mat1^T @ grad",
    "DiagonalBackward0": "input: grad placed on the diagonal of zeros",
    "MaskedFillBackward0": "input: grad where mask is false, 0 where it is true",
    "MaskedFillBackward1": "input: grad where mask is false; value: sum of grad where it is true",
    "MaskedSelectBackward0": "input: grad put back where mask is true, 0 elsewhere",
    "MaskedScatterBackward0": "source: grad's elements where mask is true",
    "ScatterBackward0": "input: grad with zeros where src was written; src: grad gathered at index",
    "ScatterBackward1": "input: grad with zeros where value was written",
    "IndexFillBackward0": "input: grad with zeros in the filled slices",
    "IndexFillBackward1": "input: grad with zeros in the filled slices; value: sum of grad in them",
    "IndexCopyBackward0": "input: grad with zeros in the copied slices; source: grad's slices at index",
    "TakeBackward0": "input: grad added into zeros at the flat positions index",
    "PutBackward0": "source: grad taken at the flat positions index",
    "TopkBackward0": "input: the grad of each of the k values at the index it came from, 0 elsewhere",
    "KthvalueBackward0": "input: grad at the index of each slice's k-th smallest element, 0 elsewhere",
    "MedianBackward0": "input: grad / m at each of the m elements equal to the median, 0 elsewhere",
    "MedianBackward1": "input: grad at the index of each slice's median, 0 elsewhere",
    "TrilBackward0": "input: tril(grad, diagonal)",
    "TriuBackward0": "input: triu(grad, diagonal)",
    "TraceBackward0": "input: grad placed on the main diagonal of zeros",
    # ---------------------------------------------------------------- losses
    "MseLossBackward0": "input: grad * 2 * (input - target) / n; target: minus that (without the / n for "
                        "reduction='sum')",
    "HuberLossBackward0": "input: grad * (input - target) where |input - target| < delta, else grad * delta * "
                          "sign(input - target); target: minus that",
    "SmoothL1LossBackward0": "input: grad * (input - target) / beta where |input - target| < beta, else grad * "
                             "sign(input - target); target: minus that",
    "BinaryCrossEntropyBackward0": "input: grad * (input - target) / max(input * (1 - input), 1e-12); "
                                   "target: grad * (ln(1 - input) - ln(input))",
    "BinaryCrossEntropyWithLogitsBackward0": "input: grad * (sigmoid(input) - target) (times weight; with "
                                             "pos_weight p: sigmoid(input) * (p * target + 1 - target) - p * target)",
    "NllLossBackward0": "input: -grad * weight[target] at the target class, 0 elsewhere (divided by the total "
                        "weight for 'mean')",
    "NllLoss2DBackward0": "input: -grad * weight[target] at the target class of each position, 0 elsewhere "
                          "(divided by the total weight for 'mean')",
    # ---------------------------------------------------------------- shape: the gradient is moved, not scaled
    "ViewBackward0": "input: grad reshaped back to input's shape",
    "ReshapeAliasBackward0": "input: grad reshaped back to input's shape",
    "UnsafeViewBackward0": "input: grad reshaped back to input's shape",
    "AliasBackward0": "input: grad",
    "CloneBackward0": "input: grad",
    "ToCopyBackward0": "input: grad cast back to input's dtype",
    "CopyBackwards": "src: grad (cast and summed to its shape); input (overwritten): 0",
    "CopySlices": "input: grad with zeros at key (input[key] = value); value: grad[key] summed to value's shape",
    "ExpandBackward0": "input: grad summed over the expanded dims",
    "RepeatBackward0": "input: grad summed over the repeated copies",
    "PermuteBackward0": "input: grad permuted back by the inverse permutation",
    "TransposeBackward0": "input: grad transposed back (dim0, dim1)",
    "TBackward0": "input: grad transposed back",
    "SqueezeBackward0": "input: grad reshaped back to input's shape",
    "SqueezeBackward1": "input: grad unsqueezed at dim",
    "SqueezeBackward2": "input: grad unsqueezed at dims",
    "SqueezeBackward4": "input: grad unsqueezed at dim",
    "UnsqueezeBackward0": "input: grad squeezed at dim",
    "FlipBackward0": "input: grad flipped back along dims",
    "CatBackward0": "tensors: each gets its slice of grad along dim",
    "StackBackward0": "tensors: each gets grad's slice at its index along dim",
    "SplitBackward0": "input: the pieces' grads joined back along dim (zeros for unused pieces)",
    "SplitWithSizesBackward0": "input: the pieces' grads joined back along dim (zeros for unused pieces)",
    "UnbindBackward0": "input: the slices' grads stacked back along dim (zeros for unused ones)",
    "SelectBackward0": "input: grad placed at index of zeros (input[index])",
    "SliceBackward0": "input: grad placed at the slice of zeros (input[start:end:step])",
    "IndexBackward0": "input: grad added into zeros at the indexed positions (input[indices])",
    "IndexSelectBackward0": "input: grad's rows added into zeros at index, along dim",
    "GatherBackward0": "input: grad added into zeros at the gathered positions, along dim",
    "AsStridedBackward0": "input: grad added into zeros at the viewed positions",
    "IndexPutBackward0": "input: grad with zeros at indices; values: grad[indices]",
    "IndexAddBackward0": "input: grad; source: alpha * grad's rows at index",
    "ScatterAddBackward0": "input: grad; src: grad gathered at index",
    "WhereBackward0": "input: grad where condition, else 0; other: grad where not condition, else 0",
    "FillBackward2": "input: 0 (its values are overwritten)",
    "FillBackward3": "input: 0; value: sum(grad)",
    "ZeroBackward0": "input: 0 (its values are overwritten)",
    "NormalBackward0": "input: 0 (its values are overwritten by samples)",
    "UniformBackward0": "input: 0 (its values are overwritten by samples)",
    "RandomBackward1": "input: 0 (its values are overwritten by samples)",
    "NormalBackward1": "mean: 0 (a sample; PyTorch does not reparameterize)",
    "NormalBackward2": "std: 0 (a sample; PyTorch does not reparameterize)",
    "NormalBackward3": "mean: 0; std: 0 (a sample)",
    "BernoulliBackward0": "input: 0 (a sample)",
    "DiagEmbedBackward0": "input: the diagonal of grad",
    "DiagonalBackward0_copy": "input: grad on the diagonal of zeros",
    # ---------------------------------------------------------------- second derivatives (create_graph)
    "BinaryCrossEntropyBackwardBackward0": "the derivative of binary_cross_entropy's backward (second order)",
    "DiagonalBackwardBackward0": "grad_output: the diagonal of grad",
    "EluBackwardBackward0": "the derivative of elu's backward (second order)",
    "GeluBackwardBackward0": "the derivative of gelu's backward (second order)",
    "NllLossBackwardBackward0": "the derivative of nll_loss's backward (second order)",
    "SelectBackwardBackward0": "grad_output: grad's element at index",
    "SliceBackwardBackward0": "grad_output: grad's slice",
    "SoftplusBackwardBackward0": "the derivative of softplus's backward (second order)",
    "SoftmaxBackwardDataBackward0": "grad_output: the derivative of softmax's backward (softmax_double_backward, "
                                    "second order)",
    "LogSoftmaxBackwardDataBackward0": "grad_output: the derivative of log_softmax's backward (second order)",
    # ---------------------------------------------------------------- torch.nn.functional
    "LogSigmoidBackward0": "input: grad * sigmoid(-input)",
    "CeluBackward0": "input: grad where input > 0, else grad * exp(input / alpha)",
    "MishBackward0": "input: grad * (tanh(softplus(input)) + input * sigmoid(input) * (1 - tanh(softplus(input))^2))",
    "HardswishBackward0": "input: 0 where input < -3, grad * (input / 3 + 1/2) where -3 <= input <= 3, grad where "
                          "input > 3",
    "HardsigmoidBackward0": "input: grad / 6 where -3 < input < 3, else 0",
    "GluBackward0": "input (halves a, b along dim): a: grad * sigmoid(b); b: grad * a * sigmoid(b) * "
                    "(1 - sigmoid(b))",
    "NativeLayerNormBackward0": "input: rstd * (grad * weight - mean(grad * weight) - xhat * mean(grad * weight * "
                                "xhat)) over the normalized dims; weight: sum(grad * xhat); bias: sum(grad) "
                                "(xhat = (input - mean) * rstd)",
    "NativeGroupNormBackward0": "per (sample, group), input: rstd * (grad * weight - mean(grad * weight) - xhat * "
                                "mean(grad * weight * xhat)); weight: sum(grad * xhat), bias: sum(grad) per channel",
    "RoundBackward1": "input: 0",
    "Error": "no derivative: PyTorch's DelayedError (scatter_reduce's prod gradient where zeros meet); backward raises",
    "ScatterReduceBackward0": "sum: input: grad, src: grad gathered at index; mean: divided by the counts; prod: "
                              "the product of the others; amax/amin: grad shared among the elements equal to result",
    "NormBackward1": "input: grad * sign(input) * |input|^(p - 1) / result^(p - 1) over dim (0 where result is 0)",
    # ---------------------------------------------------------------- convolutions, pooling, padding
    "ConvolutionBackward0": "input: conv_transpose(grad, weight); weight: input's windows correlated with grad; "
                            "bias: grad summed over batch and positions",
    "ConvolutionBackwardBackward0": "the derivative of a convolution's weight gradient (bilinear: a convolution "
                                    "or a transposed one)",
    "MaxPool2DWithIndicesBackward0": "input: grad at the position of each window's maximum, 0 elsewhere",
    "AvgPool2DBackward0": "input: grad / divisor at each position of the window, summed over windows",
    "AdaptiveAvgPool2DBackward0": "input: grad / the size of each cell, at the cell's positions",
    "ConstantPadNdBackward0": "input: grad with the padding cut off",
    "ReflectionPad1DBackward0": "input: each padded element's grad added to its mirror source",
    "ReflectionPad2DBackward0": "input: each padded element's grad added to its mirror source",
    "ReplicationPad1DBackward0": "input: the padding's grad added to the edge it copies",
    "ReplicationPad2DBackward0": "input: the padding's grad added to the edge it copies",
    "Im2ColBackward0": "input: fold(grad): each column's grad added back into its block",
    "Col2ImBackward0": "input: unfold(grad): each column gets its block of grad",
    "UpsampleNearest1DBackward0": "input: each output's grad added to its source",
    "UpsampleNearest2DBackward0": "input: each output's grad added to its source",
    "UpsampleLinear1DBackward0": "input: grad spread by the interpolation weights",
    "UpsampleBilinear2DBackward0": "input: grad spread by the interpolation weights",
    "UpsampleNearestExact1DBackward0": "input: each output's grad added to its source",
    "UpsampleNearestExact2DBackward0": "input: each output's grad added to its source",
    "UnfoldBackward0": "input: each window's grad added back at the positions it covers",
    # ---------------------------------------------------------------- torch.linalg
    "LinalgDetBackward0": "A: grad * result * A^{-T} (the cofactor matrix; 0 for a singular A in a first "
                          "backward, the cofactors through the SVD with create_graph)",
    "LinalgSlogdetBackward0": "A: grad_logabsdet * A^{-T}; the sign has no gradient",
    "LinalgInvExBackward0": "A: -result^T @ grad @ result^T",
    "LinalgSolveExBackward0": "B: solve(A^T, grad); A: -solve(A^T, grad) @ result^T",
    "LinalgCholeskyExBackward0": "A: L^{-T} Phi(L^T @ grad) L^{-1} symmetrized (L = result; Phi: the lower "
                                 "triangle, its diagonal halved)",
    "LinalgQrBackward0": "A: (grad_Q + Q copyltu(M)) R^{-T}, M = R grad_R^T - grad_Q^T Q",
    "LinalgEighBackward0": "A: V (diag(grad_L) + skew(V^T grad_V) / (L_j - L_i)) V^T (inf/nan for repeated "
                           "eigenvalues when the eigenvectors are used)",
    "LinalgSvdBackward0": "A: U (diag(grad_S) + (skew(U^T grad_U) S + S skew(V^T grad_V)) / (S_j^2 - S_i^2)) V^T "
                          "+ the terms outside the span of U, V (svdvals: U diag(grad_S) V^T)",
    "LinalgPinvBackward0": "input: -P^T grad P^T + (I - input P) grad^T P P^T + P^T P grad^T (I - P input) "
                           "(P = result)",
    "LinalgCrossBackward0": "input: cross(other, grad); other: cross(grad, input)",
    "LinalgMatrixExpBackward0": "input: the upper-right block of matrix_exp([[input^T, grad], [0, input^T]])",
    "VdotBackward0": "input: grad * other; other: grad * input (real)",
    "CdistBackward0": "x1: grad * d ||x1_i - x2_j||_p / d x1_i summed over j (0 where the distance is 0); x2: the "
                      "negative, summed over i",
    "ExponentialBackward0": "input: 0 (its values are overwritten by samples)",
}

#: grad_fn name → the op it names in ``--check``'s kink messages, for the backward functions of ops that have
#: kinks: points where the op is continuous but its one-sided derivatives differ, so that a central difference
#: averages them while PyTorch's rule picks one subgradient (derivatives.yaml's conventions, above). A kink that
#: ``--check`` finds at a node not listed here is reported as "a point where the one-sided slopes differ".
KINKS: dict[str, str] = {
    "ReluBackward0": "relu", "AbsBackward0": "abs", "HardtanhBackward0": "hardtanh",
    "ClampBackward0": "clamp", "ClampBackward1": "clamp", "LeakyReluBackward0": "leaky_relu",
    "EluBackward0": "elu", "CeluBackward0": "celu", "HardswishBackward0": "hardswish",
    "HardsigmoidBackward0": "hardsigmoid", "MaximumBackward0": "maximum", "MinimumBackward0": "minimum",
    "MaxBackward0": "max", "MaxBackward1": "max", "MinBackward0": "min", "MinBackward1": "min",
    "AmaxBackward0": "amax", "AminBackward0": "amin", "CummaxBackward0": "cummax", "CumminBackward0": "cummin",
    "MedianBackward0": "median", "MedianBackward1": "median", "KthvalueBackward0": "kthvalue",
    "SortBackward0": "sort", "TopkBackward0": "topk", "ValueSelectingReductionBackward0": "max/min",
    "MaxPool2DWithIndicesBackward0": "max_pool", "HuberLossBackward0": "huber_loss",
    "SmoothL1LossBackward0": "smooth_l1_loss", "LinalgVectorNormBackward0": "norm", "NormBackward1": "norm",
    "CdistBackward0": "cdist", "StdBackward0": "std",
}


def formula(node) -> str:
    """The local derivative of a graph node (:data:`FORMULAS` by its grad_fn name), else its op's declared
    derivative note, else ``""``."""
    name = node.name()
    text = FORMULAS.get(name)
    if text is not None:
        return text
    note = getattr(getattr(node, "op", None), "note", "") or ""
    return pytorch_names(note)


#: The shorthand some op notes use (``d/dx = 2 * x``) → derivatives.yaml's names.
_RENAMES = {"x": "input", "y": "other", "out": "result", "g": "grad", "self": "input"}
_TOKEN = re.compile(r"\bd/d(x|y|self)\b|\b(x|y|out|g|self)\b")


def pytorch_names(text: str) -> str:
    """``text`` with the single-letter names of an op's note written as derivatives.yaml names them: ``x`` →
    ``input``, ``y`` → ``other`` (or ``result`` in a note of one input), ``out`` → ``result``, ``g`` → ``grad``
    (``d/dx`` → ``d/dinput``), so that they do not read as the program's own ``x`` and ``y``."""
    two_inputs = "d/dy" in text  # (else a note's y is its result, as softmax's "d/dx = y * (g - sum(g * y))")

    def rename(m):
        name = m.group(1) or m.group(2)
        if name == "y" and not two_inputs:
            return "result"
        return ("d/d" if m.group(1) else "") + _RENAMES[name]
    return _TOKEN.sub(rename, text)
