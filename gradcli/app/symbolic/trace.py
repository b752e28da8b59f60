"""Tracing a program into formulas: run it through gradcli's engine as usual while a profile function notes
every op application (the op, its arguments, its output) and the constructs that have no closed form; then
build each tensor's formula from the ops' symbolic rules and run the rules' VJPs backward, symbolically.

The profile function (:func:`sys.setprofile`, as :mod:`gradcli.app.recording` uses for graph values) sees:

* the return of the op table's apply functions (``o``, ``args`` and the output tensor): one op application;
* the call and return of a composite that declares a symbolic rule (``logdet``, ``cross_entropy``): its rule
  replaces those of the ops it calls (its output's formula is the composite's);
* a tensor's truth value or number taken by the program (``if``/``while`` on a tensor computed from an input),
  an in-place update (the one entry of :mod:`gradcli.ops.shape.inplace`), and random numbers: no formula then,
  with the reason and the program position.
"""

from __future__ import annotations

import inspect
import sys

import numpy as np

from ...engine.tensor import Tensor
from ...ops.core import apply as _apply_module
from ...ops.core.declare import REGISTRY
from ...ops.shape import inplace as _inplace
from ...language import nodes as _nodes
from .algebra import Algebra, MatAdd, NoFormula, V, simplify

def _where_defined(fn) -> tuple:
    """(file, name) of a function: how the profile function recognizes its frames."""
    return (inspect.getfile(fn), fn.__name__)


_APPLY_CODES = {_where_defined(f) for f in (_apply_module._apply, _apply_module._apply_unary,
                                            _apply_module._apply_binary, _apply_module._apply_general)}
_VALUE_CODES = {_where_defined(f): name for f, name in ((Tensor.__bool__, "the truth value"), (Tensor.item, ".item()"),
                                                         (Tensor.__float__, "float()"), (Tensor.__int__, "int()"),
                                                         (Tensor.__index__, "an index"))}
_INPLACE_CODE = _where_defined(_inplace.apply)
_RANDOM_FILES = ("ops/random.py", "nn/dropout.py")
#: the op table's functions that draw random numbers (a tensor they return has no formula)
_RANDOM_NAMES = {"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "normal",
                 "bernoulli", "multinomial", "dropout", "normal_", "uniform_", "random_", "exponential_"}
_LANGUAGE_DIR = _nodes.__file__.rsplit("/", 1)[0]
_OPS_DIR = _apply_module.__file__.rsplit("/", 2)[0]


#: ops that pick elements (their formula would depend on which): what the reason calls them
_INDEXING = {"_index": "indexing with a tensor of indices", "select": "indexing an element", "_slice": "slicing",
             "index_select": "indexing with a tensor of indices", "gather": "gathering by a tensor of indices",
             "take": "indexing with a tensor of indices", "_take_along": "indexing with a tensor of indices",
             "masked_select": "selecting by a mask", "_masked_fill": "filling by a mask",
             "masked_fill": "filling by a mask", "where": "choosing elements by a condition",
             "_max_all": "the maximum (it picks an element)", "_min_all": "the minimum (it picks an element)"}


class Failure:
    """Why a tensor has no formula."""
    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason


def _composites() -> dict:
    """code object → composite function, for the composites that declare a symbolic rule."""
    out = {}
    for entry in REGISTRY.values():
        if getattr(entry, "symbolic", None) is not None and not hasattr(entry, "forward"):
            out[_where_defined(entry)] = entry
    return out


def where(frame) -> str:
    """The program position of the innermost expression being evaluated above ``frame``: "line L, column C"
    (empty when none is found)."""
    f = frame
    for _ in range(60):
        if f is None:
            break
        if f.f_code.co_filename.startswith(_LANGUAGE_DIR):
            for key in ("e", "node", "stmt", "expr"):
                n = f.f_locals.get(key)
                if isinstance(n, _nodes.Node) and getattr(n, "line", None):
                    return f"line {n.line}, column {n.col}"
        f = f.f_back
    return ""


def _at(frame) -> str:
    w = where(frame)
    return f" at {w}" if w else ""


class Record:
    """One traced application: output tensors, input tensors (None for non-tensors), its VJP and the world of
    its output formula; or ``failure``."""
    __slots__ = ("outs", "ins", "vjp", "worlds", "failure")

    def __init__(self, outs, ins, vjp, worlds, failure=None):
        self.outs, self.ins, self.vjp, self.worlds, self.failure = outs, ins, vjp, worlds, failure


