"""torch.nn.functional's normalizations, activations and distances (gradcli/ops/nn/functional.py) and the modules of
gradcli/api/nn/extra.py against PyTorch: error texts, forward-mode details the op table
skips, seeded initialisation, ``print(model)``, module outputs and gradients, and a ``gradcli run`` training
program. Values, gradients and grad_fn names of the ops themselves are covered by the op table
(tests/ops/opinfo.py, NN_FUNCTIONAL)."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as G
from gradcli.api import nn as gnn

from helpers import assert_printed_alike, python_and_gradcli_stdout

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _raised(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return type(e).__name__, str(e).split("\n")[0]
    return None


def _close(g, t, rtol=1e-5, atol=1e-6):
    g = g.detach().numpy() if hasattr(g, "detach") else np.asarray(g)
    np.testing.assert_allclose(g, t.detach().numpy(), rtol=rtol, atol=atol)


_X = np.random.default_rng(0).standard_normal((2, 4, 3)).astype(np.float32)

#: (id, call(m, F, x)) with m gradcli or torch, F its nn.functional, x a (2, 4, 3) float32 tensor
ERRORS = [
    ("layer_norm-shape", lambda m, f, x: f.layer_norm(x, (4,))),
    ("layer_norm-long-shape", lambda m, f, x: f.layer_norm(x, (2, 4, 3, 3))),
    ("layer_norm-weight", lambda m, f, x: f.layer_norm(x, (3,), m.ones(4))),
    ("layer_norm-bias", lambda m, f, x: f.layer_norm(x, (3,), None, m.ones(4))),
    ("layer_norm-int-shape", lambda m, f, x: f.layer_norm(x, 3)),
    ("layer_norm-long", lambda m, f, x: f.layer_norm(x.long(), (3,))),
    ("group_norm-groups", lambda m, f, x: f.group_norm(x, 3)),
    ("group_norm-weight", lambda m, f, x: f.group_norm(x, 2, m.ones(3))),
    ("group_norm-1d", lambda m, f, x: f.group_norm(m.ones(4), 2)),
    ("instance_norm-spatial", lambda m, f, x: f.instance_norm(m.ones(2, 3, 1))),
    ("logsigmoid-long", lambda m, f, x: f.logsigmoid(x.long())),
    ("celu-long", lambda m, f, x: f.celu(x.long())),
    ("celu-alpha0", lambda m, f, x: f.celu(x, 0.0)),
    ("mish-long", lambda m, f, x: f.mish(x.long())),
    ("hardswish-long", lambda m, f, x: f.hardswish(x.long())),
    ("hardsigmoid-long", lambda m, f, x: f.hardsigmoid(x.long())),
    ("glu-0d", lambda m, f, x: f.glu(m.tensor(1.0))),
    ("glu-odd", lambda m, f, x: f.glu(x, 2)),
    ("glu-dim", lambda m, f, x: f.glu(x, 3)),
    ("normalize-long", lambda m, f, x: f.normalize(x.long())),
    ("cosine-broadcast", lambda m, f, x: f.cosine_similarity(x, m.ones(5))),
    ("cosine-long", lambda m, f, x: f.cosine_similarity(x.long(), x.long())),
    ("cosine-dim", lambda m, f, x: f.cosine_similarity(m.tensor(1.0), m.tensor(1.0))),
    ("pairwise-broadcast", lambda m, f, x: f.pairwise_distance(x, m.ones(5))),
    ("one_hot-float", lambda m, f, x: f.one_hot(m.tensor([0.0, 2.0]))),
    ("one_hot-negative", lambda m, f, x: f.one_hot(m.tensor([0, -2, 1]))),
    ("one_hot-classes", lambda m, f, x: f.one_hot(m.tensor([0, 2, 1]), 2)),
    ("one_hot-empty", lambda m, f, x: f.one_hot(m.tensor([], dtype=m.int64))),
    ("bilinear-in2", lambda m, f, x: f.bilinear(m.ones(2, 3), m.ones(2, 4), m.ones(5, 3, 3))),
    ("bilinear-batch", lambda m, f, x: f.bilinear(m.ones(2, 3), m.ones(3, 4), m.ones(5, 3, 4))),
    ("bilinear-bias", lambda m, f, x: f.bilinear(m.ones(2, 3), m.ones(2, 4), m.ones(5, 3, 4), m.ones(4))),
    ("bilinear-dims", lambda m, f, x: f.bilinear(m.ones(2, 3), m.ones(4), m.ones(5, 3, 4))),
    ("quantile-empty", lambda m, f, x: m.quantile(m.ones(0), 0.5)),
    ("quantile-q", lambda m, f, x: m.quantile(x, 1.3)),
    ("nanquantile-q", lambda m, f, x: m.nanquantile(x, -0.5)),
    ("quantile-q-tensor", lambda m, f, x: m.quantile(x, m.tensor([0.2, 1.5]))),
    ("quantile-q-2d", lambda m, f, x: m.quantile(x, m.tensor([[0.3]]))),
    ("quantile-q-dtype", lambda m, f, x: m.quantile(x, m.tensor([0.3], dtype=m.float64))),
    ("nanquantile-long", lambda m, f, x: m.nanquantile(x.long(), 0.3)),
    ("quantile-interpolation", lambda m, f, x: m.quantile(x, 0.3, interpolation="foo")),
    ("quantile-dim", lambda m, f, x: m.quantile(x, 0.3, dim=3)),
    ("scatter_reduce-reduce", lambda m, f, x: m.zeros(3).scatter_reduce(0, m.tensor([0, 1]), m.ones(2), "foo")),
    ("scatter_reduce-dtype", lambda m, f, x: m.zeros(3).scatter_reduce(0, m.tensor([0, 1]),
                                                                        m.ones(2, dtype=m.float64), "sum")),
    ("scatter_reduce-bounds", lambda m, f, x: m.scatter_reduce(m.zeros(3), 0, m.tensor([0, 5]), m.ones(2), "amax")),
    ("scatter_reduce-index", lambda m, f, x: m.zeros(3).scatter_reduce(0, m.tensor([0.0, 1.0]), m.ones(2), "sum")),
    ("masked_scatter-mask", lambda m, f, x: m.zeros(3).masked_scatter(m.tensor([1, 0, 1]), m.ones(2))),
    ("masked_scatter-few", lambda m, f, x: m.zeros(3).masked_scatter(m.tensor([True, False, True]), m.ones(1))),
    ("masked_scatter-dtype", lambda m, f, x: m.masked_scatter(m.zeros(3), m.tensor([True, False, True]),
                                                              m.ones(2, dtype=m.float64))),
    ("masked_scatter-shape", lambda m, f, x: m.zeros(3).masked_scatter(m.tensor([True, False]), m.ones(2))),
    ("scatter_reduce-src-larger", lambda m, f, x: m.zeros(3, 2).scatter_reduce(
        0, m.tensor([[0, 1], [2, 0]]), m.ones(2, 3, requires_grad=True), "sum").sum().backward()),
    ("round-decimals-long", lambda m, f, x: m.round(x.long(), decimals=1)),
    ("GroupNorm-divisible", lambda m, f, x: m.nn.GroupNorm(3, 4)),
    ("BatchNorm2d-dims", lambda m, f, x: m.nn.BatchNorm2d(4)(x)),
    ("InstanceNorm2d-dims", lambda m, f, x: m.nn.InstanceNorm2d(4)(m.ones(3, 4))),
]


@pytest.mark.parametrize("call", [c for _, c in ERRORS], ids=[i for i, _ in ERRORS])
def test_errors_match_pytorch(call):
    want = _raised(lambda: call(torch, F, torch.from_numpy(_X)))
    assert want is not None
    assert _raised(lambda: call(G, G, G.tensor(_X))) == want


def test_integer_scatter_reduce_mean_and_round_decimals_match_pytorch():
    idx, src = [0, 1, 0, 0], [3, -4, 5, -7]
    for inc in (True, False):
        for r in ("mean", "sum", "prod", "amax", "amin"):
            t = torch.tensor([2, -3, 0]).scatter_reduce(0, torch.tensor(idx), torch.tensor(src), r, include_self=inc)
            g = G.tensor([2, -3, 0]).scatter_reduce(0, G.tensor(idx), G.tensor(src), r, include_self=inc)
            assert g.dtype == G.int64
            np.testing.assert_array_equal(g.numpy(), t.numpy(), err_msg=f"{r} {inc}")
    a = np.array([-3.5, -2.25, 0.0, 1.5, 2.675, 7.35, 15, 25, 1234.5678, -0.05], dtype=np.float32)
    for d in (0, 1, 2, 3, -1, -2):
        np.testing.assert_array_equal(G.tensor(a).round(decimals=d).numpy(), torch.tensor(a).round(decimals=d).numpy())


def test_constants_are_pytorchs():
    for name in ("pi", "e", "inf", "nan"):
        g, t = getattr(G, name), getattr(torch, name)
        assert type(g) is type(t) is float
        assert g == t or (np.isnan(g) and np.isnan(t))


def test_scatter_reduce_prod_second_derivative_as_pytorch():
    """Several zeros of src meeting in one position: the src gradient is PyTorch's DelayedError (Error) node,
    whose backward raises; one zero: second derivatives equal PyTorch's."""
    for src in ([0.0, 0.0, 5.0], [0.0, 1.0, 5.0]):
        res = []
        for m in (G, torch):
            x = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
            s = m.tensor(src, dtype=m.float64, requires_grad=True)
            out = m.scatter_reduce(x, 0, m.tensor([0, 0, 1]), s, "prod")
            g = m.autograd.grad(out.sum(), [x, s], create_graph=True)
            err = _raised(lambda: m.autograd.grad(g[1].sum(), [x, s], retain_graph=True))
            second = None if err else [t.detach().numpy() for t in m.autograd.grad(g[1].sum(), [x, s])]
            res.append(([t.detach().numpy() for t in g], err, second))
        (g1, e1, s1), (g2, e2, s2) = res
        for a, b in zip(g1, g2):
            np.testing.assert_array_equal(a, b)
        assert e1 == e2
        if s1 is not None:
            for a, b in zip(s1, s2):
                np.testing.assert_allclose(a, b)


