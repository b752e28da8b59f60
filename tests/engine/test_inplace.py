"""In-place operations (``t += v``, ``add_``/``sub_``/``mul_``/``div_``/``pow_``/``clamp_``/``fill_``/``zero_``/
``copy_``, ``t[key] = v``) and the version counter, against PyTorch.

Most cases are programs run by ``gradcli run`` and by Python with torch on the same text: stdout must be equal,
and an error must have the same type and message.
"""

from __future__ import annotations

import contextlib
import io
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import gradcli as G
from gradcli.frontends.cli import app

from helpers import ROOT
runner = CliRunner()
HEX = re.compile(r"0x[0-9a-f]+")


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _gradcli(tmp_path, program: str):
    src = tmp_path / "prog.py"
    src.write_text("import torch\n" + program)
    r = runner.invoke(app, ["run", str(src)])
    error = None
    if r.exit_code != 0:
        m = re.search(r"^(\w+): (.*)$", r.stderr, re.M)
        assert m, r.stderr
        error = (m.group(1), m.group(2))
    return r.stdout, error


def _torch(torch, program: str):
    out = io.StringIO()
    error = None
    with contextlib.redirect_stdout(out):
        try:
            exec(compile("import torch\n" + program, "prog.py", "exec"), {})  # the oracle's run of the program
        except Exception as e:  # noqa: BLE001 - the error is compared
            error = (type(e).__name__, str(e))
    return out.getvalue(), error


def _same(tmp_path, torch, program: str):
    program = textwrap.dedent(program)
    got, want = _gradcli(tmp_path, program), _torch(torch, program)
    assert (HEX.sub("0x", got[0]), got[1]) == (HEX.sub("0x", want[0]), want[1])
    assert got[1] == want[1]
    return got


SGD = """
w = torch.tensor([1., 2.], requires_grad=True)
for i in range(3):
    loss = (w * w).sum()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    w.grad.zero_()
print(w)
print(w.grad, w.is_leaf, w.requires_grad)
"""

