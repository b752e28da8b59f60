"""The op × transform matrix: every op of the op table (tests/ops/opinfo.py) under every transform a user can
apply, run in gradcli and in PyTorch and compared (tests/ops/test_transform_matrix.py runs it).

A *cell* is one sample of one op under one transform. The transforms (:data:`TRANSFORMS`) are those of
``torch.autograd`` (backward, double backward, forward-mode AD, ``grad(..., is_grads_batched=True)``),
``torch.autograd.functional`` (jacobian and hessian with ``vectorize`` False and True, jvp, vjp, hvp, vhp) and
``torch.func`` (jacrev, jacfwd, hessian, grad, vjp, jvp, vmap over a leading batch dimension and over
``in_dims=1``). Each is written once for both libraries (``m`` is ``gradcli`` or ``torch``): the differentiated
function maps the sample's inputs that require grad to the op's output (the other inputs are constants), a
scalar function for the Hessians and ``grad`` is ``(f(x) * w).sum()`` with a fixed random ``w``, and the
vectors (cotangents, tangents) are random, drawn from the cell's id. Results are flattened (pytrees of tuples)
and compared in float64 at rtol 1e-7 (atol 1e-10); where PyTorch raises, gradcli must raise an exception of the
same type.

Nothing here lists ops: the rows come from the table, so a new op has its rows the moment it has an entry.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

import gradcli as G
from gradcli.api import autograd_functional as g_functional
from gradcli.api import forward_ad as g_forward_ad
from gradcli.api import func as g_func

import opinfo
from helpers import make_arrays, seed_of

RTOL, ATOL = 1e-7, 1e-10


@dataclass
class Lib:
    """One library's namespaces: gradcli's or torch's."""

    m: object
    functional: object
    func: object
    forward_ad: object

    @property
    def is_torch(self) -> bool:
        return self.m is not G


def libs(torch) -> tuple[Lib, Lib]:
    """(gradcli, torch)."""
    import torch.autograd.forward_ad as t_forward_ad
    import torch.autograd.functional as t_functional
    import torch.func as t_func

    return Lib(G, g_functional, g_func, g_forward_ad), Lib(torch, t_functional, t_func, t_forward_ad)


# ============================================================================================ transforms
@dataclass
class Call:
    """What a transform gets: the library, the function of the differentiated inputs ``f(*xs)``, its scalar
    form ``fs(*xs) = (f(*xs) * w).sum()``, the inputs (float64 leaves, detached), the cotangent ``v`` (output's
    shape), tangents ``u`` (one per input), two batches of cotangents ``vb`` (2 + output's shape), and the
    batched inputs for vmap (``xb0``: batch first; ``xb1``: batch in dim 1, None for a 0-d input)."""

    lib: Lib
    f: object
    fs: object
    xs: list
    v: object
    u: list
    vb: object
    xb0: list
    xb1: list


def _t(lib: Lib, a):
    return lib.m.tensor(np.array(a, dtype=np.float64))


def _req(c: Call):
    return [x.detach().requires_grad_(True) for x in c.xs]


def t_backward(c: Call):
    xs = _req(c)
    return c.lib.m.autograd.grad(c.f(*xs), xs, c.v, allow_unused=True)


def t_double_backward(c: Call):
    m = c.lib.m
    xs = _req(c)
    gs = m.autograd.grad(c.f(*xs), xs, c.v, create_graph=True, allow_unused=True)
    terms = [(g * u).sum() for g, u in zip(gs, c.u) if g is not None and g.requires_grad]
    if not terms:
        return [None] * len(xs)
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return m.autograd.grad(total, xs, allow_unused=True)


def t_forward_ad(c: Call):
    fw = c.lib.forward_ad
    with fw.dual_level():
        out = c.f(*[fw.make_dual(x, u) for x, u in zip(c.xs, c.u)])
        return fw.unpack_dual(out).tangent


def t_grads_batched(c: Call):
    xs = _req(c)
    return c.lib.m.autograd.grad(c.f(*xs), xs, c.vb, allow_unused=True, is_grads_batched=True)


