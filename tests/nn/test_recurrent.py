"""torch.nn's recurrent layers (gradcli/api/nn/recurrent.py) in ``gradcli run`` programs, against PyTorch: after
the same ``torch.manual_seed`` the parameters, the output, h_n and c_n, and the gradients of every parameter, of
the input and of h0/c0 equal PyTorch's (float32 to rtol 1e-5 / atol 1e-6 since the matrix products may round
differently; float64 to 1e-10), for RNN, LSTM, GRU and the cells over layers, directions, batch_first,
proj_size, bias, dropout and unbatched inputs; ``print(model)`` and the error messages are PyTorch's; and a
small float64 LSTM passes gradcheck and gradgradcheck through the engine."""

from __future__ import annotations

import math
import re
import subprocess
import sys
import warnings

import pytest
from helpers import HANG_TIMEOUT, python_and_gradcli_stdout

import gradcli as G
from gradcli.api.gradcheck import gradcheck, gradgradcheck

#: Prints every parameter, output and gradient of ``m(*args)`` as full-precision lists (``report``), after a
#: loss that reaches every output. The test programs below start with it.
PRELUDE = '''
import torch
from torch import nn


def flat(t):
    return t.reshape(-1).tolist()


def outputs_of(out):
    if isinstance(out, tuple):
        res = []
        for o in out:
            res = res + outputs_of(o)
        return res
    return [out]


def report(label, m, x, state=None):
    args = [x] if state is None else [x, state]
    out = m(*args)
    outs = outputs_of(out)
    print(label, m, [list(o.shape) for o in outs], [o.grad_fn.name() for o in outs])
    loss = 0
    for k, o in enumerate(outs):
        print("out", k, flat(o))
        loss = loss + (o * o).sum() * (k + 1) + o.sum()
    loss.backward()
    for name, p in m.named_parameters():
        print(name, list(p.shape), p.dtype, flat(p), flat(p.grad))
    print("x.grad", flat(x.grad))
    for s in outputs_of(state) if state is not None else []:
        print("state.grad", flat(s.grad))
'''

SEQUENCE_MODELS = PRELUDE + '''
torch.manual_seed(0)
configs = [
    (nn.RNN, (3, 4), {}, (5, 2, 3), False),
    (nn.RNN, (3, 4, 2, "relu"), {"bidirectional": True}, (4, 2, 3), True),
    (nn.RNN, (3, 4), {"bias": False, "batch_first": True, "nonlinearity": "relu"}, (2, 5, 3), True),
    (nn.RNN, (3, 4), {"num_layers": 2}, (5, 3), True),
    (nn.GRU, (3, 5), {}, (4, 2, 3), False),
    (nn.GRU, (3, 5, 2), {"bidirectional": True, "batch_first": True}, (2, 4, 3), True),
    (nn.GRU, (3, 4), {"bias": False}, (6, 3), True),
    (nn.LSTM, (3, 5), {}, (4, 2, 3), False),
    (nn.LSTM, (3, 5, 2), {}, (4, 2, 3), True),
    (nn.LSTM, (3, 5), {"num_layers": 2, "bidirectional": True, "proj_size": 2}, (3, 2, 3), True),
    (nn.LSTM, (3, 4), {"batch_first": True, "bias": False, "proj_size": 3}, (2, 3, 3), True),
    (nn.LSTM, (3, 4), {"bidirectional": True}, (5, 3), True),
    (nn.LSTM, (3, 4), {}, (5, 3), False),
]
for cls, args, kwargs, shape, with_state in configs:
    m = cls(*args, **kwargs)
    x = torch.randn(*shape, requires_grad=True)
    state = None
    if with_state:
        d = 2 if m.bidirectional else 1
        n = shape[0] if m.batch_first else shape[1]
        h = m.proj_size if m.proj_size > 0 else m.hidden_size
        lead = (m.num_layers * d, n) if len(shape) == 3 else (m.num_layers * d,)
        state = torch.randn(lead + (h,), requires_grad=True)
        if cls is nn.LSTM:
            state = (state, torch.randn(lead + (m.hidden_size,), requires_grad=True))
    report(cls.__name__, m, x, state)
'''