PROGRAMS = {
    "sgd": SGD,
    "alias": """
        x = torch.zeros(3)
        y = x
        y += 1
        print(x, y)
    """,
    "view_and_base": """
        x = torch.zeros(3)
        v = x[0:2]
        v += 5
        print(x)
        x *= 2
        print(v)
        x[2] = 7
        print(x, v)
        m = torch.arange(6.).reshape(2, 3)
        c = m.t()
        c[0] -= 10
        print(m)
        r = m.view(6)
        r.mul_(-1)
        print(m)
        s = m[1]
        s.zero_()
        print(m)
        m[:, 0] = torch.tensor([4., 5.])
        m[0] += torch.tensor([1., 1., 1.])
        print(m, r)
    """,
    "methods": """
        t = torch.tensor([1., -2., 3.])
        print(t.add_(1), t.sub_(torch.tensor([1., 1., 1.]), alpha=2), t.mul_(3), t.div_(2))
        print(t.clamp_(-2, 1), t.clip_(min=0), t.fill_(2.5), t.pow_(2), t.zero_(), t.copy_(torch.tensor([7., 8., 9.])))
        print(t.div_(torch.tensor([2., 3., 4.]), rounding_mode="floor"), t.fill_(torch.tensor(4.)))
        d = torch.zeros(2, 3, dtype=torch.float64)
        d.copy_(torch.tensor([1, 2, 3]))
        print(d)
    """,
    "augmented_operators": """
        t = torch.tensor([7., -7., 2.5])
        t += 1
        t -= 2
        t *= torch.tensor([1., 2., 3.])
        t /= 2
        t **= 2
        print(t)
        i = torch.tensor([6, 3, -5])
        j = i
        i += 1
        i -= torch.tensor([1, 1, 1])
        i *= 2
        i **= 2
        print(i, j, i.dtype)
        b = torch.tensor([True, False])
        b += True
        print(b)
        m = torch.ones(2, 2)
        k = m
        m @= torch.ones(2, 2) * 2
        print(m, k)
    """,
    "dtypes": """
        h = torch.ones(2, dtype=torch.float16)
        h += torch.tensor([1 / 3, 1 / 3], dtype=torch.float64)
        print(h)
        f = torch.ones(2)
        f += torch.tensor([0.1, 0.1], dtype=torch.float64)
        print(f)
        i = torch.tensor([1, 5, 9])
        i.fill_(2.7)
        print(i)
        i.copy_(torch.tensor([1.7, -2.2, 3.9]))
        print(i)
        i.clamp_(0, 2)
        print(i)
    """,
    "zero_dim_and_broadcast": """
        s = torch.tensor(2.)
        s *= 3
        s += torch.tensor(1.)
        print(s)
        t = torch.zeros(2, 3)
        t += torch.tensor([1., 2., 3.])
        t -= torch.tensor([[1.], [2.]])
        print(t)
    """,
    "python_values_unchanged": """
        n = 1
        n += 2
        l = [1]
        l += [2]
        s = "a"
        s += "b"
        u = 2
        u += torch.tensor([1., 2.])
        print(n, l, s, u)
    """,
    "recorded": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        b = torch.tensor([0.5, -1., 2.], requires_grad=True)
        y = x * 2
        y += b
        print(y, y.grad_fn.name(), y.is_leaf)
        y *= b
        print(y.grad_fn, y.grad_fn.next_functions[0][0].name())
        y /= torch.tensor([2., 4., 8.])
        y -= 1
        y **= 2
        y.clamp_(0, 3)
        y.sub_(b, alpha=0.5)
        print(y)
        y.sum().backward()
        print(x.grad, b.grad)
    """,
    "recorded_grad_fn_names": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        for f in ["add", "sub", "mul", "div", "pow", "clamp", "clampt", "fill", "fillt", "zero", "copy"]:
            y = x * 1
            if f == "add":
                y.add_(1)
            elif f == "sub":
                y.sub_(torch.ones(3))
            elif f == "mul":
                y.mul_(2)
            elif f == "div":
                y.div_(2)
            elif f == "pow":
                y.pow_(2)
            elif f == "clamp":
                y.clamp_(max=2)
            elif f == "clampt":
                y.clamp_(min=torch.zeros(3))
            elif f == "fill":
                y.fill_(1)
            elif f == "fillt":
                y.fill_(torch.tensor(3., requires_grad=True))
            elif f == "zero":
                y.zero_()
            else:
                y.copy_(torch.tensor([1., 2., 3.], dtype=torch.float64, requires_grad=True))
            print(f, y.grad_fn.name() if f != "copy" else y.grad_fn, y)
            y.sum().backward()
            print(x.grad)
            x.grad = None
    """,
    "recorded_from_constant": """
        w = torch.tensor([1., 2.], requires_grad=True)
        t = torch.zeros(2)
        t += w * 3
        print(t, t.requires_grad, t.is_leaf)
        src = torch.tensor([2., 3.], dtype=torch.float64, requires_grad=True)
        u = torch.ones(2, 2)
        u.copy_(src)
        (t.sum() + (u * u).sum()).backward()
        print(w.grad, src.grad, src.grad.dtype)
        v = torch.tensor(1.5, requires_grad=True)
        f = torch.ones(3)
        f.fill_(v)
        (f * torch.tensor([1., 2., 3.])).sum().backward()
        print(v.grad)
    """,
    "recorded_mul_uses_old_values": """
        x = torch.ones(2, requires_grad=True)
        a = x * 3
        b = torch.full((2,), 2., requires_grad=True)
        a.mul_(b)
        a.sum().backward()
        print(x.grad, b.grad, a.grad_fn.next_functions)
    """,
    "retain_grad_follows": """
        x = torch.ones(3, requires_grad=True)
        y = x * 1
        y.retain_grad()
        y += 1
        (y * 2).sum().backward()
        print(y.grad, x.grad)
    """,
    "no_grad_keeps_history_and_leaf": """
        x = torch.tensor([1., 2.], requires_grad=True)
        y = x * 2
        with torch.no_grad():
            y += 1
            x.add_(1)
        print(y, x, x.is_leaf)
        y.sum().backward()
        print(x.grad)
    """,
    "split_no_grad_allowed": """
        s = torch.ones(4, requires_grad=True) * 1
        a, b = s.split(2)
        with torch.no_grad():
            b.mul_(2)
        print(s)
        p, q = torch.ones(4).split(2)
        p += 1
        print(p)
    """,
    "error_leaf": """
        l = torch.ones(3, requires_grad=True)
        l += 1
    """,
    "error_leaf_method": """
        l = torch.ones(3, requires_grad=True)
        l.mul_(torch.ones(2, 3))
    """,
    "error_leaf_zero": """
        l = torch.ones(3, requires_grad=True)
        l.zero_()
    """,
    "error_view_of_leaf": """
        l = torch.ones(2, 3, requires_grad=True)
        l[0] += 1
    """,
    "error_view_of_leaf_t": """
        l = torch.ones(2, 3, requires_grad=True)
        v = l.t()[1:]
        v.mul_(2)
    """,
    "view_of_leaf_no_grad": """
        l = torch.ones(2, 3, requires_grad=True)
        with torch.no_grad():
            l[0] += 1
            l[:, 1] *= torch.tensor([2., 3.])
            l.data[1, 2] = 7.
        print(l, l.is_leaf)
        w = torch.tensor([1., 2.], requires_grad=True)
        (w * w).sum().backward()
        w.data -= 0.5 * w.grad
        print(w, w.grad)
    """,
    "error_leaf_setitem": """
        l = torch.ones(3, requires_grad=True)
        l[0] = 2.
    """,
    "error_cast": """
        t = torch.tensor([1, 2, 3])
        t += 1.5
    """,
    "error_cast_div": """
        t = torch.tensor([1, 2, 3])
        t /= 2
    """,
    "error_cast_bool": """
        b = torch.tensor([True, False])
        b += 1
    """,
    "error_cast_tensor": """
        t = torch.ones(3, dtype=torch.int64)
        t.mul_(torch.tensor(2.0))
    """,
    "error_cast_clamp": """
        t = torch.tensor([1, 5, 9])
        t.clamp_(2, 6.5)
    """,
    "error_cast_clamp_int32": """
        t = torch.tensor([1, 5, 9], dtype=torch.int32)
        t.clamp_(2, 6.5)
    """,
    "error_shape": """
        t = torch.zeros(3)
        t += torch.ones(2, 3)
    """,
    "error_shape_before_cast": """
        t = torch.ones(3, dtype=torch.int64)
        t += torch.ones(2, 3) * 1.5
    """,
    "error_shape_0d": """
        t = torch.tensor(2.)
        t *= torch.tensor([3.])
    """,
    "error_shape_copy": """
        t = torch.ones(3)
        t.copy_(torch.ones(2, 3))
    """,
    "error_broadcast": """
        t = torch.ones(3)
        t += torch.ones(2)
    """,
    "error_expanded": """
        t = torch.zeros(1, 3).expand(2, 3)
        t += 1
    """,
    "error_expanded_first": """
        t = torch.ones(1, 3, dtype=torch.int64).expand(2, 3)
        t += 1.5
    """,
    "error_fill_dim": """
        torch.ones(3).fill_(torch.tensor([1.]))
    """,
    "error_split": """
        s = torch.ones(4, requires_grad=True) * 1
        a, b = s.split(2)
        b += 1
    """,
    "error_split_sizes": """
        s = torch.ones(4, requires_grad=True) * 1
        a, b = s.split([1, 3])
        a.mul_(2)
    """,
    "error_unbind": """
        s = torch.ones(2, 2, requires_grad=True) * 1
        a, b = s.unbind(0)
        b.zero_()
    """,
    "error_chunk": """
        s = torch.ones(4, requires_grad=True) * 1
        a, b = s.chunk(2)
        a -= 1
    """,
    "error_version_input": """
        x = torch.ones(2, requires_grad=True)
        y = x * 1
        z = y * y
        y += 1
        print(y)
        z.sum().backward()
    """,
    "error_version_result": """
        x = torch.ones(2, requires_grad=True)
        y = x.exp()
        y += 1
        y.add_(1)
        y.sum().backward()
    """,
    "error_version_leaf": """
        x = torch.ones(2, 3, requires_grad=True)
        z = (x * x).sum()
        with torch.no_grad():
            x += 1
        z.backward()
    """,
    "error_version_constant": """
        x = torch.ones(2, requires_grad=True)
        y = torch.ones(2)
        z = (x * y).sum()
        y += 1
        z.backward()
    """,
    "error_version_double_0d": """
        x = torch.ones((), dtype=torch.float64, requires_grad=True)
        y = x.clamp(0, 2)
        z = y * y
        y.mul_(2)
        z.backward()
    """,
    "error_version_self_operand": """
        x = torch.tensor([2., 3.], requires_grad=True)
        a = x * 1
        a.mul_(a)
        a.sum().backward()
    """,
    "error_version_after_retain_graph": """
        x = torch.ones(2, requires_grad=True)
        y = x * 2
        z = (y * y).sum()
        z.backward(retain_graph=True)
        print(x.grad)
        with torch.no_grad():
            y += 1
        z.backward()
    """,
    "error_version_autograd_grad": """
        x = torch.ones(2, requires_grad=True)
        y = x.sigmoid()
        v = y.detach()
        v.zero_()
        print(y)
        torch.autograd.grad(y.sum(), [x])
    """,
    "error_version_saved_result_in_loop": """
        w = torch.tensor([0.5, 0.4], requires_grad=True)
        b = torch.tensor([0.1, 0.2], requires_grad=True)
        h = torch.ones(2)
        for i in range(3):
            h = torch.tanh(h * w)
            h += b
        print(h)
        h.sum().backward()
    """,
    "version_unaffected_nodes_run": """
        x = torch.ones(2, requires_grad=True)
        y = x * 2
        z = y.sum()
        y *= 3
        z.backward()
        print(x.grad, y)
        (y * 1).sum().backward()
        print(x.grad)
    """,
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_like_torch(tmp_path, torch, name):
    _same(tmp_path, torch, PROGRAMS[name])


def test_sgd_loop_output(tmp_path, torch):
    out, err = _same(tmp_path, torch, SGD)
    assert err is None
    assert out.splitlines()[0] == "tensor([0.5120, 1.0240], requires_grad=True)"


def test_example_program_matches_torch(torch):
    path = ROOT / "examples" / "sgd_inplace.py"
    r = runner.invoke(app, ["run", str(path)])
    assert r.exit_code == 0, r.output
    assert r.stdout == _torch(torch, path.read_text().replace("import torch\n", "", 1))[0]


# ------------------------------------------------------------------ in place on views and on their bases
# PyTorch records an in-place operation on a view as CopySlices on the base and regenerates the history of
# every view of it (AsStridedBackward0); an in-place operation on a base regenerates its views' too. Values,
# grad_fn names, versions, gradients and error messages are compared with PyTorch's.
VIEW_PROGRAMS = {
    "slice-of-constant-plus-grad": """
        x = torch.zeros(3)
        w = torch.tensor([1., 2.], requires_grad=True)
        v = x[0:2]
        v += w * w
        print(x, v, x.grad_fn, v.grad_fn, x._version, v._version, v._base is x)
        x.sum().backward()
        print(w.grad)
    """,
    "base-modified-view-regenerated": """
        x = torch.zeros(3)
        w = torch.tensor([1., 2., 3.], requires_grad=True)
        v = x[0:2]
        x += w
        print(x, v, x.grad_fn, v.grad_fn)
        (v * torch.tensor([5., 7.])).sum().backward()
        print(w.grad)
    """,
    "base-mul-view-used-after": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        y = x * 2
        v = y[0:2]
        y *= 3
        print(y, v, v.grad_fn, y.grad_fn)
        (v * v).sum().backward()
        print(x.grad)
    """,
    "view-method-mul": """
        a = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        x = a.clone()
        v = x.view(4)
        v.mul_(torch.tensor([1., 2., 3., 4.]))
        print(x, v.grad_fn, x.grad_fn, x.grad_fn.next_functions[0])
        (x * x).sum().backward()
        print(a.grad)
    """,
    "select-mul": """
        a = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        x = a.clone()
        v = x[0]
        w = x.t()
        v.mul_(2)
        print(v.grad_fn, x.grad_fn, w.grad_fn, x._version, v._version, w._version)
        (x.sum() + (w * w).sum()).backward()
        print(a.grad)
    """,
    "transpose-add": """
        a = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        b = torch.tensor([[0.5, -1.], [2., 3.]], requires_grad=True)
        x = a * 1
        t = x.t()
        t.add_(b * b)
        print(x, t, t.grad_fn, x.grad_fn)
        (x * torch.tensor([[1., 2.], [3., 4.]])).sum().backward()
        print(a.grad, b.grad)
    """,
    "unsqueeze-mul-then-base-backward": """
        a = torch.tensor([1., -2., 3.], requires_grad=True)
        x = a.exp()
        u = x.unsqueeze(0)
        u.mul_(a)
        print(x, u.grad_fn, x.grad_fn)
        x.sum().backward()
        print(a.grad)
    """,
    "view-of-view": """
        a = torch.arange(6.).requires_grad_()
        x = a * 1
        v = x.view(2, 3)[1]
        v.add_(10)
        v.mul_(a[0:3] + 1)
        print(x, v._base is x, x.grad_fn, v.grad_fn, x._version)
        (x * x).sum().backward()
        print(a.grad)
    """,
    "unrelated-view-regenerated": """
        a = torch.arange(4.).requires_grad_()
        x = a * 2
        first = x[0:2]
        second = x[2:4]
        second.mul_(3)
        print(first.grad_fn, second.grad_fn)
        (first * first).sum().backward()
        print(a.grad)
    """,
    "setitem-into-view": """
        a = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        x = a * 1
        v = x[1]
        v[0] = a[0, 0] * 5
        print(x, x.grad_fn, v.grad_fn)
        x.sum().backward()
        print(a.grad)
    """,
    "detached-alias": """
        x = torch.ones(3, requires_grad=True)
        y = x * 2
        d = y.detach()
        y.mul_(2)
        print(y, d, d._version, y._version)
        y.sum().backward()
        print(x.grad)
    """,
    "error-view-of-leaf": """
        w = torch.ones(3, requires_grad=True)
        v = w[0:2]
        v.mul_(2)
    """,
    "error-view-of-leaf-transpose": """
        w = torch.ones(2, 2, requires_grad=True)
        w.t().add_(1)
    """,
    "error-saved-base-modified-through-view": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        y = x.exp()
        v = y[0:2]
        with torch.no_grad():
            v.mul_(2)
        y.sum().backward()
    """,
    "error-saved-view-modified-through-base": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        y = x * 1
        v = y.unsqueeze(0)
        z = (v * v).sum()
        y.add_(1)
        z.backward()
    """,
    "error-saved-input-modified-through-view": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        y = x * 1
        z = y.sin()
        y.view(3)[1:].mul_(2)
        z.sum().backward()
    """,
}


@pytest.mark.parametrize("name", sorted(VIEW_PROGRAMS))
def test_inplace_on_views_like_torch(tmp_path, torch, name):
    _same(tmp_path, torch, VIEW_PROGRAMS[name])


def test_view_base_metadata_like_torch(torch):
    res = []
    for m in (G, torch):
        x = m.zeros(2, 3)
        views = [x.view(6), x[0], x[:, 1], x.t(), x.unsqueeze(0), x.view(6).view(3, 2), x.expand(2, 2, 3),
                 x.permute(1, 0), x.transpose(0, 1), x[0].unsqueeze(1), x.squeeze(), x.reshape(6)]
        copies = [x.detach(), x.clone(), x + 0, x.t().reshape(6), x.contiguous()]
        res.append(([v._base is x for v in views], [c._base is None for c in copies], x._base is None,
                    [v._is_view() for v in views]))
    assert res[0] == res[1]


RECORDED_ASSIGNMENTS = {  # t[key] = v recorded as PyTorch's CopySlices: values, grad_fn and gradients
    "number-into-non-leaf": """
        x = torch.ones(3, requires_grad=True)
        z = x * 3
        z[0] = 0
        print(z)
        (z * z).sum().backward()
        print(x.grad)
    """,
    "tensor-requiring-grad-into-constant": """
        x = torch.zeros(3)
        w = torch.tensor(2., requires_grad=True)
        x[1] = w * w
        print(x, x.grad_fn)
        x.sum().backward()
        print(w.grad)
    """,
    "broadcast-value": """
        x = torch.arange(6.).view(2, 3).requires_grad_()
        v = torch.tensor([1., 2., 3.], requires_grad=True)
        z = x * 1
        z[0:2] = v
        print(z)
        (z * torch.arange(6.).view(2, 3)).sum().backward()
        print(x.grad, v.grad)
    """,
    "advanced-index-and-mask": """
        x = torch.tensor([1., 2., 3., 4.], requires_grad=True)
        z = x * 2
        z[torch.tensor([0, 2])] = torch.tensor([10., 20.])
        z[z > 7] = 0.5
        print(z)
        (z * z).sum().backward()
        print(x.grad)
    """,
    "float64-value-into-float32": """
        x = torch.ones(2, requires_grad=True)
        v = torch.tensor(3., dtype=torch.float64, requires_grad=True)
        z = x + 0
        z[1] = v
        print(z.dtype, z)
        (z * 2).sum().backward()
        print(x.grad, v.grad, v.grad.dtype)
    """,
    "double-backward": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        z = x * x
        z[1] = x[0] ** 3
        g, = torch.autograd.grad(z.sum(), x, create_graph=True)
        print(g)
        g.sum().backward()
        print(x.grad)
    """,
    "saved-value-modified": """
        x = torch.tensor([1., 2.], requires_grad=True)
        y = x * 2
        s = y * y
        y[0] = 0
        s.sum().backward()
    """,
    "split-output-select": """
        x = torch.arange(4.).requires_grad_()
        a, b = (x * 1).split(2)
        a[0] = 5
    """,
    "split-output-slice": "x = torch.arange(4.).requires_grad_()\na, b = (x * 1).split(2)\na[0:1] = 5\n",
    "split-output-whole": "x = torch.arange(4.).requires_grad_()\na, b = (x * 1).split(2)\na[:] = 5\n",
    "split-output-index": "x = torch.arange(4.).requires_grad_()\na, b = (x * 1).split(2)\na[a > 0] = 5\n",
    "whole-number-is-fill": """
        x = torch.ones(2, 3, requires_grad=True)
        z = x * 1
        z[:, 0:3] = 2
        print(z.grad_fn)
        w = torch.tensor(3., requires_grad=True)
        z[...] = w
        print(z.grad_fn)
        z.sum().backward()
        print(x.grad, w.grad)
    """,
    "whole-tensor-is-copy": """
        x = torch.ones(3, requires_grad=True)
        z = x * 1
        v = torch.tensor([1., 2., 3.], requires_grad=True)
        z[-5:] = v * 2
        print(z)
        (z * z).sum().backward()
        print(x.grad, v.grad)
    """,
    "mixed-basic-and-advanced": """
        x = torch.ones(3, 4, requires_grad=True)
        z = x * 2
        z[0, [1, 2]] = torch.tensor([5., 6.])
        z[torch.tensor(1)] = 0
        z[None] = z.detach() + 1
        print(z)
        (z * z).sum().backward()
        print(x.grad)
    """,
    "leaf-errors": "w = torch.ones(3, requires_grad=True)\nw[w > 0] = 0\n",
    "leaf-view-error": "w = torch.ones(3, requires_grad=True)\nw[0] = 0\n",
    "version-after-index-put": """
        x = torch.tensor([1., 2.], requires_grad=True)
        y = x * 2
        s = y.exp()
        s[torch.tensor([0])] = 1
        t = s * s
        s[torch.tensor([1])] = 1
        t.sum().backward()
    """,
}


@pytest.mark.parametrize("program", RECORDED_ASSIGNMENTS.values(), ids=RECORDED_ASSIGNMENTS.keys())
def test_recorded_assignment_is_copy_slices_like_torch(tmp_path, torch, program):
    _same(tmp_path, torch, program)


def test_recorded_assignment_gradcheck():
    from helpers import gradcheck, gradgradcheck

    def f(x, v):
        z = x * x
        z[1:, 0] = v * 2
        z[G.tensor([0])] = x[2] * v.sum()
        return z

    x = G.tensor(np.random.default_rng(0).uniform(-1, 1, (3, 2)), requires_grad=True)
    v = G.tensor(np.random.default_rng(1).uniform(-1, 1, (2,)), requires_grad=True)
    assert gradcheck(f, (x, v))
    assert gradgradcheck(f, (x, v))


def test_views_of_unreferenced_temporaries_are_not_shared(torch):
    # a view whose base no other tensor holds (the transpose of a fresh tensor) can be recorded like any tensor
    res = []
    for m in (G, torch):
        w = m.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        t = m.zeros(2, 2).t()
        t += w * w
        t.sum().backward()
        res.append((w.grad.tolist(), t.tolist()))
    assert res[0] == res[1]


# ------------------------------------------------------------------------------ the library and the counter
def test_version_counter_like_torch(torch):
    res = []
    for m in (G, torch):
        x = m.zeros(3)
        v = x[0:2]
        out = [x._version]
        v += 1
        out += [x._version, v._version]
        x.mul_(2)
        with m.no_grad():
            x.zero_()
        out += [x._version, v._version, (x + 1)._version]
        res.append(out)
    assert res[0] == res[1]


def test_python_inplace_operators_like_torch(torch):
    res = []
    for m in (G, torch):
        t = m.tensor([7., -7., 2.5])
        same = t
        t += 1
        t -= 2
        t *= m.tensor([1., 2., 3.])
        t /= 2
        t **= 2
        t %= 5
        t //= 0.5
        i = m.tensor([6, 3, -5])
        j = i
        i += 1
        i %= 7
        i //= 2
        i &= 3
        i |= 8
        i ^= 1
        res.append((t.tolist(), same is t, i.tolist(), j is i))
    assert res[0] == res[1]


def test_inplace_keeps_identity_and_aliases():
    w = G.tensor([1., 2.], requires_grad=True)
    data = w.data
    g = None
    for _ in range(2):
        (w * w).sum().backward()
        if g is None:
            g = w.grad
        with G.no_grad():
            w -= 0.1 * w.grad
        w.grad.zero_()
    assert w.grad is g and w.data is data and w.is_leaf and w.requires_grad


def test_no_check_cost_until_an_inplace_write(monkeypatch):
    # backward checks saved values only once a buffer was modified in place (benchmarks rely on it)
    from gradcli.engine import autograd, versions
    from gradcli.ops.shape import inplace

    assert autograd.saved_check is inplace.check_saved  # installed by the in-place ops
    calls = []
    monkeypatch.setattr(autograd, "saved_check", lambda roots: calls.append(roots))
    saved = dict(versions.modified)
    versions.modified.clear()
    try:
        x = G.ones(3, requires_grad=True)
        (x * x).sum().backward()
        assert calls == [] and not versions.modified
        y = G.ones(3)
        y += 1
        assert versions.modified
        (x * x).sum().backward()
        assert len(calls) == 1
    finally:
        versions.modified.clear()
        versions.modified.update(saved)


def test_gradcheck_through_recorded_inplace():
    from helpers import gradcheck

    def fn(x, b):
        y = x * 1.5
        y *= b
        y += x
        y /= b + 3
        y.clamp_(-1, 1)
        return y

    rng = np.random.default_rng(0)
    x = G.tensor(rng.uniform(-0.5, 0.5, (3, 2)), dtype=G.float64, requires_grad=True)
    b = G.tensor(rng.uniform(0.5, 1.0, (2,)), dtype=G.float64, requires_grad=True)
    assert gradcheck(fn, (x, b))


def test_cli_program_sees_the_error_position(tmp_path):
    src = tmp_path / "p.py"
    src.write_text("import torch\nt = torch.tensor([1, 2])\nt += 0.5\n")
    r = runner.invoke(app, ["run", str(src)])
    assert r.exit_code == 1
    assert "p.py:3:1" in r.stderr and "t += 0.5" in r.stderr


def test_every_augmented_operator_of_python(tmp_path, torch):
    """``//= %= &= |= ^=`` as well as the arithmetic ones: in place on tensors (aliases see it), ordinary
    rebinding on Python numbers; the same output as Python with torch."""
    _same(tmp_path, torch, (ROOT / "tests" / "data" / "augmented_ops.py").read_text()
          .replace("import torch\n", "", 1))


def test_grad_fn_name_of_pytorch_cpp_functions(tmp_path, torch):
    """``name()`` of CopySlices, CopyBackwards and AccumulateGrad is namespaced in PyTorch; their repr is not."""
    _same(tmp_path, torch, """
x = torch.ones(2, requires_grad=True)
y = x * 1
y[0] = 0
print(y.grad_fn.name(), y.grad_fn, y.grad_fn.next_functions[0][0].name())
z = torch.zeros(2)
z.copy_(x)
print(z.grad_fn.name(), z)
print(x.sum().grad_fn.next_functions[0][0].name())
""")
