"""The generated programs of :mod:`test_programs` through the transforms: for each random program,
its Jacobian (reverse or forward mode, alternately), the Hessian and a Hessian-vector product of its sum, a
Jacobian-vector product, all computed as ``gradcli jacobian``/``hessian``/``jvp``/``hvp`` compute them
(:func:`gradcli.app.calculator.compute_transform`, in float64), and the program as a function mapped with
``torch.func.vmap`` inside a gradcli program, compared with PyTorch (torch.autograd.functional, torch.func.jvp,
torch.func.vmap; a loop over the batch where torch's vmap refuses an op).

Every template of the generator (every op it knows, in each of its forms) goes through all of that once, on the
leaves (test_each_template_transforms_match_torch), so that no op depends on the random draw to be covered;
the random programs then combine them: 200 by default (the hypothesis profile "transforms-ci", derandomized, so
a run is repeatable), 20,000 with ``GRADCLI_PROGRAMS=long`` ("transforms-long", fresh ones each run).
"""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradcli.engine.errors import EvalError
from gradcli.app.calculator import GradRequest, prepare, run_context, run_output
from gradcli.app.calculator import compute_transform
from test_programs import LEAVES, _applied, _leaf, _spec, _values, available_templates, programs

torch = pytest.importorskip("torch")

settings.register_profile("transforms-ci", max_examples=200, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("transforms-long", max_examples=20_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
PROFILE = "transforms-long" if os.environ.get("GRADCLI_PROGRAMS") == "long" else "transforms-ci"
NAMES = list(LEAVES)
COUNT = {"programs": 0}


def _torch_fn(steps, out):
    def f(*leaves):
        env = dict(zip(NAMES, leaves))
        for name, e in steps:
            env[name] = e.torch_fn(env)
        return out.torch_fn(env)

    return f


def _close(a, b, msg, rtol=1e-7, atol=1e-9):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), rtol=rtol,
                               atol=atol, equal_nan=True, err_msg=msg)


def _request(body: str, values, vectors=None) -> GradRequest:
    return GradRequest(program=body, inputs=[f"{n}={_spec(a)}" for n, a in values.items()], dtype="float64")


@settings(settings.get_profile(PROFILE))
@given(prog=programs(), seed=st.integers(0, 2**32 - 1))
def test_generated_programs_transforms_match_torch(prog, seed):
    COUNT["programs"] += 1
    _check_transforms(prog, seed)


def _on_leaves(tpl):
    """``tpl`` applied to the first leaves (in LEAVES' order) whose shapes it takes: a one-line program."""
    for names in itertools.product(LEAVES, repeat=tpl.arity):
        out = _applied(tpl, [_leaf(n) for n in names])
        if out is not None:
            return out
    raise AssertionError(f"the template of {tpl.op} applies to no leaves")


@pytest.mark.parametrize("k, tpl", list(enumerate(available_templates())),
                         ids=[f"{t.op}-{k}" for k, t in enumerate(available_templates())])
def test_each_template_transforms_match_torch(k, tpl):
    out = _on_leaves(tpl)
    _check_transforms((out.text, [], out, False), seed=k)