DROPOUT = PRELUDE + '''
torch.manual_seed(0)
for cls in (nn.LSTM, nn.GRU, nn.RNN):
    m = cls(3, 4, num_layers=3, dropout=0.5, bidirectional=cls is nn.GRU)
    report(cls.__name__, m, torch.randn(4, 2, 3, requires_grad=True))
    m.eval()
    report(cls.__name__ + " eval", m, torch.randn(4, 2, 3, requires_grad=True))
'''

CELLS = PRELUDE + '''
torch.manual_seed(0)
configs = [
    (nn.RNNCell, (3, 4), {}, (2, 3), (2, 4)),
    (nn.RNNCell, (3, 4), {"nonlinearity": "relu", "bias": False}, (3,), (4,)),
    (nn.RNNCell, (3, 4), {}, (2, 3), None),
    (nn.LSTMCell, (3, 5), {}, (2, 3), (2, 5)),
    (nn.LSTMCell, (3, 5), {"bias": False}, (3,), (5,)),
    (nn.LSTMCell, (3, 5), {}, (2, 3), None),
    (nn.GRUCell, (3, 4), {}, (2, 3), (2, 4)),
    (nn.GRUCell, (3, 4), {}, (3,), (4,)),
    (nn.GRUCell, (3, 4), {"bias": False}, (2, 3), None),
]
for cls, args, kwargs, shape, hshape in configs:
    m = cls(*args, **kwargs)
    x = torch.randn(*shape, requires_grad=True)
    state = None
    if hshape is not None:
        state = torch.randn(*hshape, requires_grad=True)
        if cls is nn.LSTMCell:
            state = (state, torch.randn(*hshape, requires_grad=True))
    report(cls.__name__, m, x, state)

# the documented loop: a cell over a sequence, gradients through every step
cell = nn.LSTMCell(3, 4)
xs = torch.randn(5, 2, 3, requires_grad=True)
h, c = torch.zeros(2, 4), torch.zeros(2, 4)
hs = []
for t in range(5):
    h, c = cell(xs[t], (h, c))
    hs.append(h)
out = torch.stack(hs)
(out.sin().sum() + c.sum()).backward()
print("loop", flat(out), flat(xs.grad), flat(cell.weight_hh.grad), flat(cell.bias_ih.grad))
'''

FLOAT64 = SEQUENCE_MODELS.replace("torch.manual_seed(0)\nconfigs",
                                  "torch.set_default_dtype(torch.float64)\ntorch.manual_seed(0)\nconfigs")

REPRS = '''
import torch
from torch import nn
torch.manual_seed(0)
for m in [nn.LSTM(10, 20, num_layers=2), nn.RNN(3, 4, 1, "relu", False, True, 0.0, True), nn.GRU(3, 4, dropout=0.25,
          num_layers=2), nn.LSTM(5, 6, proj_size=2, bias=False), nn.RNNCell(3, 4, nonlinearity="relu"),
          nn.LSTMCell(3, 4, bias=False), nn.GRUCell(3, 4)]:
    print(m, type(m), [(n, list(p.shape)) for n, p in m.named_parameters()])
class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 6, batch_first=True, bidirectional=True)
        self.out = nn.Linear(12, 3)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.out(y)
print(Tagger())
m = nn.GRU(3, 4, 2)
print(m.mode, m.input_size, m.hidden_size, m.num_layers, m.bias, m.batch_first, m.dropout, m.bidirectional,
      m.proj_size, [[list(w.shape) for w in ws] for ws in m.all_weights])
print(isinstance(m, nn.RNNBase), isinstance(nn.GRUCell(2, 3), nn.RNNCellBase), nn.GRU, nn.RNNCell)
g, c = nn.GRU(3, 4, dtype=torch.float64), nn.LSTMCell(2, 3, dtype=torch.float64)
print(g.weight_ih_l0, c.bias_hh, g(torch.randn(2, 3, dtype=torch.float64))[1], c(torch.randn(2, dtype=torch.float64)))
m.weight_hh_l1 = nn.Parameter(torch.zeros(12, 4))
m.flatten_parameters()
print(m(torch.ones(2, 1, 3))[1])
'''