def test_one_hot_values_and_dtype():
    for args in (([3, 0, 1],), ([[1, 0], [2, 2]], 4)):
        t = F.one_hot(torch.tensor(args[0]), *args[1:])
        g = G.one_hot(G.tensor(args[0]), *args[1:])
        assert g.dtype == G.int64
        np.testing.assert_array_equal(g.numpy(), t.numpy())


def test_layer_norm_reverse_over_forward_matches_pytorch():
    """PyTorch's layer_norm_jvp holds the mean and rstd constant: the gradient of the tangent is PyTorch's."""
    from gradcli.api import forward_ad as gfw
    from torch.autograd import forward_ad as tfw

    rng = np.random.default_rng(1)
    x, u, w = (rng.standard_normal((3, 4)) for _ in range(3))
    weight = rng.standard_normal(4)
    grads = []
    for m, fw, f in ((G, gfw, G), (torch, tfw, F)):
        xs = m.tensor(x, requires_grad=True)
        wt = m.tensor(weight, requires_grad=True)
        with fw.dual_level():
            tan = fw.unpack_dual(f.layer_norm(fw.make_dual(xs, m.tensor(u)), (4,), wt)).tangent
            g = (m.autograd.grad if m is G else torch.autograd.grad)((tan * m.tensor(w)).sum(), [xs, wt])
        grads.append([t.detach().numpy() for t in g] + [wt.detach().numpy()])
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-7, atol=1e-10)