def _check_transforms(prog, seed):
    """The Jacobian, a JVP, the Hessian and an HVP of the sum, and vmap, of ``prog`` (``(source, steps,
    out, _)``: assignments, then the output line) with the leaves of ``_values(seed)``, against PyTorch."""
    source, steps, out, _ = prog
    lines = source.split("\n")[:-1]
    body = "\n".join(lines + [out.text])
    summed = "\n".join(lines + [f"({out.text}).sum()"])
    values = _values(seed)
    rng = np.random.default_rng(seed + 7)
    leaves = tuple(torch.tensor(values[n], dtype=torch.float64) for n in NAMES)
    f = _torch_fn(steps, out)
    with np.errstate(all="ignore"):
        t_out = f(*leaves)
    if not torch.isfinite(t_out).all():
        return  # overflow: not a comparison of derivatives
    msg = f"program:\n{body}"
    # the Jacobian, in either mode
    mode = "forward" if seed % 2 else "reverse"
    with np.errstate(all="ignore"):
        t_jac = torch.autograd.functional.jacobian(f, leaves)
        res = compute_transform(_request(body, values), "jacobian", mode, write=lambda s: None)
    assert res.mode == mode
    for n, tj in zip(NAMES, t_jac):
        _close(res.blocks[n], tj.numpy(), f"{msg}\njacobian ({mode}) d/d{n}")
    # a Jacobian-vector product (forward mode)
    tangents = {n: rng.standard_normal(np.shape(values[n])) for n in NAMES}
    with np.errstate(all="ignore"):
        _, t_jvp = torch.func.jvp(f, leaves, tuple(torch.tensor(tangents[n]) for n in NAMES))
        res = compute_transform(_request(body, values), "jvp", vectors=[f"{n}={_spec(tangents[n])}" for n in NAMES],
                                write=lambda s: None)
    _close(res.blocks[None], t_jvp.numpy(), f"{msg}\njvp")
    # the Hessian and a Hessian-vector product of the sum
    def g(*a):
        return f(*a).sum()

    with np.errstate(all="ignore"):
        try:
            t_h = torch.autograd.functional.hessian(g, leaves)
        except RuntimeError as e:  # an op without a second derivative in PyTorch (hardsigmoid): gradcli says so too
            with pytest.raises(EvalError) as raised:  # the error of the user's program, as the CLI reports it
                compute_transform(_request(summed, values), "hessian", write=lambda s: None)
            assert str(e).split("\n")[0] in str(raised.value), msg
            return
        res = compute_transform(_request(summed, values), "hessian", write=lambda s: None)
    for i, a in enumerate(NAMES):
        for j, b in enumerate(NAMES):
            _close(res.blocks[(a, b)], t_h[i][j].numpy(), f"{msg}\nhessian d2/d{a} d{b}", rtol=1e-6, atol=1e-8)
    vec = {n: rng.standard_normal(np.shape(values[n])) for n in NAMES}
    with np.errstate(all="ignore"):
        _, t_hvp = torch.autograd.functional.hvp(g, leaves, tuple(torch.tensor(vec[n]) for n in NAMES))
        res = compute_transform(_request(summed, values), "hvp", vectors=[f"{n}={_spec(vec[n])}" for n in NAMES],
                                write=lambda s: None)
    # PyTorch's hvp (the double-backward trick) and its Hessian times the vector can disagree about NaN at edge
    # points (logcumsumexp: NaN HVP, finite Hessian; the norm of a zero vector: NaN Hessian, zero HVP). There
    # gradcli must equal one of PyTorch's two answers; elsewhere its HVP must equal PyTorch's.
    for i, (n, th) in enumerate(zip(NAMES, t_hvp)):
        hv = np.asarray(sum(np.tensordot(t_h[i][j].numpy(), vec[b], axes=np.ndim(vec[b]))
                            for j, b in enumerate(NAMES)))
        if np.array_equal(np.isnan(hv), np.isnan(th.numpy())):
            _close(res.blocks[n], th.numpy(), f"{msg}\nhvp {n}", rtol=1e-6, atol=1e-8)
        else:
            try:
                _close(res.blocks[n], th.numpy(), f"{msg}\nhvp {n}", rtol=1e-6, atol=1e-8)
            except AssertionError:
                _close(res.blocks[n], hv, f"{msg}\nhvp {n} (PyTorch's Hessian times v)", rtol=1e-6, atol=1e-8)
    # vmap: x mapped along dim 0, z along dim 1, y and s not mapped
    xb = rng.uniform(-2, 2, (2, 3, 4))
    zb = rng.uniform(-2, 2, (3, 2, 1))
    # (not -1: torch 2.13 gives a garbage shape for a negative out_dims of an output that is not mapped)
    out_dim = int(seed % 2) if len(out.shape) else 0
    indented = "\n".join("    " + ln for ln in lines)
    program = (f"def f(x, y, z, s):\n{indented}\n    return {out.text}\n"
               f"torch.func.vmap(f, in_dims=(0, None, 1, None), out_dims={out_dim})(xb, y, zb, s)")
    t_args = (torch.tensor(xb), leaves[1], torch.tensor(zb), leaves[3])
    with np.errstate(all="ignore"):
        try:
            t_v = torch.func.vmap(f, in_dims=(0, None, 1, None), out_dims=out_dim)(*t_args)
        except (RuntimeError, ValueError, NotImplementedError):  # an op torch cannot batch: the loop it stands for
            t_v = torch.stack([f(t_args[0][k], t_args[1], t_args[2][:, k], t_args[3]) for k in range(2)], out_dim)
        req = GradRequest(program=program, consts=[f"xb={_spec(xb)}", f"zb={_spec(zb)}", f"y={_spec(values['y'])}",
                                                   f"s={_spec(values['s'])}"], dtype="float64")
        with run_context("float64"):
            interp, prog_, _ = prepare(req, lambda s: None, lambda s: None)
            got = run_output(interp, prog_)
    assert tuple(got.shape) == tuple(t_v.shape), msg
    _close(got.data, t_v.numpy(), f"{msg}\nvmap")


def test_the_profile_s_programs_ran():
    if COUNT["programs"] == 0:
        pytest.skip("run with the generated-programs test")
    assert COUNT["programs"] >= settings.get_profile(PROFILE).max_examples