def t_jacobian(c: Call):
    return c.lib.functional.jacobian(c.f, tuple(c.xs))


def t_jacobian_vectorize(c: Call):
    return c.lib.functional.jacobian(c.f, tuple(c.xs), vectorize=True)


def t_hessian(c: Call):
    return c.lib.functional.hessian(c.fs, tuple(c.xs))


def t_hessian_vectorize(c: Call):
    return c.lib.functional.hessian(c.fs, tuple(c.xs), vectorize=True)


def t_functional_jvp(c: Call):
    return c.lib.functional.jvp(c.f, tuple(c.xs), tuple(c.u))


def t_functional_vjp(c: Call):
    return c.lib.functional.vjp(c.f, tuple(c.xs), c.v)


def t_hvp(c: Call):
    return c.lib.functional.hvp(c.fs, tuple(c.xs), tuple(c.u))


def t_vhp(c: Call):
    return c.lib.functional.vhp(c.fs, tuple(c.xs), tuple(c.u))


def _argnums(c: Call):
    return tuple(range(len(c.xs)))


def t_jacrev(c: Call):
    return c.lib.func.jacrev(c.f, argnums=_argnums(c))(*c.xs)


def t_jacfwd(c: Call):
    return c.lib.func.jacfwd(c.f, argnums=_argnums(c))(*c.xs)


def t_func_hessian(c: Call):
    return c.lib.func.hessian(c.fs, argnums=_argnums(c))(*c.xs)


def t_func_grad(c: Call):
    return c.lib.func.grad(c.fs, argnums=_argnums(c))(*c.xs)


def t_func_vjp(c: Call):
    out, fn = c.lib.func.vjp(c.f, *c.xs)
    return out, fn(c.v)


def t_func_jvp(c: Call):
    return c.lib.func.jvp(c.f, tuple(c.xs), tuple(c.u))


def t_vmap(c: Call):
    return c.lib.func.vmap(c.f)(*c.xb0)


def t_vmap_in_dims_1(c: Call):
    dims = tuple(None if x is None else 1 for x in c.xb1)
    xs = [x0 if x is None else x for x, x0 in zip(c.xb1, c.xs)]
    return c.lib.func.vmap(c.f, in_dims=dims)(*xs)


#: The columns of the matrix: name -> transform(call) -> a pytree of Tensors (or None).
TRANSFORMS = {
    "backward": t_backward, "double_backward": t_double_backward, "forward_ad": t_forward_ad,
    "grads_batched": t_grads_batched,
    "jacobian": t_jacobian, "jacobian_vectorize": t_jacobian_vectorize,
    "hessian": t_hessian, "hessian_vectorize": t_hessian_vectorize,
    "functional_jvp": t_functional_jvp, "functional_vjp": t_functional_vjp, "hvp": t_hvp, "vhp": t_vhp,
    "jacrev": t_jacrev, "jacfwd": t_jacfwd, "func_hessian": t_func_hessian, "func_grad": t_func_grad,
    "func_vjp": t_func_vjp, "func_jvp": t_func_jvp, "vmap": t_vmap, "vmap_in_dims_1": t_vmap_in_dims_1,
}

def _stacked(m, outs):
    if isinstance(outs[0], (tuple, list)):
        return tuple(_stacked(m, [o[j] for o in outs]) for j in range(len(outs[0])))
    return m.stack(outs)


def r_vmap_per_example(c: Call):
    return _stacked(c.lib.m, [c.f(*[x[i] for x in c.xb0]) for i in range(c.xb0[0].shape[0])])


def r_vmap_in_dims_1_per_example(c: Call):
    n = next(x.shape[1] for x in c.xb1 if x is not None)
    return _stacked(c.lib.m, [c.f(*[x0 if x is None else x.select(1, i) for x, x0 in zip(c.xb1, c.xs)])
                              for i in range(n)])


def r_functional_jvp_tangent(c: Call):
    return t_functional_jvp(c)[1]