def test_hardsigmoid_second_derivative_raises_as_pytorch():
    msgs = []
    for m in (G, torch):
        x = m.tensor([0.5, -1.0], requires_grad=True)
        (g,) = (G.autograd.grad if m is G else torch.autograd.grad)((G if m is G else F).hardsigmoid(x).sum(), [x],
                                                                     create_graph=True)
        msgs.append(_raised(lambda: g.sum().backward()))
    assert msgs[0] == msgs[1] == ("RuntimeError", "derivative for aten::hardsigmoid_backward is not implemented")


def _make_all(nn):
    return nn.Sequential(
        nn.LayerNorm(4), nn.LayerNorm((2, 3), elementwise_affine=False), nn.LayerNorm(4, bias=False),
        nn.GroupNorm(2, 4), nn.InstanceNorm1d(3), nn.InstanceNorm2d(3, affine=True), nn.BatchNorm2d(3),
        nn.LogSigmoid(), nn.Softsign(), nn.CELU(), nn.CELU(0.5), nn.Mish(), nn.Hardswish(), nn.Hardsigmoid(),
        nn.Hardtanh(), nn.Hardtanh(-2, 2), nn.GLU(), nn.Bilinear(2, 3, 4), nn.Bilinear(2, 2, 3, bias=False),
        nn.KLDivLoss(), nn.KLDivLoss(reduction="batchmean", log_target=True), nn.CosineSimilarity(),
        nn.PairwiseDistance(), nn.Softmin(1), nn.Softmin(), nn.Mish(inplace=True),
        nn.ModuleDict({"a": nn.ReLU(), "b": nn.Linear(2, 2)}), nn.ModuleDict())


