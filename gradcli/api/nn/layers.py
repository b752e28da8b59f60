"""The built-in modules of ``torch.nn`` that gradcli has: layers, activations, containers and losses, each as
PyTorch 2.13's class (the same constructor arguments and defaults, parameter initialisation drawn in the same
order from the PyTorch-exact generator, ``forward`` through the op table, ``extra_repr`` as printed by
``print(model)``). A program's class may derive from any of them (``class QuantLinear(nn.Linear)``)."""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

from ...engine import autograd, dtypes, limits
from ...ops import REGISTRY as _OPS
from ...ops.nn.loss import _legacy_reduction
from ...ops.shape import inplace as _inplace_ops
from ...engine.tensor import Tensor
from . import init
from .module import Module, _addindent, core_of
from .parameter import Parameter


def _empty(*shape) -> Tensor:
    limits.check_items(int(np.prod(shape)) if shape else 1, "a parameter")
    return Tensor(np.zeros(shape, dtype=dtypes.get_default_dtype().np))


def _op(name):
    return _OPS[name]


# ---------------------------------------------------------------------------------------------- layers
class Identity(Module):
    """``nn.Identity``: returns its input."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``nn.Linear(in_features, out_features, bias=True)``: ``y = x W^T + b``. ``weight`` is initialised by
    kaiming_uniform_(a=sqrt(5)), then ``bias`` by U(-1/sqrt(in_features), 1/sqrt(in_features)), as PyTorch's
    ``reset_parameters`` draws them."""

    program_attributes = Module.program_attributes + ("in_features", "out_features", "reset_parameters")

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty(out_features, in_features))
        if bias:
            self.bias = Parameter(_empty(out_features))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw ``weight`` and ``bias`` again (torch.nn.Linear.reset_parameters)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return _op("linear")(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """``nn.Embedding(num_embeddings, embedding_dim, padding_idx=None)``: rows of ``weight`` (N(0, 1) draws, the
    ``padding_idx`` row zero) looked up by index (F.embedding, grad_fn EmbeddingBackward0)."""

    program_attributes = Module.program_attributes + ("num_embeddings", "embedding_dim", "padding_idx",
                                                      "reset_parameters")
    static_attributes = ("from_pretrained",)

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
                padding_idx = num_embeddings + padding_idx
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise NotImplementedError("gradcli's nn.Embedding supports neither max_norm, scale_grad_by_freq nor "
                                      "sparse")
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(_empty(num_embeddings, embedding_dim), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """``nn.Embedding.from_pretrained``: an Embedding whose weight is a Parameter sharing the 2-d
        ``embeddings``' memory (its padding row is kept as given), frozen (no grad) unless ``freeze=False``.

        Raises:
            AssertionError: ``embeddings`` is not 2-dimensional (PyTorch's message).
        """
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)

    def reset_parameters(self) -> None:
        """Draw ``weight`` from N(0, 1) again (the padding row zero)."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with autograd.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return _op("embedding")(input, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s


class BatchNorm1d(Module):
    """``nn.BatchNorm1d(num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True)``: batch
    normalization over a (N, C) or (N, C, L) input; in training mode the batch statistics (and the running
    mean and unbiased variance are updated with ``momentum``), in eval mode the running ones."""

    program_attributes = Module.program_attributes + (
        "num_features", "eps", "momentum", "affine", "track_running_stats", "reset_running_stats",
        "reset_parameters")

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(_empty(num_features))
            self.bias = Parameter(_empty(num_features))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _empty(num_features))
            self.register_buffer("running_var", Tensor(np.ones(num_features, dtype=dtypes.get_default_dtype().np)))
            self.register_buffer("num_batches_tracked", Tensor(np.array(0, dtype=np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batch tracked."""
        if self.track_running_stats:
            self.running_mean.data[...] = 0
            self.running_var.data[...] = 1
            self.num_batches_tracked.data[...] = 0

    def reset_parameters(self) -> None:
        """Reset the running statistics, weight 1, bias 0."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def _check_input_dim(self, input) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.data[...] += 1
            _inplace_ops.bump(self.num_batches_tracked.data)
            factor = 1.0 / float(self.num_batches_tracked.data) if self.momentum is None else self.momentum
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return _op("batch_norm")(input, self.running_mean if keep else None, self.running_var if keep else None,
                                 self.weight, self.bias, bn_training, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class Dropout(Module):
    """``nn.Dropout(p=0.5)``: F.dropout in training mode, the identity in eval mode."""

    program_attributes = Module.program_attributes + ("p", "inplace")

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return _op("dropout")(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Flatten(Module):
    """``nn.Flatten(start_dim=1, end_dim=-1)``: ``input.flatten(start_dim, end_dim)``."""

    program_attributes = Module.program_attributes + ("start_dim", "end_dim")

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return _op("flatten")(input, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


# ------------------------------------------------------------------------------------------ activations
def _activation(name: str, op: str, doc: str, pass_inplace: bool = False):
    """An activation module class with PyTorch's ``inplace=False`` argument, computing the op ``op``; with
    ``pass_inplace`` the op receives ``inplace=`` too (F.mish, F.hardswish, F.hardsigmoid honour it)."""
    class Activation(Module):
        __doc__ = doc
        program_attributes = Module.program_attributes + ("inplace",)

        def __init__(self, inplace=False):
            super().__init__()
            self.inplace = inplace

        def forward(self, input):
            return _op(op)(input, inplace=self.inplace) if pass_inplace else _op(op)(input)

        def extra_repr(self) -> str:
            return "inplace=True" if self.inplace else ""

    Activation.__name__ = Activation.__qualname__ = name
    return Activation


ReLU = _activation("ReLU", "relu", "``nn.ReLU()``: max(x, 0).")
ReLU6 = _activation("ReLU6", "relu6", "``nn.ReLU6()``: min(max(x, 0), 6).")
SELU = _activation("SELU", "selu", "``nn.SELU()``.")
SiLU = _activation("SiLU", "silu", "``nn.SiLU()``: x * sigmoid(x).")


class Tanh(Module):
    """``nn.Tanh()``."""

    def forward(self, input):
        return _op("tanh")(input)


class Sigmoid(Module):
    """``nn.Sigmoid()``."""

    def forward(self, input):
        return _op("sigmoid")(input)


class GELU(Module):
    """``nn.GELU(approximate='none')``."""

    program_attributes = Module.program_attributes + ("approximate",)

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return _op("gelu")(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class LeakyReLU(Module):
    """``nn.LeakyReLU(negative_slope=0.01)``."""

    program_attributes = Module.program_attributes + ("negative_slope", "inplace")

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return _op("leaky_relu")(input, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """``nn.ELU(alpha=1.0)``."""

    program_attributes = Module.program_attributes + ("alpha", "inplace")

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return _op("elu")(input, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    """``nn.Softplus(beta=1.0, threshold=20.0)``."""

    program_attributes = Module.program_attributes + ("beta", "threshold")

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return _op("softplus")(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


def _dim_module(name: str, op: str):
    class DimModule(Module):
        __doc__ = f"``nn.{name}(dim=None)``: F.{op} along ``dim``."
        program_attributes = Module.program_attributes + ("dim",)

        def __init__(self, dim=None):
            super().__init__()
            self.dim = dim

        def forward(self, input):
            return _op(op)(input, self.dim, _stacklevel=5)

        def extra_repr(self) -> str:
            return f"dim={self.dim}"

    DimModule.__name__ = DimModule.__qualname__ = name
    return DimModule


Softmax = _dim_module("Softmax", "softmax")
LogSoftmax = _dim_module("LogSoftmax", "log_softmax")


# ------------------------------------------------------------------------------------------- containers
class Sequential(Module):
    """``nn.Sequential(*modules)`` (or of an OrderedDict): calls its modules in order; indexing gives a
    module (a slice a new Sequential), ``len`` and iteration as PyTorch."""

    program_attributes = Module.program_attributes + ("append", "insert", "extend", "pop")

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _index(self, idx) -> int:
        size = len(self.__dict__["_modules"])
        if not isinstance(idx, int) or isinstance(idx, bool):
            raise TypeError(f"{type(self).__name__} indices must be integers or slices, not {type(idx).__name__}")
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        return idx % size

    def __getitem__(self, idx):
        mods = self.__dict__["_modules"]
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(mods.items())[idx]))
        m = list(mods.values())[self._index(idx)]
        return m if m is None else m._face()

    def __setitem__(self, idx, module) -> None:
        key = list(self.__dict__["_modules"])[self._index(idx)]
        self.add_module(key, module)

    def __delitem__(self, idx) -> None:
        mods = self.__dict__["_modules"]
        keys = list(mods)
        for key in (keys[idx] if isinstance(idx, slice) else [keys[self._index(idx)]]):
            del mods[key]
        items = list(mods.values())
        mods.clear()
        mods.update({str(i): m for i, m in enumerate(items)})

    def __len__(self) -> int:
        return len(self.__dict__["_modules"])

    def __iter__(self):
        return iter([m if m is None else m._face() for m in self.__dict__["_modules"].values()])

    def append(self, module):
        """Add ``module`` at the end; returns the Sequential."""
        self.add_module(str(len(self)), module)
        return self._face()

    def extend(self, modules):
        """Append each of ``modules``; returns the Sequential."""
        for m in modules:
            self.append(m)
        return self._face()

    def insert(self, index: int, module):
        """Insert ``module`` before position ``index``; returns the Sequential."""
        mods = self.__dict__["_modules"]
        items = list(mods.values())
        n = len(items)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        items.insert(index % (n + 1) if index < 0 else index, core_of(module))
        mods.clear()
        mods.update({str(i): m for i, m in enumerate(items)})
        return self._face()

    def pop(self, key):
        """Remove and return the module at ``key``."""
        v = self[key]
        del self[key]
        return v

    def forward(self, input):
        for module in self.__dict__["_modules"].values():
            input = module(input)
        return input


class ModuleList(Module):
    """``nn.ModuleList(modules=None)``: a list of registered modules (indexing, ``len``, iteration, append,
    extend, insert)."""

    program_attributes = Module.program_attributes + ("append", "extend", "insert", "pop")

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _index(self, idx) -> int:
        size = len(self.__dict__["_modules"])
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        return idx % size

    def __getitem__(self, idx):
        mods = self.__dict__["_modules"]
        if isinstance(idx, slice):
            return ModuleList(list(mods.values())[idx])
        return list(mods.values())[self._index(idx)]._face()

    def __setitem__(self, idx, module) -> None:
        self.add_module(str(self._index(idx)), module)

    def __len__(self) -> int:
        return len(self.__dict__["_modules"])

    def __iter__(self):
        return iter([m._face() for m in self.__dict__["_modules"].values()])

    def append(self, module):
        """Add ``module`` at the end; returns the list."""
        self.add_module(str(len(self)), module)
        return self._face()

    def extend(self, modules):
        """Append each of ``modules``; returns the list."""
        for m in modules:
            self.append(m)
        return self._face()

    def insert(self, index: int, module) -> None:
        """Insert ``module`` before ``index``."""
        mods = self.__dict__["_modules"]
        items = list(mods.values())
        items.insert(index, core_of(module))
        mods.clear()
        mods.update({str(i): m for i, m in enumerate(items)})

    def __repr__(self) -> str:
        # PyTorch's ModuleList.__repr__: runs of equal modules collapse to "(0-1): 2 x Block(...)"
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs = [[0, 0, reprs[0]]]
        for i, r in enumerate(reprs[1:], 1):
            if r == runs[-1][2]:
                runs[-1][1] += 1
            else:
                runs.append([i, i, r])
        lines = []
        for start, end, r in runs:
            text = f"({start}): {r}" if start == end else f"({start}-{end}): {end - start + 1} x {r}"
            lines.append(_addindent(text, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def pop(self, key):
        """Remove and return the module at ``key``."""
        mods = self.__dict__["_modules"]
        items = list(mods.values())
        v = items.pop(key)
        mods.clear()
        mods.update({str(i): m for i, m in enumerate(items)})
        return v._face()


# ----------------------------------------------------------------------------------------------- losses
class _Loss(Module):
    program_attributes = Module.program_attributes + ("reduction",)

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = _legacy_reduction(size_average, reduce, reduction)
        self.reduction = reduction


class MSELoss(_Loss):
    """``nn.MSELoss(reduction='mean')``: F.mse_loss."""

    def forward(self, input, target):
        return _op("mse_loss")(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """``nn.L1Loss(reduction='mean')``: F.l1_loss."""

    def forward(self, input, target):
        return _op("l1_loss")(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """``nn.SmoothL1Loss(reduction='mean', beta=1.0)``: F.smooth_l1_loss."""

    program_attributes = _Loss.program_attributes + ("beta",)

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return _op("smooth_l1_loss")(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """``nn.HuberLoss(reduction='mean', delta=1.0)``: F.huber_loss."""

    program_attributes = _Loss.program_attributes + ("delta",)

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return _op("huber_loss")(input, target, reduction=self.reduction, delta=self.delta)


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class BCELoss(_WeightedLoss):
    """``nn.BCELoss(weight=None, reduction='mean')``: F.binary_cross_entropy."""

    def forward(self, input, target):
        return _op("binary_cross_entropy")(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """``nn.BCEWithLogitsLoss(weight=None, reduction='mean', pos_weight=None)``:
    F.binary_cross_entropy_with_logits."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return _op("binary_cross_entropy_with_logits")(input, target, self.weight, pos_weight=self.pos_weight,
                                                       reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """``nn.NLLLoss(weight=None, ignore_index=-100, reduction='mean')``: F.nll_loss."""

    program_attributes = _Loss.program_attributes + ("ignore_index",)

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return _op("nll_loss")(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """``nn.CrossEntropyLoss(weight=None, ignore_index=-100, reduction='mean', label_smoothing=0.0)``:
    F.cross_entropy."""

    program_attributes = _Loss.program_attributes + ("ignore_index", "label_smoothing")

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                 label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return _op("cross_entropy")(input, target, weight=self.weight, ignore_index=self.ignore_index,
                                    reduction=self.reduction, label_smoothing=self.label_smoothing)


#: The classes ``torch.nn`` exposes, by name.
CLASSES = {c.__name__: c for c in (
    Module, Identity, Linear, Embedding, BatchNorm1d, Dropout, Flatten, ReLU, ReLU6, SELU, SiLU, Tanh, Sigmoid,
    GELU, LeakyReLU, ELU, Softplus, Softmax, LogSoftmax, Sequential, ModuleList, MSELoss, L1Loss, SmoothL1Loss,
    HuberLoss, BCELoss, BCEWithLogitsLoss, NLLLoss, CrossEntropyLoss)}