#: What a PYTORCH_WRONG entry may compare with besides the columns: PyTorch's per-example results stacked
#: (where its batching rule is wrong), the JVP of torch.autograd.functional.jvp (its double-backward trick) alone.
REFERENCES = {"vmap_per_example": r_vmap_per_example, "vmap_in_dims_1_per_example": r_vmap_in_dims_1_per_example,
              "functional_jvp_tangent": r_functional_jvp_tangent}

#: Transforms of a scalar function (fs): they need a differentiable output.
SECOND_ORDER = {"double_backward", "hessian", "hessian_vectorize", "hvp", "vhp", "func_hessian"}


# ============================================================================================ the rows
def _size(case) -> int:
    return sum(int(np.prod(a.shape)) for a in case.args)


def rows(long: bool = False) -> list:
    """``(op, sample, case)`` of the matrix: for every differentiable entry of the table (not random ones),
    one sample with an input that requires grad: the smallest of those whose differentiated inputs all have a
    dimension (vmap with ``in_dims=1`` needs one), else the smallest; with ``long``, every such sample."""
    out = []
    for op in opinfo.OP_DB:
        if not op.differentiable or op.family == "random":
            continue
        picked = [(op, s, c) for s in op.samples() for c in [op.case(s)] if any(a.differentiable for a in c.args)]
        if long or not picked:
            out.extend(picked)
            continue
        dims = [r for r in picked if all(len(a.shape) for a in r[2].args if a.differentiable)]
        out.append(min(dims or picked, key=lambda r: _size(r[2])))
    return out


def excluded_entries() -> dict:
    """Entries of the table without rows, with the reason."""
    out = {}
    for op in opinfo.OP_DB:
        if not op.differentiable:
            out[op.name] = "no derivative (compared by values in tests/ops/test_op_table.py)"
        elif op.family == "random":
            out[op.name] = "random: its values depend on the draw (tests/ops/test_random.py)"
    return out


# ============================================================================================ one cell
def _flatten(x) -> list:
    if isinstance(x, (tuple, list)):
        return [y for e in x for y in _flatten(e)]
    return [x]


def _np(t):
    if t is None:
        return None
    if isinstance(t, G.Tensor):
        return np.asarray(t.data)
    if hasattr(t, "_is_zerotensor") and t._is_zerotensor():
        return np.zeros(tuple(t.shape))
    return t.detach().numpy()