@pytest.mark.parametrize("seed", [0, 5])
def test_init_and_repr_match_pytorch(seed):
    G.manual_seed(seed)
    torch.manual_seed(seed)
    g, t = _make_all(gnn), _make_all(torch.nn)
    assert repr(g) == repr(t)
    gp, tp = dict(g.named_parameters()), dict(t.named_parameters())
    assert list(gp) == list(tp)
    for name in tp:
        np.testing.assert_array_equal(gp[name].detach().numpy(), tp[name].detach().numpy(), err_msg=name)
    assert list(dict(g.named_buffers())) == list(dict(t.named_buffers()))


def _run_both(make, *shapes, train=True, steps=2):
    """Outputs, input gradients, parameter gradients and buffers of ``make(nn)`` over ``steps`` calls."""
    rng = np.random.default_rng(3)
    data = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    res = []
    for m, nn in ((G, gnn), (torch, torch.nn)):
        m.manual_seed(0)
        mod = make(nn)
        mod.train(train)
        outs = []
        for _ in range(steps):
            xs = [m.tensor(d, requires_grad=True) for d in data]
            y = mod(*xs)
            (y * m.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)).astype(np.float32))).sum().backward()
            outs.append((y, [x.grad for x in xs]))
        res.append((outs, dict(mod.named_parameters()), dict(mod.named_buffers())))
    (go, gp, gb), (to, tp, tb) = res
    for (gy, gg), (ty, tg) in zip(go, to):
        assert gy.grad_fn.name() == ty.grad_fn.name()
        _close(gy, ty)
        for a, b in zip(gg, tg):
            _close(a, b)
    for name in tp:
        _close(gp[name].grad, tp[name].grad)
    assert list(gb) == list(tb)
    for name in tb:
        if tb[name] is not None:
            _close(gb[name], tb[name])


@pytest.mark.parametrize("make, shapes, train", [
    (lambda nn: nn.LayerNorm((3, 4)), [(2, 3, 4)], True),
    (lambda nn: nn.GroupNorm(2, 6), [(3, 6, 4)], True),
    (lambda nn: nn.InstanceNorm1d(3), [(2, 3, 5)], True),
    (lambda nn: nn.InstanceNorm1d(3, affine=True, track_running_stats=True), [(2, 3, 5)], True),
    (lambda nn: nn.InstanceNorm1d(3, track_running_stats=True), [(3, 5)], True),
    (lambda nn: nn.InstanceNorm2d(2, affine=True), [(2, 2, 3, 3)], True),
    (lambda nn: nn.BatchNorm2d(3), [(4, 3, 2, 2)], True),
    (lambda nn: nn.BatchNorm2d(3, momentum=None), [(4, 3, 2, 2)], True),
    (lambda nn: nn.Bilinear(3, 2, 4), [(5, 3), (5, 2)], True),
    (lambda nn: nn.Hardtanh(-0.5, 0.7), [(3, 4)], True),
    (lambda nn: nn.Softmin(dim=0), [(3, 4)], True),
    (lambda nn: nn.CosineSimilarity(dim=0), [(3, 4), (3, 4)], True),
    (lambda nn: nn.PairwiseDistance(p=1.5, keepdim=True), [(3, 4), (3, 4)], True),
    (lambda nn: nn.Sequential(nn.GLU(0), nn.CELU(2.0), nn.Mish(), nn.Hardswish(), nn.LogSigmoid()), [(4, 3)], True),
], ids=["LayerNorm", "GroupNorm", "InstanceNorm1d", "InstanceNorm1d-running", "InstanceNorm1d-unbatched",
        "InstanceNorm2d", "BatchNorm2d", "BatchNorm2d-cumulative", "Bilinear", "Hardtanh", "Softmin",
        "CosineSimilarity", "PairwiseDistance", "activations"])
def test_modules_match_pytorch(make, shapes, train):
    _run_both(make, *shapes, train=train)


def test_eval_mode_running_statistics_match_pytorch():
    for make, shape in ((lambda nn: nn.BatchNorm2d(3), (4, 3, 2, 2)),
                        (lambda nn: nn.InstanceNorm1d(3, track_running_stats=True), (2, 3, 5))):
        _run_both(make, shape, train=True, steps=1)
        rng = np.random.default_rng(4)
        x = rng.standard_normal(shape).astype(np.float32)
        outs = []
        for m, nn in ((G, gnn), (torch, torch.nn)):
            mod = make(nn)
            mod(m.tensor(x))
            mod.eval()
            outs.append(mod(m.tensor(x * 2)))
        _close(outs[0], outs[1])


def test_instance_norm_num_features_mismatch_warns_as_pytorch():
    texts = []
    for m in (G, torch):
        with pytest.warns(UserWarning) as rec:
            m.nn.InstanceNorm1d(4)(m.ones(2, 3, 5))
        texts.append(str(rec[0].message))
    assert texts[0] == texts[1]