TRAINING = '''
import torch
from torch import nn

torch.manual_seed(0)


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.lstm = nn.LSTM(4, 6, num_layers=2, batch_first=True, bidirectional=True, dropout=0.3)
        self.out = nn.Linear(12, 3)

    def forward(self, tokens):
        y, (h, c) = self.lstm(self.embed(tokens))
        return self.out(y)


model = Tagger()
opt = torch.optim.Adam(model.parameters(), lr=0.01)
tokens = torch.randint(0, 10, (2, 5))
tags = torch.randint(0, 3, (2, 5))
for step in range(4):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(tokens).reshape(-1, 3), tags.reshape(-1))
    loss.backward()
    opt.step()
    print(step, loss.item(), model.lstm.weight_hh_l1_reverse.grad.norm().item())
model.eval()
print(model(tokens).argmax(-1).tolist(), model.lstm.weight_ih_l0.reshape(-1).tolist()[:6])
'''


# ------------------------------------------------------------------------------------------- comparing
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?\b(?:nan|inf)\b")


def assert_numbers_close(got: str, want: str, rtol: float, atol: float) -> None:
    """The two printed outputs have the same text between their numbers and each pair of numbers agrees to
    ``|a - b| <= atol + rtol * |b|``; fail naming the first line that differs."""
    for line_g, line_w in zip(got.splitlines(), want.splitlines(), strict=True):
        assert _NUMBER.split(line_g) == _NUMBER.split(line_w), (line_g, line_w)
        for a, b in zip(_NUMBER.findall(line_g), _NUMBER.findall(line_w)):
            a, b = float(a), float(b)
            assert abs(a - b) <= atol + rtol * abs(b) or (math.isnan(a) and math.isnan(b)), \
                f"{a} != {b} in\n  got  {line_g[:200]}\n  want {line_w[:200]}"
    assert len(got.splitlines()) == len(want.splitlines())


def _grad_fn_names(text: str) -> str:
    """PyTorch's names of the output's grad_fn as gradcli gives them. Two differ, both from how PyTorch's C++
    computes rather than from the values: PyTorch's CPU LSTM in float32 runs on oneDNN, whose output is one
    MkldnnRnnLayerBackward0 node (gradcli computes as ATen's reference implementation, which PyTorch uses in
    float64 and with projections: StackBackward0); and that implementation transposes a batch_first output in
    place (TransposeBackward1), where gradcli, which has no in-place transpose_, records TransposeBackward0."""
    return text.replace("'MkldnnRnnLayerBackward0'", "'StackBackward0'").replace("'TransposeBackward1'",
                                                                                  "'TransposeBackward0'")


def _agree(tmp_path, name, program, rtol, atol):
    want, got = python_and_gradcli_stdout(tmp_path, name, program)
    assert_numbers_close(got, _grad_fn_names(want), rtol, atol)


def test_rnn_gru_lstm_outputs_and_gradients_float32(tmp_path):
    _agree(tmp_path, "sequence32", SEQUENCE_MODELS, 1e-5, 1e-6)


def test_rnn_gru_lstm_outputs_and_gradients_float64(tmp_path):
    _agree(tmp_path, "sequence64", FLOAT64, 1e-10, 1e-12)


def test_dropout_between_layers_draws_pytorchs_masks(tmp_path):
    _agree(tmp_path, "dropout", DROPOUT, 1e-5, 1e-6)