def _call(lib: Lib, case, arrays, name: str) -> Call:
    m = lib.m
    diff = [k for k, a in enumerate(case.args) if a.differentiable]
    consts = [None if a.differentiable else (m.tensor(arr) if a.is_float else m.tensor(arr))
              for a, arr in zip(case.args, arrays)]

    def full(xs):
        args = list(consts)
        for k, x in zip(diff, xs):
            args[k] = x
        return args

    def f(*xs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = case.fn(m, *full(xs))
        return out[0] if isinstance(out, tuple) else out  # (values, indices): the values

    rng = np.random.default_rng(seed_of(case.id + name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = case.fn(G, *[G.tensor(a) for a in arrays])
    out = out[0] if isinstance(out, tuple) else out
    shape = tuple(out.shape)
    w = _t(lib, rng.standard_normal(shape))

    def fs(*xs):
        return (f(*xs) * w).sum()

    xs = [_t(lib, arrays[k]) for k in diff]
    v = _t(lib, rng.standard_normal(shape))
    u = [_t(lib, rng.standard_normal(arrays[k].shape)) for k in diff]
    vb = _t(lib, rng.standard_normal((2,) + shape))
    second = make_arrays(case.args, case.id + "batch")
    xb0 = [_t(lib, np.stack([arrays[k], second[k]])) for k in diff]
    xb1 = [None if arrays[k].ndim == 0 else _t(lib, np.stack([arrays[k], second[k]], axis=1)) for k in diff]
    return Call(lib, f, fs, xs, v, u, vb, xb0, xb1)


def run_cell(libs_pair, case, name: str, torch_transform: str | None = None, gradcli_is_torch: bool = False,
             atol: float = ATOL):
    """Run transform ``name`` on ``case`` in both libraries; returns None when they agree (rtol :data:`RTOL`,
    ``atol``), else a short text of the difference. ``torch_transform``: compare with that transform of PyTorch
    instead (where PyTorch's own ``name`` is wrong); ``gradcli_is_torch``: run PyTorch on both sides (to compare
    two of its transforms)."""
    arrays = [np.asarray(a, dtype=np.float64) if a.dtype.kind == "f" else a
              for a in make_arrays(case.args, case.id)]
    results = []
    sides = ((libs_pair[1] if gradcli_is_torch else libs_pair[0], name),
             (libs_pair[1], torch_transform or name))
    for lib, transform in sides:
        lib.m.manual_seed(0)
        c = _call(lib, case, arrays, name)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = (TRANSFORMS[transform] if transform in TRANSFORMS else REFERENCES[transform])(c)
            results.append(("ok", [_np(t) for t in _flatten(res)]))
        except Exception as e:  # noqa: BLE001 - the error is the result compared
            results.append(("error", (type(e).__name__, str(e).splitlines()[0] if str(e) else "")))
    (kg, g), (kt, t) = results
    if kt == "error":
        if kg == "error" and g[0] == t[0]:
            return None
        return f"PyTorch raises {t[0]}: {t[1][:150]}; gradcli {'raises ' + g[0] + ': ' + g[1][:150] if kg == 'error' else 'answers'}"
    if kg == "error":
        return f"gradcli raises {g[0]}: {g[1][:200]}"
    if len(g) != len(t):
        return f"{len(g)} results, PyTorch {len(t)}"
    for k, (a, b) in enumerate(zip(g, t)):
        if a is None or b is None:
            other = b if a is None else a
            if other is not None and np.any(other):
                return f"result {k}: {'None' if a is None else 'values'} where PyTorch has {'None' if b is None else 'values'}"
            continue
        if a.shape != b.shape:
            return f"result {k}: shape {a.shape}, PyTorch {b.shape}"
        if not np.allclose(a, b, rtol=RTOL, atol=atol, equal_nan=True):
            err = np.max(np.abs(a - b))
            return f"result {k}: max abs difference {err:.3g}"
    return None


# ============================================================================================ central differences
#: The transforms :func:`numeric_cell` checks against central differences: the first-order reverse-mode ones.
NUMERIC = ("backward", "grads_batched", "jacobian", "jacobian_vectorize", "functional_vjp", "jacrev", "func_grad",
           "func_vjp")


def _central(fn, xs: list, eps: float = 1e-6):
    """``fn`` (float64 arrays -> an array) at ``xs`` and its derivative by central differences: per input a
    block of shape output + input."""
    out = fn(xs)
    blocks = []
    for k, x in enumerate(xs):
        cols = []
        for i in range(x.size):
            d = np.zeros(x.size)
            d[i] = eps
            d = d.reshape(x.shape)
            hi = fn([y + d if j == k else y for j, y in enumerate(xs)])
            lo = fn([y - d if j == k else y for j, y in enumerate(xs)])
            cols.append((hi - lo) / (2 * eps))
        blocks.append(np.stack(cols, axis=-1).reshape(out.shape + x.shape) if cols else np.zeros(out.shape + x.shape))
    return out, blocks


def numeric_cell(libs_pair, case, name: str, gradcli_is_torch: bool = False, tol: float = 1e-6):
    """Transform ``name`` (one of :data:`NUMERIC`) on ``case`` in gradcli (PyTorch with ``gradcli_is_torch``)
    against the same numbers from central differences of the library's forward in float64 (rtol and atol
    ``tol``): None when they agree, else a short text. For cells where no PyTorch transform gives the right
    numbers."""
    arrays = [np.asarray(a, dtype=np.float64) if a.dtype.kind == "f" else a
              for a in make_arrays(case.args, case.id)]
    lib = libs_pair[1] if gradcli_is_torch else libs_pair[0]
    lib.m.manual_seed(0)
    c = _call(lib, case, arrays, name)

    def value(f):
        return lambda vals: np.asarray(_np(f(*[_t(lib, v) for v in vals])), dtype=np.float64)

    xs = [np.asarray(_np(x), dtype=np.float64) for x in c.xs]
    out, jac = _central(value(c.f), xs)

    def vjp(v):
        return [np.tensordot(v, b, axes=v.ndim) for b in jac]

    v, vb = _np(c.v), _np(c.vb)
    want = {"backward": lambda: vjp(v),
            "grads_batched": lambda: [np.stack(r) for r in zip(*[vjp(b) for b in vb])],
            "jacobian": lambda: jac, "jacobian_vectorize": lambda: jac, "jacrev": lambda: jac,
            "functional_vjp": lambda: [out] + vjp(v), "func_vjp": lambda: [out] + vjp(v),
            "func_grad": lambda: _central(value(c.fs), xs)[1]}[name]()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = [_np(t) for t in _flatten(TRANSFORMS[name](c))]
    except Exception as e:  # noqa: BLE001 - the error is the result
        return f"raises {type(e).__name__}: {str(e)[:150]}"
    if len(got) != len(want):
        return f"{len(got)} results, central differences {len(want)}"
    for k, (a, b) in enumerate(zip(got, want)):
        a = np.zeros(b.shape) if a is None else a
        if a.shape != b.shape:
            return f"result {k}: shape {a.shape}, central differences {b.shape}"
        if not np.allclose(a, b, rtol=tol, atol=tol):
            return f"result {k}: max abs difference {np.max(np.abs(a - b)):.3g} from central differences"
    return None


# ============================================================================================ the CLI
def _literal(v) -> str | None:
    if isinstance(v, bool) or v is None:
        return repr(v)
    if isinstance(v, (int, float)):
        return repr(v) if np.isfinite(v) else None
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, (tuple, list)):
        items = [_literal(x) for x in v]
        if any(i is None for i in items):
            return None
        inner = ", ".join(items)
        return f"({inner},)" if isinstance(v, tuple) and len(items) == 1 else (
            f"({inner})" if isinstance(v, tuple) else f"[{inner}]")
    return None


def cli_text(op, sample, case) -> str | None:
    """The sample as a program of the CLI, ``torch.nn.functional.softmax(x0, dim=0)`` (inputs named x0, x1...),
    or None when it is not one call of the op's function on its inputs (all requiring grad) and plain values."""
    import torch

    from helpers import api

    if sample.call is not None or sample.method or sample.name in opinfo.OPERATORS or op.syntax or op.op:
        return None
    if not case.args or not all(a.differentiable for a in case.args):
        return None
    fn = api(torch, sample.name or op.name)
    if fn is getattr(torch.nn.functional, sample.name or op.name, None):
        path = "torch.nn.functional." + (sample.name or op.name)
    elif fn is getattr(torch, sample.name or op.name, None):
        path = "torch." + (sample.name or op.name)
    else:
        return None
    args = [f"x{k}" for k in range(len(case.args))]
    for v in sample.args:
        lit = _literal(v)
        if lit is None:
            return None
        args.append(lit)
    for k, v in sample.kwargs.items():
        lit = _literal(v)
        if lit is None:
            return None
        args.append(f"{k}={lit}")
    return f"{path}({', '.join(args)})"


def torch_program(torch, text: str):
    """The function of ``x0, x1, ...`` that the CLI program ``text`` (from :func:`cli_text`) computes, in torch.
    The text is one call built by :func:`cli_text` from the table's own values (no user input): it is resolved
    by name and its arguments parsed as Python literals, never evaluated."""
    import ast

    call = ast.parse(text, mode="eval").body
    target = torch
    for part in ast.unparse(call.func).split(".")[1:]:
        target = getattr(target, part)
    names = [a.id if isinstance(a, ast.Name) else None for a in call.args]
    values = [None if isinstance(a, ast.Name) else ast.literal_eval(a) for a in call.args]
    kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords}

    def f(*xs):
        args = [xs[int(n[1:])] if n else v for n, v in zip(names, values)]
        return target(*args, **kwargs)

    return f