def test_kl_div_loss_module_matches_pytorch():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((2, 3, 4))
    for kw in ({}, {"reduction": "batchmean"}, {"reduction": "sum", "log_target": True}):
        got = gnn.KLDivLoss(**kw)(G.log_softmax(G.tensor(a), 1), G.log_softmax(G.tensor(b), 1)
                                  if kw.get("log_target") else G.softmax(G.tensor(b), 1))
        want = torch.nn.KLDivLoss(**kw)(torch.log_softmax(torch.tensor(a), 1), torch.log_softmax(torch.tensor(b), 1)
                                        if kw.get("log_target") else torch.softmax(torch.tensor(b), 1))
        _close(got, want, rtol=1e-12, atol=1e-12)


def test_module_dict_behaves_as_pytorch():
    res = []
    for nn in (gnn, torch.nn):
        d = nn.ModuleDict({"x": nn.ReLU()})
        d["y"] = nn.Linear(2, 2)
        d.update([("z", nn.Tanh())])
        popped = d.pop("x")
        res.append((list(d.keys()), len(d), "y" in d, "x" in d, list(d), type(popped).__name__,
                    [type(v).__name__ for v in d.values()], [k for k, _ in d.items()],
                    [n for n, _ in d.named_parameters()], repr(d)))
        d.clear()
        res[-1] += (len(d),)
    assert res[0] == res[1]


PROGRAM = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 6), nn.LayerNorm(6), nn.Mish(), nn.Linear(6, 3), nn.GELU())
heads = nn.ModuleDict({"bil": nn.Bilinear(3, 3, 2), "act": nn.Hardswish()})
print(model)
print(heads)
opt = torch.optim.Adam(list(model.parameters()) + list(heads.parameters()), lr=0.01)
x = torch.randn(5, 4)
target = torch.randn(5, 2)
for step in range(3):
    opt.zero_grad()
    h = F.normalize(model(x), dim=1)
    out = heads["act"](heads["bil"](h, h))
    loss = F.mse_loss(out, target) + nn.KLDivLoss(reduction="batchmean")(F.log_softmax(out, 1), F.softmax(target, 1))
    loss.backward()
    opt.step()
    print(step, loss)
print(model[1].weight)
print(heads["bil"].bias)
print(F.cosine_similarity(h, h.flip(0)), F.pairwise_distance(h, h.flip(0)))
print(nn.GroupNorm(1, 5)(h.unsqueeze(0)).grad_fn.name(), nn.CELU(0.5)(h).sum(), F.logsigmoid(h).mean(),
      F.softsign(h).sum())
print(nn.InstanceNorm1d(5)(h.unsqueeze(0)))
print(F.glu(h[:4], 0), "keys", list(heads.keys()), len(heads), "bil" in heads)
print(torch.pi, torch.e, torch.inf, torch.nan, torch.quantile(h, 0.25, dim=1), h.round(decimals=2))
print(torch.zeros(3).scatter_reduce(0, torch.tensor([0, 2, 0]), h[0, :3], "amax", include_self=False))

extra = nn.Sequential(nn.BatchNorm2d(2), nn.Hardtanh(-0.5, 0.5), nn.Hardsigmoid(), nn.InstanceNorm2d(2, affine=True),
                      nn.Softmin(dim=1))
img = torch.randn(2, 2, 3, 3, requires_grad=True)
y = extra(img)
z = y.masked_scatter(y > 0.2, torch.zeros(36)) + F.one_hot(torch.tensor([0, 1]), 2).view(2, 2, 1, 1)
hd = h.detach().requires_grad_()
total = (z * torch.randn(2, 2, 3, 3)).sum() + nn.CosineSimilarity(dim=0)(hd, hd.flip(1)).sum()
total = total + nn.PairwiseDistance(p=1.0)(hd, hd * 2).sum() + torch.nanquantile(hd, 0.6, dim=0).sum()
total.backward()
print(extra, y.grad_fn.name(), total)
print(img.grad.sum(dim=(2, 3)), hd.grad, extra[0].running_mean, extra[0].running_var)
'''


def test_training_program_prints_what_pytorch_prints(tmp_path, torch):
    want, got = python_and_gradcli_stdout(tmp_path, "nn_extra", PROGRAM)
    assert_printed_alike(got, want)  # float32 Linear and Adam steps: BLAS may change the last bits
    assert "LayerNorm((6,), eps=1e-05, elementwise_affine=True, bias=True)" in got