def test_cells_batched_unbatched_and_in_a_loop(tmp_path):
    _agree(tmp_path, "cells", CELLS, 1e-5, 1e-6)


def test_repr_attributes_parameter_names_and_dtype(tmp_path):
    _agree(tmp_path, "reprs", REPRS, 0, 0)


def test_a_tagger_trains_as_pytorchs(tmp_path):
    _agree(tmp_path, "training", TRAINING, 1e-5, 1e-6)


# ----------------------------------------------------------------------------------------------- errors
ERROR_CASES = [
    lambda t: t.nn.RNN(3, 4)(t.ones(2, 2, 2, 3)),
    lambda t: t.nn.LSTM(3, 4)(t.ones(1, 2, 2, 3)),
    lambda t: t.nn.GRU(3, 4)(t.ones(3)),
    lambda t: t.nn.RNN(3, 4)(t.ones(5, 2, 4)),
    lambda t: t.nn.RNN(3, 4)(t.ones(5, 2, 3), t.zeros(1, 3, 4)),
    lambda t: t.nn.GRU(3, 4, 2, bidirectional=True)(t.ones(5, 2, 3), t.zeros(2, 2, 4)),
    lambda t: t.nn.RNN(3, 4)(t.ones(5, 2, 3), t.zeros(2, 4)),
    lambda t: t.nn.GRU(3, 4)(t.ones(5, 3), t.zeros(1, 2, 4)),
    lambda t: t.nn.LSTM(3, 4)(t.ones(5, 2, 3), (t.zeros(1, 2, 4), t.zeros(2, 4))),
    lambda t: t.nn.LSTM(3, 4)(t.ones(5, 3), (t.zeros(1, 4), t.zeros(1, 1, 4))),
    lambda t: t.nn.LSTM(3, 4)(t.ones(5, 2, 3), (t.zeros(1, 2, 3), t.zeros(1, 2, 4))),
    lambda t: t.nn.LSTM(3, 4, proj_size=2)(t.ones(5, 2, 3), (t.zeros(1, 2, 2), t.zeros(1, 2, 2))),
    lambda t: t.nn.LSTM(3, 4)(t.ones(5, 2, 3, dtype=t.float64)),
    lambda t: t.nn.RNN(3, 4, nonlinearity="sigmoid"),
    lambda t: t.nn.GRU(3, 4, proj_size=2),
    lambda t: t.nn.LSTM(3, 4, proj_size=4),
    lambda t: t.nn.LSTM(3, 4, proj_size=-1),
    lambda t: t.nn.LSTM(3, 4, dropout=1.5),
    lambda t: t.nn.LSTM(3, 4, num_layers=0),
    lambda t: t.nn.LSTM(0, 4),
    lambda t: t.nn.LSTM(3, 4.0),
    lambda t: t.nn.LSTM(3, 4, bias=1),
    lambda t: t.nn.RNNCell(3, 4)(t.ones(2, 2, 3)),
    lambda t: t.nn.RNNCell(3, 4)(t.ones(2, 3), t.ones(1, 2, 4)),
    lambda t: t.nn.RNNCell(3, 4)(t.ones(2, 5)),
    lambda t: t.nn.GRUCell(3, 4)(t.ones(2, 3), t.ones(3, 4)),
    lambda t: t.nn.GRUCell(3, 4)(t.ones(2, 3), t.ones(2, 5)),
    lambda t: t.nn.LSTMCell(3, 4)(t.ones(2, 3), (t.ones(2, 4), t.ones(2, 2, 4))),
    lambda t: t.nn.LSTMCell(3, 4)(t.ones(2, 3), (t.ones(2, 4), t.ones(3, 4))),
    lambda t: t.nn.RNNCell(3, 4, nonlinearity="gelu")(t.ones(2, 3)),
    lambda t: t.nn.LSTMCell(3, 4)(t.ones(2, 3), (t.ones(2, 5), t.ones(2, 4))),
    lambda t: t.nn.LSTMCell(3, 4)(t.ones(3), (t.ones(2, 4), t.ones(2, 4))),
    lambda t: t.nn.RNNCell(3, 4)(t.ones(3), t.ones(2, 4)),
    lambda t: t.nn.RNNCell(3, 4)(t.ones(2, 3), t.ones(4)),
    lambda t: t.nn.LSTMCell(3, 4)(t.ones(2, 5)),
    lambda t: t.nn.RNNCell(3, 4)(t.ones(2, 3, dtype=t.float64)),
    lambda t: t.nn.RNN(3, 4)(t.ones(5, 3), t.zeros(2, 4)),
]


