"""``torch.nn``'s recurrent layers: RNN, LSTM, GRU and the cells RNNCell, LSTMCell, GRUCell, as PyTorch 2.13's
``torch/nn/modules/rnn.py`` (constructor arguments, checks and their messages, parameter names and shapes,
``extra_repr``) over the arithmetic of ATen's reference implementation ``aten/src/ATen/native/RNN.cpp`` (the
one PyTorch uses on the CPU without oneDNN), built from the op table's linear, matmul, sigmoid, tanh, relu,
unbind, chunk, stack and cat so that gradients (and second derivatives) come from the engine.

Parameters are registered in PyTorch's order (for each layer, for each direction: ``weight_ih_l{k}``,
``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}``, ``weight_hr_l{k}`` with a ``_reverse`` suffix for the
second direction) and drawn in that order from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as
``RNNBase.reset_parameters`` draws them, so that after ``torch.manual_seed(s)`` they equal PyTorch's.

Sequences are time-major (T, N, H) inside (``batch_first`` transposes in and out). Gate layouts follow PyTorch:
LSTM (input, forget, cell, output), GRU (reset, update, new) along the gate dim. Packed sequences
(torch.nn.utils.rnn) are not supported.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ...engine import dtypes, limits
from ...engine.tensor import Tensor
from ...ops import REGISTRY as _OPS
from . import init
from .module import Module
from .parameter import Parameter

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _op(name):
    return _OPS[name]


def _parameter(shape, dtype) -> Parameter:
    """An uninitialised (zero) parameter of ``dtype`` (a dtype or None: the default dtype), as
    ``torch.empty(shape, dtype=dtype)`` before ``reset_parameters`` fills it."""
    limits.check_items(int(np.prod(shape)), "a parameter")
    d = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
    return Parameter(Tensor(np.zeros(shape, dtype=d.np)))


def _zeros(shape, like: Tensor) -> Tensor:
    """A tensor of zeros of ``like``'s dtype, not requiring grad (PyTorch's default h0 and c0)."""
    limits.check_items(int(np.prod(shape)), "a hidden state")
    return Tensor(np.zeros(tuple(int(s) for s in shape), dtype=like.data.dtype))


# -------------------------------------------------------------------------------------------- the steps
# Each step takes the input's contribution ``gi`` (already ``x W_ih^T + b_ih``) and the previous state, and
# computes as ATen's cells do, in ATen's order of operations.
def _linear_hh(h, w):
    return _op("linear")(h, w["weight_hh"], w.get("bias_hh"))


def _simple_step(nonlinearity):
    act = _op(nonlinearity)

    def step(gi, h, w):
        """h' = act(h W_hh^T + b_hh + gi) (ATen's SimpleCell)."""
        return act(_linear_hh(h, w) + gi)

    return step


def _lstm_step(gi, state, w):
    """ATen's LSTMCell: gates = h W_hh^T + b_hh + gi, chunked (i, f, g, o); c' = f*c + i*g; h' = o*tanh(c'),
    then h' W_hr^T with projections."""
    h, c = state
    gates = _linear_hh(h, w) + gi
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = _op("sigmoid")(i), _op("sigmoid")(f), _op("tanh")(g), _op("sigmoid")(o)
    cy = f * c + i * g
    hy = o * _op("tanh")(cy)
    if "weight_hr" in w:
        hy = _op("matmul")(hy, w["weight_hr"].t())
    return hy, cy


def _gru_step(gi, h, w):
    """ATen's GRUCell: r = sigmoid(gh_r + gi_r), z = sigmoid(gh_z + gi_z), n = tanh(gi_n + gh_n * r),
    h' = (h - n) * z + n."""
    ir, iz, inn = gi.chunk(3, 1)
    hr, hz, hn = _linear_hh(h, w).chunk(3, 1)
    r = _op("sigmoid")(hr + ir)
    z = _op("sigmoid")(hz + iz)
    n = _op("tanh")(inn + hn * r)
    return (h - n) * z + n


_STEPS = {"RNN_TANH": _simple_step("tanh"), "RNN_RELU": _simple_step("relu"), "LSTM": _lstm_step, "GRU": _gru_step}


def _input_part(x, w):
    return _op("linear")(x, w["weight_ih"], w.get("bias_ih"))