class Tracer:
    """Notes the program's op applications (use :meth:`running` around the run), then :meth:`gradients`.

    Args:
        named: ``(name, tensor)`` of the inputs and constants (their formulas are symbols of that name).
        globals_: the program's namespace: a leaf the program makes is named by its variable.
    """

    def __init__(self, named, globals_: dict | None = None):
        self.s = Algebra()
        self.globals = globals_ if globals_ is not None else {}
        self.named = {id(t): (name, t) for name, t in named}
        self.values = {}  # id(tensor) -> V or Failure
        self.records = []
        self.keep = []  # the traced tensors stay alive: their ids stay theirs
        self.global_failure = None
        self.active = set()  # ids of the traced tensors computed from an input that requires grad
        self._apply_depth = 0
        self._composites = _composites()
        self._in_composite = []

    # ------------------------------------------------------------------------------------------- the run
    def profile(self, frame, event, arg):
        code = frame.f_code
        key = (code.co_filename, code.co_name)
        if event == "call":
            if key in _APPLY_CODES:
                self._apply_depth += 1
            elif key in self._composites:
                fn = self._composites[key]
                args = [frame.f_locals[n] for n in code.co_varnames[:code.co_argcount]]
                self._in_composite.append((frame, fn, args))
            elif key in _VALUE_CODES:
                t = frame.f_locals.get("self")
                caller = frame.f_back
                if (self.global_failure is None and isinstance(t, Tensor) and caller is not None
                        and (t.requires_grad or id(t) in self.active)
                        and caller.f_code.co_filename.startswith(_LANGUAGE_DIR)):
                    self.global_failure = (f"control flow on a tensor's value ({_VALUE_CODES[key]} of a tensor "
                                           f"computed from an input){_at(frame)}")
            elif key == _INPLACE_CODE and self.global_failure is None:
                caller = frame.f_back
                name = caller.f_code.co_name if caller is not None else "an in-place op"
                self.global_failure = f"an in-place update ({name}){_at(frame)}"
        elif event == "return":
            if key in _APPLY_CODES:
                self._apply_depth -= 1
                if self._apply_depth == 0 and arg is not None:
                    loc = frame.f_locals
                    self._record(loc["o"], loc["args"], arg, frame)
            elif self._in_composite and self._in_composite[-1][0] is frame:
                _, fn, args = self._in_composite.pop()
                if arg is not None:
                    self._record(fn, args, arg, frame)
            elif isinstance(arg, Tensor) and (code.co_filename.endswith(_RANDOM_FILES) or (
                    code.co_name in _RANDOM_NAMES and code.co_filename.startswith(_OPS_DIR))):
                caller = frame.f_back
                if caller is None or not caller.f_code.co_filename.startswith(_OPS_DIR):
                    self.keep.append(arg)
                    self.values[id(arg)] = Failure(f"random numbers ({code.co_name}){_at(frame)}")

    def running(self):
        """A context manager: the profile function is on inside it."""
        tracer = self

        class _Running:
            def __enter__(self):
                self.previous = sys.getprofile()
                sys.setprofile(tracer.profile)
                return tracer

            def __exit__(self, *exc):
                sys.setprofile(self.previous)
                return False

        return _Running()

    def value_of(self, a, op_name: str, frame):
        """The formula of an argument: a traced tensor's, an input's symbol, a number.

        Raises:
            NoFormula: a tensor without a formula (its reason), or a constant tensor the program made.
        """
        if isinstance(a, Tensor):
            v = self.values.get(id(a))
            if isinstance(v, Failure):
                raise NoFormula(v.reason)
            if v is not None:
                return v
            if id(a) not in self.named and a.requires_grad and a.grad_fn is None:
                for k, g in self.globals.items():
                    if g is a and isinstance(k, str):
                        self.named[id(a)] = (k, a)
                        break
            if id(a) in self.named:
                name, t = self.named[id(a)]
                return self.s.leaf(name, tuple(t.data.shape))
            if a.data.ndim == 0:
                return V(self.s.elem(a.data.item()), ())
            raise NoFormula(f"a constant tensor of shape {tuple(a.data.shape)} made by the program, used by "
                            f"{op_name}{_at(frame)} (give it a name with -c NAME=SPEC)")
        if isinstance(a, (tuple, list)) and any(isinstance(x, Tensor) for x in a):
            raise NoFormula(f"a list of tensors passed to {op_name}{_at(frame)}")
        return a

    def _record(self, entry, args, out, frame):
        outs = out if isinstance(out, tuple) else (out,)
        outs = [t for t in outs if isinstance(t, Tensor)]
        if not outs:
            return
        self.keep.append(outs)
        self.keep.append(args)
        if any(isinstance(a, Tensor) and (a.requires_grad or id(a) in self.active) for a in args):
            self.active.update(id(t) for t in outs)
        name = entry.name
        what = _INDEXING.get(name)
        rule = entry.symbolic
        ins = [a if isinstance(a, Tensor) else None for a in args]
        try:
            if rule is None and what is not None:
                raise NoFormula(f"{what} ({name}){_at(frame)}: formulas cover whole tensors")
            if rule is None:
                grad_fn = entry.grad_fn if isinstance(entry.grad_fn, str) else ""
                raise NoFormula(f"{name}{f' ({grad_fn})' if grad_fn else ''} has no symbolic rule{_at(frame)}")
            sym_args = [self.value_of(a, name, frame) for a in args]
            try:
                value, vjp = rule(self.s, *sym_args)
            except NoFormula:
                raise
            except Exception as e:  # noqa: BLE001 - a rule that fails must not fail the program: no formula
                raise NoFormula(f"the symbolic rule of {name} failed ({type(e).__name__}: {e})") from None
        except NoFormula as e:
            failure = Failure(e.reason if " at line" in e.reason or not _at(frame) else e.reason + _at(frame))
            for t in outs:
                self.values[id(t)] = failure
            self.records.append(Record([id(t) for t in outs], ins, None, None, failure))
            return
        values = value if isinstance(out, tuple) else (value,)
        worlds = []
        for t, e in zip(outs, values):
            self.values[id(t)] = V(e, tuple(t.data.shape)) if e is not None else Failure(f"{name}: no gradient")
            worlds.append(getattr(e, "is_Matrix", False))
        self.records.append(Record([id(t) for t in outs], ins, vjp, worlds))

    # ------------------------------------------------------------------------------------------ backward
    def gradients(self, output: Tensor, seed: V | None, names: list) -> dict:
        """name → simplified formula (a V) of d(output·seed)/d(name) for each of ``names``; a missing name gets
        none (the output does not depend on it).

        Raises:
            NoFormula: when the path from an input to the output holds a construct without a formula.
        """
        if self.global_failure is not None:
            raise NoFormula(self.global_failure)
        out_v = self.values.get(id(output))
        if isinstance(out_v, Failure):
            raise NoFormula(out_v.reason)
        if out_v is None:
            raise NoFormula("the output is not computed by ops of the table")
        s = self.s
        grads = {id(output): [seed if seed is not None else V(s.elem(1), ())]}
        for rec in reversed(self.records):
            gs = [self._sum(grads.pop(o, None)) for o in rec.outs]
            if all(g is None for g in gs):
                continue
            if rec.failure is not None:
                raise NoFormula(rec.failure.reason)
            conv = [None if g is None else (s.mat(g) if w else s.elem(g)) for g, w in zip(gs, rec.worlds)]
            got = rec.vjp(tuple(conv) if len(rec.outs) > 1 else conv[0])
            if not isinstance(got, tuple):
                got = (got,)
            out_shape = self._shape(rec.outs[0])
            for t, gi in zip(rec.ins, got):
                if gi is None or t is None or not t.requires_grad:
                    continue
                grads.setdefault(id(t), []).append(self._as_input(gi, tuple(t.data.shape), out_shape))
        result = {}
        for tid, (name, _t) in self.named.items():
            if name in names and tid in grads:
                g = self._sum(grads[tid])
                if g is not None:
                    result[name] = simplify(g, s)
        return result

    def _shape(self, tid):
        v = self.values.get(tid)
        return v.shape if isinstance(v, V) else ()

    def _as_input(self, g, shape: tuple, out_shape: tuple) -> V:
        if getattr(g, "is_Matrix", False):
            if g.shape == (1, 1) and shape == ():
                return V(self.s.elem(V(g, ())), ())
            return V(g, shape)
        return V(self.s.to_shape(g, shape, out_shape), shape)

    def _sum(self, contributions):
        """The sum of the gradients that reach one tensor (matrix world when one of them is a matrix)."""
        if not contributions:
            return None
        if len(contributions) == 1:
            return contributions[0]
        shape = contributions[0].shape
        s = self.s
        if shape != () and any(c.is_mat for c in contributions):
            return V(MatAdd(*[s.mat(c) for c in contributions]).doit(), shape)
        total = 0
        for c in contributions:
            total = total + s.elem(c)
        return V(total, shape)


def seed_value(algebra: Algebra, gradient: Tensor | None, output: Tensor) -> V | None:
    """The seed of the backward pass: ``v`` (``--gradient``) as a symbol of the output's shape, or None (1)."""
    if gradient is None:
        return None
    return algebra.leaf("v", tuple(np.shape(gradient.data)))