@pytest.mark.parametrize("case", range(len(ERROR_CASES)))
def test_errors_are_pytorchs(case):
    torch = pytest.importorskip("torch")
    fn = ERROR_CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as et:
            fn(torch)
        with pytest.raises(Exception) as eg:
            fn(G)
    assert (type(eg.value).__name__, str(eg.value)) == (type(et.value).__name__, str(et.value))


def test_dropout_with_one_layer_warns_as_pytorch():
    torch = pytest.importorskip("torch")
    with pytest.warns(UserWarning) as wt:
        torch.nn.GRU(3, 4, dropout=0.2)
    with pytest.warns(UserWarning) as wg:
        G.nn.GRU(3, 4, dropout=0.2)
    assert str(wg[0].message) == str(wt[0].message)


def test_error_in_a_program_is_pytorchs_message(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text("import torch\nfrom torch import nn\nnn.LSTM(3, 4)(torch.ones(5, 2, 4))\n")
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)], capture_output=True, text=True,
                          timeout=HANG_TIMEOUT)
    assert proc.returncode == 1
    assert "RuntimeError: input.size(-1) must be equal to input_size. Expected 3, got 4" in proc.stderr


# ------------------------------------------------------------------------------------------- gradcheck
def test_lstm_gradcheck_and_gradgradcheck_float64():
    G.manual_seed(0)
    m = G.nn.LSTM(2, 3, num_layers=2, bidirectional=True, proj_size=1).double()
    x = G.randn(2, 1, 2, dtype=G.float64, requires_grad=True)
    h0 = G.randn(4, 1, 1, dtype=G.float64, requires_grad=True)
    c0 = G.randn(4, 1, 3, dtype=G.float64, requires_grad=True)

    def f(x, h0, c0, *params):  # the module's own parameters, perturbed in place by the checks
        out, (h, c) = m(x, (h0, c0))
        return out, h, c

    # one parameter of each kind (every gradient of every parameter is compared with PyTorch's above)
    params = (m.weight_ih_l1_reverse, m.weight_hh_l0, m.bias_ih_l1, m.bias_hh_l0_reverse, m.weight_hr_l1)
    assert gradcheck(f, (x, h0, c0, *params))
    assert gradgradcheck(lambda *args: f(*args)[0], (x, h0, c0, m.weight_hr_l1))


def test_cells_gradcheck_float64():
    G.manual_seed(0)
    x = G.randn(2, 3, dtype=G.float64, requires_grad=True)
    h = G.randn(2, 2, dtype=G.float64, requires_grad=True)
    c = G.randn(2, 2, dtype=G.float64, requires_grad=True)
    for cell, run in [(G.nn.GRUCell(3, 2), lambda cell, x, h, c: cell(x, h)),
                      (G.nn.RNNCell(3, 2, nonlinearity="relu"), lambda cell, x, h, c: cell(x, h)),
                      (G.nn.LSTMCell(3, 2), lambda cell, x, h, c: cell(x, (h, c)))]:
        cell = cell.double()

        def f(x, h, c, *params, cell=cell, run=run):
            return run(cell, x, h, c)

        assert gradcheck(f, (x, h, c, *cell.parameters()))
        assert gradgradcheck(f, (x, h, c, cell.weight_hh))