# ---------------------------------------------------------------------------------------------- RNNBase
class RNNBase(Module):
    """The base of RNN, LSTM and GRU (torch.nn.RNNBase): the parameters of every layer and direction, the
    checks of the input and the hidden state, and the layer stack.

    Raises (constructor):
        ValueError / TypeError: PyTorch's messages for a bad dropout, size, num_layers or proj_size.
    """

    program_attributes = Module.program_attributes + ("reset_parameters", "flatten_parameters", "all_weights")

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        _check_arguments(input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size)
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        num_directions = 2 if bidirectional else 1
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        names = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                shapes = [(gate_size, layer_input_size), (gate_size, real_hidden_size)]
                kinds = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    shapes += [(gate_size,), (gate_size,)]
                    kinds += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    shapes.append((proj_size, hidden_size))
                    kinds.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                layer_names = [k.format(layer, suffix) for k in kinds]
                for name, shape in zip(layer_names, shapes):
                    self.register_parameter(name, _parameter(shape, dtype))
                names.append(layer_names)
        self._all_weights = names
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every parameter, in registration order, from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """A no-op, as PyTorch's off cuDNN."""

    @property
    def all_weights(self) -> list:
        """The parameters, one list per layer and direction (PyTorch's ``all_weights``)."""
        return [[self._parameters[name] for name in names] for names in self._all_weights]

    # ------------------------------------------------------------------------------------ checks
    def check_input(self, input, batch_sizes=None) -> None:
        """PyTorch's checks of the input's dtype, number of dims and feature size.

        Raises:
            ValueError: a dtype other than the weights'; RuntimeError: a wrong dim count or input size.
        """
        wdtype = self._parameters[self._all_weights[0][0]].dtype
        if input.dtype != wdtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({wdtype}). Convert "
                             f"input: input.to({wdtype}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes=None) -> tuple:
        """(num_layers * num_directions, batch, proj_size or hidden_size)."""
        mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        last = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, last)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}") -> None:
        """Raises RuntimeError (PyTorch's message) unless ``hx`` has the expected size."""
        if tuple(hx.shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.shape)))

    def check_forward_args(self, input, hidden, batch_sizes=None) -> None:
        """The input's checks, then the hidden state's size."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # ------------------------------------------------------------------------------------- compute
    def _weights(self, index: int) -> dict:
        """The parameters of layer-direction ``index`` by kind (``weight_ih``, ``bias_hh``, ...)."""
        return {name.split("_l")[0]: self._parameters[name] for name in self._all_weights[index]}

    def _run(self, input, hiddens: list):
        """ATen's layer stack over a time-major (T, N, H_in) input and the initial state of each layer and
        direction (a tensor, or an (h, c) pair for LSTM): the last layer's outputs (T, N, D * H_out) and the
        final state of each layer and direction. Dropout (training mode) acts between layers."""
        step = _STEPS[self.mode]
        num_directions = 2 if self.bidirectional else 1
        finals = []
        layer_input = input
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(num_directions):
                index = layer * num_directions + direction
                w = self._weights(index)
                state = hiddens[index]
                steps = _input_part(layer_input, w).unbind(0)
                results = []
                for gi in (reversed(steps) if direction == 1 else steps):
                    state = step(gi, state, w)
                    results.append(state[0] if self.mode == "LSTM" else state)
                if direction == 1:
                    results.reverse()
                outputs.append(_op("stack")(results, 0))
                finals.append(state)
            layer_input = outputs[0] if num_directions == 1 else _op("cat")(outputs, outputs[0].dim() - 1)
            if self.dropout != 0 and self.training and layer < self.num_layers - 1:
                layer_input = _op("dropout")(layer_input, self.dropout, True)
        return layer_input, finals

    def _sequence(self, input, hiddens: list):
        """``_run`` with ``batch_first`` handled: (output, final states)."""
        if self.batch_first:
            input = input.transpose(0, 1)
        output, finals = self._run(input, hiddens)
        if self.batch_first:
            output = output.transpose(0, 1)
        return output, finals

    def _batched(self, input, name: str, tensor_word: bool = True):
        """Check a 2-D or 3-D input; returns (input with a batch dim, is_batched, batch_dim)."""
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
                             f"{' tensor' if tensor_word else ''} instead")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        return (input if is_batched else input.unsqueeze(batch_dim)), is_batched, batch_dim

    def _single_state_forward(self, input, hx, name: str, tensor_word: bool):
        """RNN's and GRU's forward: (output, h_n)."""
        input, is_batched, batch_dim = self._batched(input, name, tensor_word)
        if not is_batched:
            if hx is not None:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D "
                                       "tensor")
                hx = hx.unsqueeze(1)
        elif hx is not None and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
        max_batch_size = input.size(0) if self.batch_first else input.size(1)
        if hx is None:
            num_directions = 2 if self.bidirectional else 1
            hx = _zeros((self.num_layers * num_directions, max_batch_size, self.hidden_size), input)
        self.check_forward_args(input, hx)
        output, finals = self._sequence(input, list(hx.unbind(0)))
        hidden = _op("stack")(finals, 0)
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = hidden.squeeze(1)
        return output, hidden


def _check_arguments(input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size) -> None:
    """RNNBase's checks of its constructor arguments, with PyTorch's messages (and its warning for dropout
    with one layer)."""
    if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
        raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                         "being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                      f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                      stacklevel=3)
    if not isinstance(bias, bool):
        raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
    if not isinstance(batch_first, bool):
        raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
    if not isinstance(input_size, int):
        raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
    if input_size <= 0:
        raise ValueError("input_size must be greater than zero")
    if not isinstance(hidden_size, int):
        raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
    if hidden_size <= 0:
        raise ValueError("hidden_size must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


class RNN(RNNBase):
    """``nn.RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False,
    dropout=0.0, bidirectional=False)``: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) per layer and
    direction. ``forward(input, hx=None)`` takes (L, N, H_in) (or (N, L, H_in) with batch_first, or unbatched
    (L, H_in)) and hx (D * num_layers, N, H) (zeros when None); returns (output (L, N, D * H), h_n).

    Raises:
        ValueError: proj_size given, or a nonlinearity other than 'tanh' and 'relu' (PyTorch's messages).
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._single_state_forward(input, hx, "RNN", True)


class GRU(RNNBase):
    """``nn.GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False)``: r = sigmoid(W_ir x + b_ir + W_hr h + b_hr), z likewise, n = tanh(W_in x + b_in +
    r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h. ``forward(input, hx=None)`` as RNN's: (output, h_n).

    Raises:
        ValueError: proj_size given (PyTorch's message).
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._single_state_forward(input, hx, "GRU", False)


class LSTM(RNNBase):
    """``nn.LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, proj_size=0)``: gates i, f, g, o from x W_ih^T + b_ih + h W_hh^T + b_hh, c' = f * c +
    i * g, h' = o * tanh(c') (times W_hr^T with proj_size > 0). ``forward(input, (h_0, c_0)=None)`` returns
    (output, (h_n, c_n)), h_n of size proj_size (or hidden_size), c_n of size hidden_size."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes=None) -> tuple:
        """(num_layers * num_directions, batch, hidden_size)."""
        mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes=None) -> None:
        """The input's checks, then h_0's and c_0's sizes (PyTorch's messages)."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def forward(self, input, hx=None):
        num_directions = 2 if self.bidirectional else 1
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        input, is_batched, batch_dim = self._batched(input, "LSTM", False)
        max_batch_size = input.size(0) if self.batch_first else input.size(1)
        if hx is None:
            hx = (_zeros((self.num_layers * num_directions, max_batch_size, real_hidden_size), input),
                  _zeros((self.num_layers * num_directions, max_batch_size, self.hidden_size), input))
        else:
            if is_batched:
                if hx[0].dim() != 3 or hx[1].dim() != 3:
                    raise RuntimeError(f"For batched 3-D input, hx and cx should also be 3-D but got "
                                       f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            else:
                if hx[0].dim() != 2 or hx[1].dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be 2-D but got "
                                       f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_forward_args(input, hx)
        output, finals = self._sequence(input, list(zip(hx[0].unbind(0), hx[1].unbind(0))))
        h_n = _op("stack")([h for h, _ in finals], 0)
        c_n = _op("stack")([c for _, c in finals], 0)
        if not is_batched:
            output = output.squeeze(batch_dim)
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return output, (h_n, c_n)


# ------------------------------------------------------------------------------------------------ cells
class RNNCellBase(Module):
    """The base of the cells (torch.nn.RNNCellBase): ``weight_ih`` (chunks * hidden_size, input_size),
    ``weight_hh`` (chunks * hidden_size, hidden_size), ``bias_ih`` and ``bias_hh``, all from
    U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) in that order; the checks of a step's input and state."""

    program_attributes = Module.program_attributes + ("reset_parameters",)

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = _parameter((num_chunks * hidden_size, input_size), dtype)
        self.weight_hh = _parameter((num_chunks * hidden_size, hidden_size), dtype)
        if bias:
            self.bias_ih = _parameter((num_chunks * hidden_size,), dtype)
            self.bias_hh = _parameter((num_chunks * hidden_size,), dtype)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        """Every parameter, in registration order, from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _weights(self) -> dict:
        w = {"weight_ih": self.weight_ih, "weight_hh": self.weight_hh}
        if self.bias_ih is not None:
            w.update(bias_ih=self.bias_ih, bias_hh=self.bias_hh)
        return w

    def _check(self, input, states) -> None:
        """ATen's checks of a batched step (RuntimeError, PyTorch's messages): the input's size, then each
        state's batch and hidden size (``hidden0``, and ``hidden1`` for LSTMCell's cell state)."""
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        for label, hx in states:
            if input.size(0) != hx.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{label} batch size "
                                   f"{hx.size(0)}")
            if hx.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {hx.size(1)}, expected "
                                   f"{self.hidden_size}")

    def _prepare(self, input, hx, name: str):
        """Check dims; returns (batched input, batched hx or zeros, is_batched)."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = _zeros((input.size(0), self.hidden_size), input)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        return input, hx, is_batched


