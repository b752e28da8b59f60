"""torch.nn.functional.embedding: the rows of a weight matrix at integer indices (EmbeddingBackward0), as PyTorch
2.13 computes it; the padding row gets no gradient. The derivative rule is written with ops of the table, so
that it can be differentiated again.
"""

from __future__ import annotations

import numpy as np

from ...engine import limits
from ...engine.tensor import Tensor, to_tensor
from ..core.declare import composite, op
from ..elementwise.arithmetic import mul
from ..shape.indexing import _index_select_backward
from ..shape.scatter import _index_data
from ..shape.views import reshape


# -------------------------------------------------------------------------------------------- embedding
@op("_embedding", grad_fn="EmbeddingBackward0", promote=None,
    note="d/dweight = the gradient's rows added into zeros at the looked-up rows (not the padding row)",
    formula="weight: grad's rows added into the rows of weight that indices looked up (none into padding_idx)",
    jvp="linear")  # derivatives.yaml: embedding(weight_t, indices, ...)
def _embedding(weight, indices, padding_idx):
    """The rows ``weight[indices]`` (``indices`` an int array, checked)."""
    n = weight.shape[0]
    if indices.size and (indices.min() < -n or indices.max() >= n):
        raise IndexError("index out of range in self")
    limits.check_numel(indices.shape + weight.shape[1:], "embedding()")
    return np.ascontiguousarray(np.take(weight, indices, axis=0))


@_embedding.defvjp
def _(grad, weight_shape, indices, padding_idx):
    flat = indices.reshape(-1) % weight_shape[0]
    g = reshape(grad, (flat.size,) + tuple(weight_shape[1:]))
    if padding_idx is not None:
        keep = (flat != padding_idx).astype(np.float64 if g.dtype == np.float64 else np.float32)
        keep = keep.reshape((-1,) + (1,) * (len(weight_shape) - 1))
        g = mul(g, Tensor(keep)) if isinstance(g, Tensor) else g * keep.astype(g.dtype)
    return _index_select_backward(g, tuple(weight_shape), 0, flat)


@composite("embedding", grad_fn="EmbeddingBackward0", note=_embedding.note)
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """The rows of ``weight`` at the integer ``input``'s indices (shape ``input.shape + weight.shape[1:]``);
    ``padding_idx``'s row gets no gradient. Matches torch.nn.functional.embedding (grad_fn EmbeddingBackward0).

    Raises:
        IndexError: for an index out of range; RuntimeError for a non-integer input.
        NotImplementedError: for max_norm, scale_grad_by_freq or sparse, which gradcli does not have.
    """
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("gradcli's embedding supports neither max_norm, scale_grad_by_freq nor sparse")
    weight = to_tensor(weight)
    idx = _index_data("embedding", input)
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    return _embedding(weight, idx, padding_idx)
