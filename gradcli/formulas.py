"""The local derivative of every backward function, as a formula, for ``gradcli grad --explain``.

Keyed by PyTorch's grad_fn class name (what a graph node is called: ``TanhBackward0``), since that is what a
node of the graph knows; several ops share one (``square`` and ``pow`` record ``PowBackward0``). Notation:
``x`` is the op's first input, ``y`` its second, ``out`` its result and ``g`` the gradient flowing into the
node; ``d/dx f = ...`` is what the chain rule multiplies ``g`` by (elementwise unless a product is written
with ``@``), and a rule that only moves the gradient around says where it goes. The formulas follow
PyTorch's ``tools/autograd/derivatives.yaml`` (the conventions at kinks included: ``relu'(0) = 0``,
``|x|'(0) = 0``, ties of max/min share the gradient).

A node whose name is not here falls back on the derivative note its op declares (:func:`formula`); the tests
check that every backward function the op table records has an entry.
"""

from __future__ import annotations

#: grad_fn name → the local derivative (see the module docstring for the notation).
FORMULAS: dict[str, str] = {
    # ---------------------------------------------------------------- torch.nn ops (issue 18)
    "SortBackward0": "d/dx sort(x) = the gradient of each sorted value sent back to where it came from",
    "EmbeddingBackward0": "d/dweight embedding(i, weight) = the gradient's rows added into the rows i looked up "
                          "(none into padding_idx)",
    "NativeBatchNormBackward0": "d/dx = w invstd (g - mean(g) - xhat mean(g xhat)) in training (the batch's "
                                "statistics), w invstd g in eval; d/dw = sum(g xhat); d/db = sum(g)",
    # ---------------------------------------------------------------- arithmetic
    "AddBackward0": "d/dx (x + alpha y) = 1; d/dy = alpha",
    "AddBackward1": "d/dx (x + c) = 1 (c a number)",
    "SubBackward0": "d/dx (x - alpha y) = 1; d/dy = -alpha",
    "SubBackward1": "d/dx (x - c) = 1 (c a number)",
    "RsubBackward0": "d/dx (y - alpha x) = -alpha; d/dy = 1",
    "RsubBackward1": "d/dx (c - alpha x) = -alpha (c a number)",
    "MulBackward0": "d/dx (x * y) = y; d/dy (x * y) = x",
    "MulBackward1": "d/dx (x * c) = c (c a number)",
    "DivBackward0": "d/dx (x / y) = 1 / y; d/dy (x / y) = -x / y^2",
    "DivBackward1": "d/dx (x / c) = 1 / c (c a number)",
    "DivBackward2": "d/dx (x / y rounded) = 0 where rounded ('trunc', 'floor'), else 1 / y; d/dy = 0 or -x / y^2",
    "NegBackward0": "d/dx (-x) = -1",
    "PowBackward0": "d/dx x^c = c * x^(c - 1) (c a number; 0 where c = 0)",
    "PowBackward1": "d/dx x^y = y * x^(y - 1); d/dy x^y = x^y * ln(x)",
    "PowBackward2": "d/dy c^y = c^y * ln(c) (c a number)",
    "ReciprocalBackward0": "d/dx (1 / x) = -1 / x^2 = -out^2",
    "RemainderBackward0": "d/dx remainder(x, c) = 1 (c a number)",
    "RemainderBackward1": "d/dx remainder(x, y) = 1; d/dy = -floor(x / y)",
    "FmodBackward0": "d/dx fmod(x, c) = 1 (c a number)",
    "FmodBackward1": "d/dx fmod(x, y) = 1; d/dy = -trunc(x / y)",
    "Atan2Backward0": "d/dx atan2(x, y) = y / (x^2 + y^2); d/dy = -x / (x^2 + y^2)",
    "MaximumBackward0": "d/dx maximum(x, y) = 1 where x > y, 1/2 where x = y, else 0; d/dy the same with x, y swapped",
    "MinimumBackward0": "d/dx minimum(x, y) = 1 where x < y, 1/2 where x = y, else 0; d/dy the same with x, y swapped",
    "XlogyBackward0": "d/dx (x * ln y) = ln y (0 where x = 0); d/dy = x / y",
    "NotImplemented": "no derivative (floor_divide): backward raises, as in PyTorch",
    # ---------------------------------------------------------------- unary math
    "AbsBackward0": "d/dx |x| = sign(x) (0 at x = 0)",
    "SignBackward0": "d/dx sign(x) = 0",
    "RoundBackward0": "d/dx round(x) = 0",
    "FloorBackward0": "d/dx floor(x) = 0",
    "CeilBackward0": "d/dx ceil(x) = 0",
    "TruncBackward0": "d/dx trunc(x) = 0",
    "FracBackward0": "d/dx (x - trunc(x)) = 1",
    "SqrtBackward0": "d/dx sqrt(x) = 1 / (2 sqrt(x)) = 1 / (2 out)",
    "RsqrtBackward0": "d/dx x^(-1/2) = -1/2 x^(-3/2) = -out^3 / 2",
    "ExpBackward0": "d/dx exp(x) = exp(x) = out",
    "Exp2Backward0": "d/dx 2^x = 2^x ln 2 = out * ln 2",
    "Expm1Backward0": "d/dx (exp(x) - 1) = exp(x) = out + 1",
    "LogBackward0": "d/dx ln(x) = 1 / x",
    "Log2Backward0": "d/dx log2(x) = 1 / (x ln 2)",
    "Log10Backward0": "d/dx log10(x) = 1 / (x ln 10)",
    "Log1PBackward0": "d/dx ln(1 + x) = 1 / (1 + x)",
    "SinBackward0": "d/dx sin(x) = cos(x)",
    "CosBackward0": "d/dx cos(x) = -sin(x)",
    "TanBackward0": "d/dx tan(x) = 1 + tan(x)^2 = 1 + out^2",
    "AsinBackward0": "d/dx asin(x) = 1 / sqrt(1 - x^2)",
    "AcosBackward0": "d/dx acos(x) = -1 / sqrt(1 - x^2)",
    "AtanBackward0": "d/dx atan(x) = 1 / (1 + x^2)",
    "SinhBackward0": "d/dx sinh(x) = cosh(x)",
    "CoshBackward0": "d/dx cosh(x) = sinh(x)",
    "TanhBackward0": "d/dx tanh(x) = 1 - tanh(x)^2 = 1 - out^2",
    "ErfBackward0": "d/dx erf(x) = 2 / sqrt(pi) * exp(-x^2)",
    "SigmoidBackward0": "d/dx sigmoid(x) = sigmoid(x) (1 - sigmoid(x)) = out (1 - out)",
    "ClampBackward0": "d/dx clamp(x, lo, hi) = 1 where lo <= x <= hi, else 0; d/dlo = 1 where out = lo; "
                      "d/dhi = 1 where out = hi",
    "ClampBackward1": "d/dx clamp(x, lo, hi) = 1 where lo <= x <= hi (1 at the bounds), else 0",
    # ---------------------------------------------------------------- activations
    "ReluBackward0": "d/dx relu(x) = 1 where x > 0, else 0 (0 at x = 0)",
    "HardtanhBackward0": "d/dx hardtanh(x) = 1 where min_val < x < max_val, else 0 (0 at the bounds)",
    "LeakyReluBackward0": "d/dx leaky_relu(x) = 1 where x > 0, else negative_slope",
    "EluBackward0": "d/dx elu(x) = scale where x > 0, else scale * alpha * exp(x) (elu: scale = 1; selu: "
                    "PyTorch's scale and alpha)",
    "GeluBackward0": "d/dx x Phi(x) = Phi(x) + x phi(x) (Phi, phi: the normal CDF and density; the tanh "
                     "approximation's derivative with approximate='tanh')",
    "SiluBackward0": "d/dx x sigmoid(x) = sigmoid(x) (1 + x (1 - sigmoid(x)))",
    "SoftplusBackward0": "d/dx ln(1 + exp(beta x)) / beta = sigmoid(beta x), 1 where beta x > threshold",
    "SoftmaxBackward0": "d softmax: dx = out * (g - sum(g * out)) along dim",
    "LogSoftmaxBackward0": "d log_softmax: dx = g - exp(out) * sum(g) along dim",
    # ---------------------------------------------------------------- reductions
    "SumBackward0": "d/dx sum(x) = 1: g copied to every element",
    "SumBackward1": "d/dx sum(x, dim) = 1: g broadcast over the reduced dims",
    "MeanBackward0": "d/dx mean(x) = 1 / n: g / n to every element",
    "MeanBackward1": "d/dx mean(x, dim) = 1 / n: g / n broadcast over the reduced dims (n elements reduced)",
    "ProdBackward0": "d/dx_i prod(x) = prod_{j != i} x_j (out / x_i where no element is 0)",
    "ProdBackward1": "d/dx_i prod(x, dim) = prod of the other elements of the slice",
    "CumsumBackward0": "d/dx_i cumsum(x)_j = 1 for j >= i: dx = reverse cumsum of g along dim",
    "CumprodBackward0": "d/dx_k cumprod(x)_j = prod_{i <= j, i != k} x_i for j >= k: dx = reverse cumsum of g * out / x "
                        "where no element is 0",
    "CummaxBackward0": "d/dx cummax(x, dim) = each position's gradient added at the index of its running maximum",
    "CumminBackward0": "d/dx cummin(x, dim) = each position's gradient added at the index of its running minimum",
    "LogcumsumexpBackward0": "d/dx_k logcumsumexp(x)_j = exp(x_k - out_j) for j >= k",
    "AmaxBackward0": "d/dx amax(x) = 1/k at each of the k tied maxima of a slice, 0 elsewhere",
    "AminBackward0": "d/dx amin(x) = 1/k at each of the k tied minima of a slice, 0 elsewhere",
    "MaxBackward0": "d/dx max(x, dim) = 1 at the index max chose in each slice, 0 elsewhere",
    "MaxBackward1": "d/dx max(x) = 1/k at each of the k tied maxima, 0 elsewhere",
    "MinBackward0": "d/dx min(x, dim) = 1 at the index min chose in each slice, 0 elsewhere",
    "MinBackward1": "d/dx min(x) = 1/k at each of the k tied minima, 0 elsewhere",
    "ValueSelectingReductionBackward0": "d/dx = 1 at the selected index of each slice, 0 elsewhere",
    "LogsumexpBackward0": "d/dx logsumexp(x) = exp(x - out) = softmax(x)",
    "VarBackward0": "d/dx var(x) = 2 (x - mean(x)) / (n - correction)",
    "StdBackward0": "d/dx std(x) = (x - mean(x)) / ((n - correction) std(x)) (0 where std is 0)",
    "LinalgVectorNormBackward0": "d/dx ||x||_p = sign(x) |x|^(p-1) / ||x||_p^(p-1) (x / ||x|| for p = 2; "
                                 "0 where the norm is 0)",
    # ---------------------------------------------------------------- linear algebra
    "MmBackward0": "d(x @ y): dx = g @ y^T; dy = x^T @ g",
    "BmmBackward0": "d(x @ y) batch by batch: dx = g @ y^T; dy = x^T @ g",
    "MvBackward0": "d(x @ v): dx = outer(g, v); dv = x^T @ g",
    "DotBackward0": "d/dx dot(x, y) = y; d/dy dot(x, y) = x",
    "AddmmBackward0": "d(b + x @ W^T): db = g summed over the batch; dx = g @ W; dW = (x^T @ g)^T",
    "DiagonalBackward0": "d diagonal(x): g placed on the diagonal of zeros",
    "MaskedFillBackward0": "d masked_fill(x, mask, c) / dx = 1 where the mask is false, 0 where it is true",
    "MaskedFillBackward1": "d masked_fill(x, mask, v): dx = g where the mask is false; dv = sum of g where it is true",
    "MaskedSelectBackward0": "d masked_select(x, mask): g put back where the mask is true, 0 elsewhere",
    "MaskedScatterBackward0": "d masked_scatter(zeros, mask, g) / d g = the gradient's masked elements",
    "ScatterBackward0": "d scatter(x, dim, i, src): dx = g with zeros where src was written; dsrc = g gathered at i",
    "ScatterBackward1": "d scatter(x, dim, i, c) / dx = g with zeros where c was written",
    "IndexFillBackward0": "d index_fill(x, dim, i, c) / dx = g with zeros in the filled slices",
    "IndexFillBackward1": "d index_fill(x, dim, i, v): dx = g with zeros in the filled slices; dv = sum of g in them",
    "IndexCopyBackward0": "d index_copy(x, dim, i, src): dx = g with zeros in the copied slices; dsrc = g's slices at i",
    "TakeBackward0": "d take(x, i): g added into zeros at the flat positions i",
    "PutBackward0": "d put(zeros, i, g, accumulate) / d g = the gradient taken at the flat positions i",
    "TopkBackward0": "d topk(x, k): each of the k values' gradient at the index it came from, 0 elsewhere",
    "KthvalueBackward0": "d kthvalue(x, k, dim) = 1 at the index of each slice's k-th smallest element, 0 elsewhere",
    "MedianBackward0": "d median(x) = 1/m at each of the m elements equal to the median, 0 elsewhere",
    "MedianBackward1": "d median(x, dim) = 1 at the index of each slice's median, 0 elsewhere",
    "TrilBackward0": "d tril(x, k): the lower triangle tril(g, k) of the gradient",
    "TriuBackward0": "d triu(x, k): the upper triangle triu(g, k) of the gradient",
    "TraceBackward0": "d trace(x) / d x = the identity: g placed on the main diagonal of zeros",
    # ---------------------------------------------------------------- losses
    "MseLossBackward0": "d/dx mean((x - y)^2) = 2 (x - y) / n; d/dy = -2 (x - y) / n (without the 1/n for "
                        "reduction='sum')",
    "HuberLossBackward0": "d/dx huber(x - y) = x - y where |x - y| < delta, else delta sign(x - y); "
                          "d/dy = minus that",
    "SmoothL1LossBackward0": "d/dx smooth_l1(x - y) = (x - y) / beta where |x - y| < beta, else sign(x - y); "
                             "d/dy = minus that",
    "BinaryCrossEntropyBackward0": "d/dx bce(x, y) = (x - y) / max(x (1 - x), 1e-12); "
                                   "d/dy = ln(1 - x) - ln(x)",
    "BinaryCrossEntropyWithLogitsBackward0": "d/dx bce(sigmoid(x), y) = sigmoid(x) - y (times weight; with "
                                             "pos_weight p: sigmoid(x) (p y + 1 - y) - p y)",
    "NllLossBackward0": "d/dx nll(x, target) = -weight[target] at the target class, 0 elsewhere (divided by "
                        "the total weight for 'mean')",
    "NllLoss2DBackward0": "d/dx nll(x, target) = -weight[target] at the target class of each position, 0 "
                          "elsewhere (divided by the total weight for 'mean')",
    "MaskedFillBackward0": "d/dx masked_fill(x, mask, c) = 1 where not mask, else 0",
    # ---------------------------------------------------------------- shape: the gradient is moved, not scaled
    "ViewBackward0": "d view(x): g reshaped back to x's shape",
    "ReshapeAliasBackward0": "d reshape(x): g reshaped back to x's shape",
    "UnsafeViewBackward0": "d reshape(x): g reshaped back to x's shape",
    "AliasBackward0": "d alias(x) = 1: g passes through",
    "CloneBackward0": "d/dx clone(x) = 1: g passes through",
    "ToCopyBackward0": "d/dx x.to(dtype) = 1: g cast back to x's dtype",
    "CopyBackwards": "d copy_: g goes to the source (cast and summed to its shape); the overwritten tensor "
                     "gets 0",
    "CopySlices": "d (x[key] = v): x gets g with zeros at key; v gets g[key] (summed to v's shape)",
    "ExpandBackward0": "d expand(x): g summed over the expanded dims",
    "RepeatBackward0": "d repeat(x): g summed over the repeated copies",
    "PermuteBackward0": "d permute(x): g permuted back by the inverse permutation",
    "TransposeBackward0": "d transpose(x, d0, d1): g transposed back",
    "TBackward0": "d x.t(): g transposed back",
    "SqueezeBackward0": "d squeeze(x): g reshaped back to x's shape",
    "SqueezeBackward1": "d squeeze(x, dim): g unsqueezed at dim",
    "SqueezeBackward2": "d squeeze(x, dims): g unsqueezed at dims",
    "SqueezeBackward4": "d squeeze(x, dim): g unsqueezed at dim",
    "UnsqueezeBackward0": "d unsqueeze(x, dim): g squeezed at dim",
    "FlipBackward0": "d flip(x, dims): g flipped back along dims",
    "CatBackward0": "d cat(xs, dim): each input gets its slice of g along dim",
    "StackBackward0": "d stack(xs, dim): each input gets g's slice at its index along dim",
    "SplitBackward0": "d split(x): the pieces' gradients joined back along dim (zeros for unused pieces)",
    "SplitWithSizesBackward0": "d split(x, sizes): the pieces' gradients joined back along dim (zeros for "
                               "unused pieces)",
    "UnbindBackward0": "d unbind(x, dim): the slices' gradients stacked back along dim (zeros for unused ones)",
    "SelectBackward0": "d x[i] (select): g placed at index i of zeros",
    "SliceBackward0": "d x[a:b:c] (slice): g placed at the slice of zeros",
    "IndexBackward0": "d x[index] (advanced indexing): g added into zeros at the indexed positions",
    "IndexSelectBackward0": "d index_select(x, dim, index): g's rows added into zeros at index",
    "GatherBackward0": "d gather(x, dim, index): g added into zeros at the gathered positions",
    "AsStridedBackward0": "d as_strided(x): g added into zeros at the viewed positions",
    "IndexPutBackward0": "d index_put(x, index, v): x gets g with zeros at index; v gets g[index]",
    "IndexAddBackward0": "d index_add(x, dim, index, s): x gets g; s gets g's rows at index",
    "ScatterAddBackward0": "d scatter_add(x, dim, index, s): x gets g; s gets g gathered at index",
    "WhereBackward0": "d where(cond, x, y): x gets g where cond, y gets g elsewhere",
    "FillBackward2": "d fill_(x, c) = 0: the old values are overwritten",
    "FillBackward3": "d fill_(x, v): x gets 0; v gets sum(g)",
    "ZeroBackward0": "d zero_(x) = 0: the old values are overwritten",
    "NormalBackward0": "d normal_(x) = 0: the old values are overwritten by samples",
    "UniformBackward0": "d uniform_(x) = 0: the old values are overwritten by samples",
    "RandomBackward1": "d random_(x) = 0: the old values are overwritten by samples",
    "NormalBackward1": "d normal(mean, std) / d mean = 0 (a sample; PyTorch does not reparameterize)",
    "NormalBackward2": "d normal(mean, std) / d std = 0 (a sample; PyTorch does not reparameterize)",
    "NormalBackward3": "d normal(mean, std) / d mean = d / d std = 0 (a sample)",
    "BernoulliBackward0": "d bernoulli(p) / d p = 0 (a sample)",
    "DiagEmbedBackward0": "d diag_embed(v) / d v = the diagonal of the gradient",
    "DiagonalBackward0_copy": "d diag(A) / d A = the gradient on the diagonal of zeros",
    # ---------------------------------------------------------------- second derivatives (create_graph)
    "BinaryCrossEntropyBackwardBackward0": "the derivative of binary_cross_entropy's backward (second order)",
    "DiagonalBackwardBackward0": "the derivative of diagonal's backward: g's diagonal",
    "EluBackwardBackward0": "the derivative of elu's backward (second order)",
    "GeluBackwardBackward0": "the derivative of gelu's backward (second order)",
    "NllLossBackwardBackward0": "the derivative of nll_loss's backward (second order)",
    "SelectBackwardBackward0": "the derivative of select's backward: g's element at the index",
    "SliceBackwardBackward0": "the derivative of slice's backward: g's slice",
    "SoftplusBackwardBackward0": "the derivative of softplus's backward (second order)",
    "SoftmaxBackwardDataBackward0": "the derivative of softmax's backward (softmax_double_backward, second order)",
    "LogSoftmaxBackwardDataBackward0": "the derivative of log_softmax's backward (second order)",
    # ---------------------------------------------------------------- branch nnfunc: torch.nn.functional (issue 18)
    "LogSigmoidBackward0": "d/dx log(sigmoid(x)) = sigmoid(-x) = 1 - sigmoid(x)",
    "CeluBackward0": "d/dx celu(x) = 1 for x > 0, else exp(x / alpha)",
    "MishBackward0": "d/dx x tanh(softplus(x)) = tanh(softplus(x)) + x sigmoid(x) (1 - tanh(softplus(x))^2)",
    "HardswishBackward0": "d/dx hardswish(x) = 0 for x < -3, x / 3 + 1/2 for -3 <= x <= 3, 1 for x > 3",
    "HardsigmoidBackward0": "d/dx hardsigmoid(x) = 1/6 for -3 < x < 3, else 0",
    "GluBackward0": "d glu(x) with a, b the halves of x: d/da = sigmoid(b); d/db = a sigmoid(b) (1 - sigmoid(b))",
    "NativeLayerNormBackward0": "d/dx = rstd (g w - mean(g w) - xhat mean(g w xhat)) over the normalized dims; "
                                "d/dw = sum(g xhat); d/db = sum(g) (xhat = (x - mean) rstd)",
    "NativeGroupNormBackward0": "per (sample, group): d/dx = rstd (g w - mean(g w) - xhat mean(g w xhat)); "
                                "d/dw = sum(g xhat), d/db = sum(g) per channel",
    "RoundBackward1": "d/dx round(x, decimals) = 0",
    "Error": "no derivative: PyTorch's DelayedError (scatter_reduce's prod gradient where zeros meet); backward raises",
    "ScatterReduceBackward0": "d scatter_reduce(x, dim, i, src, reduce): sum: dx = g, dsrc = g gathered at i; mean: "
                              "divided by the counts; prod: the product of the others; amax/amin: g shared among "
                              "the elements equal to the result",
    "NormBackward1": "d/dx ||x||_p over dim = sign(x) |x|^(p-1) / ||x||_p^(p-1) (0 where the norm is 0)",
    # ---------------------------------------------------------------- issue 18, branch conv: gradcli/ops/conv.py
    "ConvolutionBackward0": "d conv(x, w) + b: dx = conv_transpose(g, w); dw = x's windows correlated with g; "
                            "db = g summed over batch and positions",
    "ConvolutionBackwardBackward0": "the derivative of a convolution's weight gradient (bilinear: a convolution "
                                    "or a transposed one)",
    "MaxPool2DWithIndicesBackward0": "d max_pool2d(x) = 1 at the position of each window's maximum, 0 elsewhere",
    "AvgPool2DBackward0": "d avg_pool2d(x) = 1/divisor at each position of the window, summed over windows",
    "AdaptiveAvgPool2DBackward0": "d adaptive_avg_pool2d(x) = 1/size of each cell at the cell's positions",
    "ConstantPadNdBackward0": "d pad(x, constant) = the gradient with the padding cut off",
    "ReflectionPad1DBackward0": "d pad(x, reflect) = each padded element's gradient added to its mirror source",
    "ReflectionPad2DBackward0": "d pad(x, reflect) = each padded element's gradient added to its mirror source",
    "ReplicationPad1DBackward0": "d pad(x, replicate) = the padding's gradient added to the edge it copies",
    "ReplicationPad2DBackward0": "d pad(x, replicate) = the padding's gradient added to the edge it copies",
    "Im2ColBackward0": "d unfold(x) = fold(g): each column's gradient added back into its block",
    "Col2ImBackward0": "d fold(x) = unfold(g): each column gets its block of the gradient",
    "UpsampleNearest1DBackward0": "d interpolate(x, nearest) = each output's gradient added to its source",
    "UpsampleNearest2DBackward0": "d interpolate(x, nearest) = each output's gradient added to its source",
    "UpsampleLinear1DBackward0": "d interpolate(x, linear) = the gradient spread by the interpolation weights",
    "UpsampleBilinear2DBackward0": "d interpolate(x, bilinear) = the gradient spread by the interpolation weights",
    "UpsampleNearestExact1DBackward0": "d interpolate(x, nearest-exact) = each output's gradient added to its source",
    "UpsampleNearestExact2DBackward0": "d interpolate(x, nearest-exact) = each output's gradient added to its source",
    "UnfoldBackward0": "d x.unfold(dim, size, step) = each window's gradient added back at the positions it covers",
    # ---------------------------------------------------------------- torch.linalg (issue 18, branch linalg)
    "LinalgDetBackward0": "d/dA det(A) = det(A) A^{-T} (the cofactor matrix; 0 for a singular A in a first "
                          "backward, the cofactors through the SVD with create_graph)",
    "LinalgSlogdetBackward0": "d/dA logabsdet(A) = A^{-T}; the sign has no gradient",
    "LinalgInvExBackward0": "d inv(A): dA = -A^{-T} @ g @ A^{-T}",
    "LinalgSolveExBackward0": "d solve(A, B): dB = solve(A^T, g); dA = -dB @ X^T",
    "LinalgCholeskyExBackward0": "d cholesky(A): dA = L^{-T} Phi(L^T @ gL) L^{-1} symmetrized (Phi: the lower "
                                 "triangle, its diagonal halved)",
    "LinalgQrBackward0": "d qr(A): dA = (gQ + Q copyltu(M)) R^{-T}, M = R gR^T - gQ^T Q",
    "LinalgEighBackward0": "d eigh(A): dA = V (diag(gL) + skew(V^T gV) / (L_j - L_i)) V^T (inf/nan for repeated "
                           "eigenvalues when the eigenvectors are used)",
    "LinalgSvdBackward0": "d svd(A): dA = U (diag(gS) + (skew(U^T gU) S + S skew(V^T gV)) / (S_j^2 - S_i^2)) V^T "
                          "+ the terms outside the span of U, V (svdvals: U diag(gS) V^T)",
    "LinalgPinvBackward0": "d pinv(A) = P: dA = -P^T g P^T + (I - A P) g^T P P^T + P^T P g^T (I - P A)",
    "LinalgCrossBackward0": "d cross(x, y): dx = cross(y, g); dy = cross(g, x)",
    "LinalgMatrixExpBackward0": "d matrix_exp(A): dA = the upper-right block of exp([[A^T, g], [0, A^T]])",
    "VdotBackward0": "d/dx vdot(x, y) = y; d/dy vdot(x, y) = x (real)",
    "CdistBackward0": "d cdist(x1, x2)_ij / d x1_i = d ||x1_i - x2_j||_p (0 where the distance is 0); d/dx2_j the "
                      "negative",
    # branch multi
    "ExponentialBackward0": "d exponential_(x) = 0: the old values are overwritten by samples",
}


def formula(node) -> str:
    """The local derivative of a graph node (:data:`FORMULAS` by its grad_fn name), else its op's declared
    derivative note, else ``""``."""
    name = node.name()
    text = FORMULAS.get(name)
    if text is not None:
        return text
    note = getattr(getattr(node, "op", None), "note", "") or ""
    return note