class RNNCell(RNNCellBase):
    """``nn.RNNCell(input_size, hidden_size, bias=True, nonlinearity='tanh')``: one step, h' = act(x W_ih^T +
    b_ih + h W_hh^T + b_hh), for an input (N, H_in) or (H_in) and hx (N, H) or (H) (zeros when None).

    Raises:
        ValueError: an input or hx that is not 1-D or 2-D; RuntimeError: sizes that do not fit, or an unknown
        nonlinearity (PyTorch's messages).
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, is_batched = self._prepare(input, hx, "RNNCell")
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        self._check(input, [("0", hx)])
        w = self._weights()
        ret = _op(self.nonlinearity)(_linear_hh(hx, w) + _input_part(input, w))
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """``nn.LSTMCell(input_size, hidden_size, bias=True)``: one LSTM step; ``forward(input, (h, c)=None)``
    returns (h', c') for an input (N, H_in) or (H_in).

    Raises:
        ValueError: an input or state that is not 1-D or 2-D; RuntimeError: sizes that do not fit (PyTorch's
        messages).
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, dtype=dtype)

    def forward(self, input, hx=None):
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = _zeros((input.size(0), self.hidden_size), input)
            hx = (zeros, zeros)
        else:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0)) if not is_batched else tuple(hx)
        self._check(input, [("0", hx[0]), ("1", hx[1])])
        w = self._weights()
        gates = _linear_hh(hx[0], w) + _input_part(input, w)
        i, f, g, o = gates.chunk(4, 1)
        i, f, g, o = _op("sigmoid")(i), _op("sigmoid")(f), _op("tanh")(g), _op("sigmoid")(o)
        cy = f * hx[1] + i * g
        hy = o * _op("tanh")(cy)
        return (hy, cy) if is_batched else (hy.squeeze(0), cy.squeeze(0))


class GRUCell(RNNCellBase):
    """``nn.GRUCell(input_size, hidden_size, bias=True)``: one GRU step (gates reset, update, new, as nn.GRU's)
    for an input (N, H_in) or (H_in) and hx (N, H) or (H) (zeros when None).

    Raises:
        ValueError: an input or hx that is not 1-D or 2-D; RuntimeError: sizes that do not fit (PyTorch's
        messages).
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, is_batched = self._prepare(input, hx, "GRUCell")
        self._check(input, [("0", hx)])
        w = self._weights()
        ret = _gru_step(_input_part(input, w), hx, w)
        return ret if is_batched else ret.squeeze(0)


#: The classes of this module that ``torch.nn`` exposes, by name (added to gradcli.api.nn.CLASSES).
CLASSES = {c.__name__: c for c in (RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell)}

for _cls in CLASSES.values():  # each prints as PyTorch's class: <class 'torch.nn.modules.rnn.LSTM'>
    type.__setattr__(_cls, "_torch_module", "torch.nn.modules.rnn")

__all__ = sorted(CLASSES)
