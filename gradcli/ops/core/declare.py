"""Declaring the op table: the registry, ops with their derivative rules, and the functions built on them.

Everything the language and ``import gradcli`` can call is declared in one of two ways, and every declaration
carries the fields ``gradcli ops`` lists (:class:`Entry`):

* ``@op`` for a **primitive**: its forward on numpy arrays, then, right below, its derivative rule::

      @op("mul", grad_fn="MulBackward0", inputs=2, method=True, note="d/dinput = other, d/dother = input")
      def mul(input, other):
          '''Elementwise product with broadcasting and type promotion. Matches torch.mul.'''
          return np.multiply(input, other)

      @mul.defvjp
      def _(grad, input, other):
          return grad * other, grad * input

  The forward-mode rule (``@mul.defjvp``, the Jacobian-vector product: derivatives.yaml's ``result:``) sits
  beside the VJP::

      @mul.defjvp
      def _(input_t, other_t, input, other):
          return input_t * other + other_t * input

  It receives each input's tangent as ``<input>_t`` and, by naming them, the values the VJP may name (see
  :meth:`Op.defjvp`); it runs on Tensors only, recorded, so that tangents are differentiable in turn. The
  forward-mode rules that whole kinds of ops share are declared by kind in the decorator instead
  (:data:`JVP_SHORTHANDS`; ``ops/core/forward.py`` computes each kind's tangent through its ``JVP_KINDS`` table)::

      @op("exp", grad_fn="ExpBackward0", note="d/dx = result", formula="input: grad * result", jvp="elementwise")
      def exp(input): ...

  (``jvp="linear"``: the op applied to the tangents, as views, sums and add; ``"multilinear"``: mm, outer;
  ``"elementwise"``, ``"loss"``, ``"reduction"``: from the VJP rule). Besides its rules, a declaration gives the
  text ``--explain`` shows for each backward function it records (``formula=``), the op's name in ``--check``'s
  kink messages (``kinks=``), and where it is defined (``domain=``; the tests sample inputs there).

* ``@composite`` for a **function that dispatches to ops** (matmul's folding, cross_entropy, reshape's choice of
  view or copy, getitem) and for the functions that are not ops at all (``kind="creation"``: tensor factories;
  ``kind="function"``: manual_seed)::

      @composite("square", grad_fn="PowBackward0", note="d/dx = 2 * x", method=True)
      def square(input):
          '''``input * input``, computed as ``pow(input, 2)``. Matches torch.square.'''
          return pow(input, 2)

  The function stays a plain function (calling it costs nothing extra); the decorator gives it the fields,
  registers its names and installs its Tensor methods.

Tensor methods that are not names of the namespace (``x.to(...)``, ``x.contiguous()``, ``x.add_(...)``) are
declared with :func:`tensor_method`.

The forward of an op receives numpy arrays (the first ``inputs`` parameters) and plain values (the rest) and
returns an array. The derivative rule (vector-Jacobian product) receives the output's gradient and, by naming
them, what it needs, in the spirit of PyTorch's derivatives.yaml (the kinds of :mod:`gradcli.engine.rules`):

* a tensor parameter of the forward (``input``, ``other``): its value;
* ``result``: the op's output;
* a non-tensor parameter of the forward (``dim``, ``keepdim``);
* ``<tensor parameter>_shape`` (``input_shape``): an input's shape;
* ``needs_input_grad``: a tuple of bools, one per tensor input, to skip costly unused gradients.

It returns one gradient per tensor input (a bare value for single-input ops; None where there is none), of any
shape that broadcasts to the input's: the engine sums each back to its input's shape and dtype. Rules use
operators and other ops of the table, so the same rule runs on numpy arrays (ordinary backward) and on Tensors
(``create_graph=True``), where it is recorded and can be differentiated again.

Called with Tensors (or Python numbers and lists), an op returns a Tensor and records the graph
(:mod:`gradcli.ops.core.apply`; inside a forward-AD level, :mod:`gradcli.ops.core.forward`); called with
numpy arrays only (as rules do), it computes on them and returns an array.

A forward may return a tuple: by default only its first array is differentiable (``max(x, dim)``'s values, not
its indices); with ``multi_output=True`` (split, unbind) every array is an output of one graph node, as in
PyTorch, and the rule's first argument is the tuple of the outputs' gradients.
"""

from __future__ import annotations

import inspect
import operator
import types
from typing import Protocol

import numpy as np

from ...engine import dtypes
from ...engine.rules import (ARG_INPUT, ARG_NEEDS_INPUT_GRAD, ARG_PARAM, ARG_RESULT, ARG_SHAPE, ARG_VARARGS, CALL_PLAN,
                             CALL_SAVED, CALL_SAVED_NEEDS, CALL_SAVED_PARAMS, CALL_SAVED_PARAMS_NEEDS)
from ...engine.tensor import REQUIRES_GRAD_DTYPE_ERROR, Tensor
from .apply import applier

#: Every callable of the language and of ``import gradcli``, by PyTorch name (aliases included): Op instances
#: and the functions declared with :func:`composite`. Filled by the op modules at import time.
REGISTRY: dict[str, object] = {}

#: The kind of each registry entry, for ``gradcli ops``: "op", "creation", "function".
KINDS: dict[str, str] = {}

#: The names of the Tensor methods installed by the op table (the language may call these).
METHODS: set[str] = set()

#: The kinds of entry (``gradcli ops --kind``): ops (differentiable or not), tensor factories, other functions.
ENTRY_KINDS = ("op", "creation", "function")

#: The forward-mode rules an op can declare by kind, ``@op(..., jvp="linear")`` (:meth:`Op.defjvp_linear` and
#: the others): derivatives.yaml's ``auto_linear``, ``auto_element_wise`` and the ``result:`` formulas that
#: reductions, losses and the products share.
JVP_SHORTHANDS = ("linear", "multilinear", "elementwise", "loss", "reduction")

#: grad_fn name → what a graph node of that name sends to each input (``--explain``'s formula), gathered from
#: the ``formula=`` of every declaration (public or not) as the op modules are imported; see :func:`op`.
FORMULAS: dict[str, str] = {}

#: (grad_fn name, derivative note) of the ops declared without ``formula=``: once the table is declared,
#: :func:`formulas_from_notes` gives each grad_fn that no declaration gave a formula its op's note.
_NOTE_ONLY: list = []

#: grad_fn name → the op that ``--check``'s kink messages name, gathered from the ``kinks=`` of the
#: declarations (ops continuous with one-sided derivatives that differ somewhere: relu, abs, max, ...).
KINKS: dict[str, str] = {}


class Entry(Protocol):
    """The fields every declaration carries, an :class:`Op` as much as a :func:`composite` function; ``gradcli
    ops`` (gradcli.app.catalog) reads these and nothing else.

    Attributes:
        name: the canonical PyTorch name (``"abs"``).
        aliases: the other names of the namespace for it (``("absolute",)``).
        kind: "op", "creation" or "function" (:data:`ENTRY_KINDS`).
        grad_fn: PyTorch's backward class name; for an Op a function of its parameters when that varies
            (``sum``: SumBackward0 or SumBackward1); for a composite "varies" or "composite" where it depends on
            the arguments or on the ops it calls; None without a gradient.
        differentiable: False when the outputs never require grad (comparisons, argmax).
        note: a one-line description of the derivative ("" for creation functions and other functions).
        method: whether the names are also Tensor methods: False, True (the callable itself), or the function
            installed as the method (``Tensor.where(condition, other)`` has its own argument order).
        signature: the call signature (an :class:`inspect.Signature`).
        summary: the first paragraph of the docstring, on one line.
    """

    name: str
    aliases: tuple
    kind: str
    grad_fn: object
    differentiable: bool
    note: str
    method: object
    signature: inspect.Signature
    summary: str


def register(name: str, entry, kind: str) -> None:
    """Add a declared callable to the namespace of the language and of ``import gradcli`` (used by :func:`op`
    and :func:`composite`)."""
    if kind not in ENTRY_KINDS:
        raise ValueError(f"{name}: unknown kind {kind!r} (expected one of {ENTRY_KINDS})")
    REGISTRY[name] = entry
    KINDS[name] = kind


def install_method(name: str, fn) -> None:
    """Make ``fn(self, ...)`` the Tensor method ``name`` (used by the declarations, not called directly)."""
    setattr(Tensor, name, fn)
    METHODS.add(name)


def tensor_method(*names: str):
    """Declare a Tensor method that is not a name of the namespace (decorator): ``x.to(...)``,
    ``x.contiguous()``, the in-place ``x.add_(...)``. The function takes the tensor first; it is installed under
    every one of ``names`` and returned unchanged."""
    def wrap(fn):
        for n in names:
            install_method(n, fn)
        return fn

    return wrap


_EMPTY = inspect.Parameter.empty
_VAR_POSITIONAL = inspect.Parameter.VAR_POSITIONAL
_KEYWORD_ONLY = inspect.Parameter.KEYWORD_ONLY


def param_list(fn) -> list:
    """``(name, kind, default)`` of each parameter of ``fn`` in order (``kind`` an inspect.Parameter kind,
    ``default`` inspect.Parameter.empty when there is none), read from a plain function's code object: at
    import every op reads its forward's and its rules' parameters, and ``inspect.signature`` made that a tenth
    of the command's start-up. Other callables, and functions given a ``__signature__``, go through
    ``inspect.signature``."""
    code = getattr(fn, "__code__", None)  # noqa: B009 - plain functions have one, other callables do not
    if code is None or getattr(fn, "__wrapped__", None) is not None or getattr(fn, "__signature__", None):  # noqa: B009
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]
    n = code.co_argcount
    nk = code.co_kwonlyargcount
    names = code.co_varnames
    defaults = fn.__defaults__ or ()
    kwdefaults = fn.__kwdefaults__ or {}
    first_default = n - len(defaults)
    out = [(names[i], inspect.Parameter.POSITIONAL_OR_KEYWORD, defaults[i - first_default] if i >= first_default
            else _EMPTY) for i in range(n)]
    at = n + nk
    if code.co_flags & inspect.CO_VARARGS:
        out.append((names[at], _VAR_POSITIONAL, _EMPTY))
        at += 1
    out.extend((names[i], _KEYWORD_ONLY, kwdefaults.get(names[i], _EMPTY)) for i in range(n, n + nk))
    if code.co_flags & inspect.CO_VARKEYWORDS:
        out.append((names[at], inspect.Parameter.VAR_KEYWORD, _EMPTY))
    return out


def signature_of(entry) -> inspect.Signature:
    """The call signature of an entry of the table: an op's forward's, a composite function's own (computed
    when asked: ``gradcli ops`` and error hints ask, running programs does not)."""
    return inspect.signature(entry.forward if isinstance(entry, Op) else entry)


def _summary(doc: str | None) -> str:
    """The first paragraph of a docstring on one line (what ``gradcli ops`` shows)."""
    return (inspect.cleandoc(doc) if doc else "").strip().split("\n\n")[0].replace("\n", " ")


_REQUIRED = object()

#: The formulas of a declaration that declares none (read-only, shared).
_NO_FORMULAS = types.MappingProxyType({})


def composite(name: str, *, grad_fn=_REQUIRED, note=_REQUIRED, method=False, aliases: tuple = (),
              kind: str = "op", differentiable: bool = True, formula=None, kinks: str | None = None):
    """Declare a public function built from ops, or a creation function or other function (decorator).

    The function is registered under ``name`` and ``aliases``, gets the fields of :class:`Entry`, and is
    returned itself (so calling it costs nothing extra).

    Args:
        name: its PyTorch name.
        grad_fn: for ``kind="op"`` (required): PyTorch's backward class name of the result, a text naming the
            alternatives ("ClampBackward1 (number bounds) | ClampBackward0 (tensor bounds)"), "varies" (the
            arguments decide) or "composite" (the ops it calls record their own). None for other kinds.
        note: for ``kind="op"`` (required): a one-line description of the derivative.
        method: also a Tensor method under ``name`` and ``aliases``: True (the function itself, taking the
            tensor first) or a function to install instead (its own argument order).
        aliases: other names of the namespace for it (``"clip"`` for clamp).
        kind: "op", "creation" (tensor factories) or "function" (manual_seed).
        differentiable: False for an op whose result has no gradient (argsort's indices).
        formula, kinks: the formulas of the graph nodes it records and the kinks' name (see :func:`op`); for a
            composite, the nodes that the ops it calls record under names they do not declare themselves
            (``cat``'s CatBackward0).

    Raises:
        TypeError: if an op is declared without grad_fn or note, or another kind with them.
    """
    if kind == "op":
        if grad_fn is _REQUIRED or note is _REQUIRED or not isinstance(grad_fn, str) or not note:
            raise TypeError(f"composite {name!r}: an op declares grad_fn= (a string) and note=")
    else:
        if grad_fn not in (_REQUIRED, None) or note not in (_REQUIRED, ""):
            raise TypeError(f"composite {name!r}: a {kind} function has no grad_fn or derivative note")
        grad_fn, note = None, ""

    def wrap(fn):
        fn.name = name
        fn.aliases = tuple(aliases)
        fn.kind = kind
        fn.grad_fn = grad_fn
        fn.differentiable = kind == "op" and differentiable
        fn.note = note
        fn.method = method
        fn.summary = None  # (gradcli.app.catalog reads the docstring's first paragraph when it lists ops)
        fn.symbolic = None
        fn.defsymbolic = lambda rule: _set_symbolic(fn, rule)
        fn.display_text = lambda: f"<function torch._VariableFunctionsClass.{name}>"  # (as Op.display_text)
        if formula is not None or kinks is not None:  # (most composites record no node of their own)
            fn.formulas, fn.kinks = declare_formulas(name, grad_fn, formula, kinks)
        for n in (name,) + fn.aliases:
            register(n, fn, kind)
            if method:
                install_method(n, fn if method is True else method)
        return fn

    return wrap


class Op:
    """A differentiable operation (a primitive): its forward (on numpy arrays) and its derivative rule; the
    fields of :class:`Entry` besides.

    Attributes:
        name: PyTorch's function name (``"mul"``), also the name in its error messages.
        grad_fn: PyTorch's backward class name (``"MulBackward0"``), a function of the op's non-tensor
            parameters giving it, or None for ops without a gradient.
        ninputs: how many leading parameters of the forward are tensors.
        promote: "same" (PyTorch's type promotion across inputs), "float" (promotion, then integers and bools
            become the default float dtype, as torch.div and torch.exp do), or None (inputs used as they are).
        differentiable: False for ops whose outputs never require grad (comparisons, argmax).
        note: a one-line description of the derivative for ``gradcli ops``.
        formulas: grad_fn name → what the node sends to each input, as ``--explain`` shows it (see :func:`op`).
        kinks: the name ``--check``'s kink messages give the op (``"relu"``), or None when it has no kinks.
        aliases, method, kind, signature, summary: see :class:`Entry` (``kind`` is always "op").
        domain: where the op is defined and differentiable, as an open interval ``(low, high)`` of its input's
            values (``(0, inf)`` for log), or None for everywhere; tests sample inputs there.
        multi_output: the forward returns a tuple of arrays that are all differentiable outputs of one
            :class:`~gradcli.engine.graph.MultiNode` (torch.split's SplitBackward0); the rule's first argument is
            then the tuple of their gradients (zeros for outputs that got none).
        vjp: the derivative rule (reverse mode), or None until :meth:`defvjp`.
        jvp: the forward-mode rule (Jacobian-vector product), or None until :meth:`defjvp`.
        jvp_plan: the arguments of ``jvp``, ``(kind, index)`` per parameter (set by :meth:`defjvp`).
        jvp_kind: "rule" (:meth:`defjvp`), "linear" (:meth:`defjvp_linear`), "multilinear", "elementwise",
            "loss", "reduction" (the other ``defjvp_*``), or None without a forward-mode rule; forward mode
            computes the tangent by it (:data:`gradcli.ops.core.forward.JVP_KINDS`).
        vjp_plan: how to build the rule's arguments: ``(kind, index)`` per argument, kinds from
            :mod:`gradcli.engine.rules` (set by :meth:`defvjp`).
        vjp_call: how the engine calls the rule, a call code of :mod:`gradcli.engine.rules`.
        saves: whether the rule needs saved values (then a second backward without retain_graph fails).
        save_plan: which values a node saves, in the rule's order: input indices, ``ninputs`` for the result.
        needs_shapes: the rule takes an input's shape (nodes then record the input shapes).
        apply_fn: how a call with Tensors applies the op, ``apply_fn(op, args, params=None)``: the function of
            :mod:`gradcli.ops.core.apply` for its number of tensor inputs (:func:`~gradcli.ops.core.apply.applier`).
    """

    kind = "op"

    def __init__(self, forward, *, name: str, grad_fn, note: str, inputs: int = 1, promote: str | None = "same",
                 differentiable: bool = True, method=False, aliases: tuple = (), multi_output: bool = False,
                 domain: tuple | None = None, formula=None, kinks: str | None = None, jvp: str | None = None):
        self.forward = forward
        self.name = name
        self.grad_fn = grad_fn
        self.note = note
        # every instance sets the same attributes in the same order (its __dict__ then shares its keys with the
        # other ops', which keeps attribute reads on the per-op path fast)
        if formula is None and kinks is None:
            self.formulas, self.kinks = _NO_FORMULAS, None
            if isinstance(grad_fn, str) and grad_fn.isidentifier() and note:
                _NOTE_ONLY.append((grad_fn, note))
        else:
            self.formulas, self.kinks = declare_formulas(name, grad_fn, formula, kinks)
        self.ninputs = inputs
        self.promote = promote
        self.differentiable = differentiable
        self.method = method
        self.aliases = tuple(aliases)
        self.multi_output = multi_output
        self.domain = domain
        self.vjp = None
        self.jvp = None
        self.symbolic = None
        self.jvp_plan = ()
        self.jvp_kind = None
        self._jvp_after_vjp = None
        self.vjp_plan = ()
        self.saves = False
        self.save_plan = ()
        self.saved_inputs = ()
        self.saves_result = False
        self.vjp_call = CALL_SAVED
        self.needs_shapes = False
        self.save_getter = None
        self._signature = None
        params = param_list(forward)
        self.param_kinds = {name: kind for name, kind, _ in params}
        self.input_names = [name for name, _, _ in params[:inputs]]
        self.param_names = [name for name, _, _ in params[inputs:]]
        # Defaults appended to short positional calls, so rules always see every parameter. Ops with *args
        # take what they are given.
        if any(kind in (_VAR_POSITIONAL, _KEYWORD_ONLY) for _, kind, _ in params):
            if any(kind == _KEYWORD_ONLY for _, kind, _ in params):
                raise TypeError(f"{self.name}: forward parameters must be positional (found keyword-only)")
            self.defaults = None
            self.nrequired = 0
        else:
            self.defaults = tuple(default for _, _, default in params)
            # parameters with defaults follow those without, so a call is complete once it has these many
            self.nrequired = sum(1 for _, _, default in params if default is _EMPTY)
        self.nargs = len(params)
        # chosen once rather than dispatched on the input count per call
        self.apply_fn = applier(inputs)
        self.__doc__ = forward.__doc__
        self.__name__ = self.name
        if jvp is not None:
            if jvp not in JVP_SHORTHANDS:
                raise TypeError(f"{name}: jvp= is one of {JVP_SHORTHANDS}, not {jvp!r}")
            if jvp in ("elementwise", "loss", "reduction"):
                self._jvp_after_vjp = jvp  # these read the VJP rule: set when @defvjp gives it
            else:
                getattr(self, "defjvp_" + jvp)()

    @property
    def signature(self) -> inspect.Signature:
        """The forward's call signature (made on first use: keyword calls and ``gradcli ops`` need it)."""
        if self._signature is None:
            self._signature = inspect.signature(self.forward)
        return self._signature

    @property
    def summary(self) -> str:
        """The first paragraph of the forward's docstring (what ``gradcli ops`` shows)."""
        return _summary(self.forward.__doc__)

    def __repr__(self) -> str:
        return f"<gradcli op {self.name}>"

    def display_text(self) -> str:
        """What a notebook shows for the function ``torch.<name>``: IPython's form for PyTorch's builtin
        (``<function torch._VariableFunctionsClass.dot>``; PyTorch's Python-level functions and those of
        ``torch.nn.functional`` show otherwise)."""
        return f"<function torch._VariableFunctionsClass.{self.name}>"

    def defvjp(self, rule):
        """Set the derivative rule (see the module docstring for the names it may take); returns the op.

        Raises:
            TypeError: if the rule names something the op does not have.
        """
        plan = []
        saves = False
        for pname in [name for name, _, _ in param_list(rule)][1:]:
            if pname in self.input_names:
                plan.append((ARG_INPUT, pname))
                saves = True
            elif pname == "result":
                plan.append((ARG_RESULT, "result"))
                saves = True
            elif pname in self.param_names:
                kind = self.param_kinds[pname]
                # a *args parameter (permute(input, *dims)) receives the whole tail of the arguments
                plan.append((ARG_VARARGS if kind == inspect.Parameter.VAR_POSITIONAL else ARG_PARAM,
                             self.param_names.index(pname)))
            elif pname.endswith("_shape") and pname[:-6] in self.input_names:
                plan.append((ARG_SHAPE, self.input_names.index(pname[:-6])))
            elif pname == "needs_input_grad":
                plan.append((ARG_NEEDS_INPUT_GRAD, 0))
            else:
                raise TypeError(f"{self.name}: derivative rule asks for unknown value {pname!r}")
        # The values to save, in the order the rule names them: input indices, and ninputs for the result.
        # Nodes keep them in one tuple of arrays, so that a rule that names nothing else is called as
        # ``rule(grad, *saved)``.
        saved_kinds = (ARG_INPUT, ARG_RESULT)
        save_plan = tuple(self.input_names.index(n) if k == ARG_INPUT else self.ninputs
                          for k, n in plan if k in saved_kinds)
        self.save_plan = save_plan
        self.saved_inputs = tuple(i for i in save_plan if i != self.ninputs)
        self.saves_result = self.ninputs in save_plan
        self.vjp_call = _vjp_call(plan, len(save_plan), len(self.param_names) if self.defaults is not None else -1)
        if self.multi_output:
            if self.saves_result:
                raise TypeError(f"{self.name}: the rule of an op with several outputs cannot take 'result'")
            self.vjp_call = CALL_PLAN  # MultiNode.apply builds the tuple of output gradients, then the plan
        self.needs_shapes = any(k == ARG_SHAPE for k, _ in plan)
        self.save_getter = operator.itemgetter(*save_plan) if len(save_plan) > 1 else None
        resolved = []
        slot = 0
        for k, n in plan:
            if k in saved_kinds:
                resolved.append((k, slot))
                slot += 1
            else:
                resolved.append((k, n))
        self.vjp_plan = tuple(resolved)
        self.saves = saves
        self.vjp = rule
        if self._jvp_after_vjp is not None:
            getattr(self, "defjvp_" + self._jvp_after_vjp)()
        return self

    def defjvp(self, rule):
        """Set the forward-mode rule (the Jacobian-vector product, derivatives.yaml's ``result:`` formula)
        beside the VJP; returns the op. Forward AD (:mod:`gradcli.api.forward_ad`) calls it when an input of the op
        is a dual tensor.

        The rule's parameters are named, in any order:

        * ``<input>_t`` (``input_t``, ``other_t``): the input's tangent, a Tensor of the input's shape (zeros
          for a float input without a tangent), ``0.0`` for a Python-number input, None for an absent or
          non-float input (an index);
        * an input (``input``): its primal value, the Tensor (or number) the op was called with;
        * ``result``: the output Tensor (for an op whose forward returns a tuple, the tuple of outputs);
        * a non-tensor parameter (``dim``), ``<input>_shape``.

        It returns the output's tangent (one per output for ``multi_output`` ops; None for no tangent), in any
        shape that broadcasts to the output's: the engine expands it and casts it to the output's dtype.

        Raises:
            TypeError: if the rule names something the op does not have.
        """
        plan = []
        for pname in [name for name, _, _ in param_list(rule)]:
            if pname.endswith("_t") and pname[:-2] in self.input_names:
                plan.append(("t", self.input_names.index(pname[:-2])))
            elif pname in self.input_names:
                plan.append(("input", self.input_names.index(pname)))
            elif pname == "result":
                plan.append(("result", 0))
            elif pname in self.param_names:
                kind = self.param_kinds[pname]
                plan.append(("varargs" if kind == _VAR_POSITIONAL else "param",
                             self.param_names.index(pname)))
            elif pname.endswith("_shape") and pname[:-6] in self.input_names:
                plan.append(("shape", self.input_names.index(pname[:-6])))
            else:
                raise TypeError(f"{self.name}: forward-mode rule asks for unknown value {pname!r}")
        self.jvp_plan = tuple(plan)
        self.jvp = rule
        self.jvp_kind = "rule"
        return self

    def defsymbolic(self, rule):
        """Set the symbolic rule beside the VJP and JVP (``gradcli grad --symbolic``); returns the op.
        ``rule(s, *args)`` gets the algebra of :mod:`gradcli.app.symbolic` as ``s``, the op's arguments as
        the forward takes them (tensors as symbolic values) and returns ``(value, vjp)``: the output's formula
        and a function of the output's symbolic gradient giving one gradient per tensor input (None: none)."""
        return _set_symbolic(self, rule)

    def defjvp_unsupported(self, aten: str):
        """Declare that forward AD through the op fails, as PyTorch's does for the ops whose derivative is
        "not implemented" (floor_divide): NotImplementedError "Trying to use forward AD with aten::floor_divide
        that does not support it." Returns the op."""
        def rule():
            raise NotImplementedError(f"Trying to use forward AD with aten::{aten} that does not support it.")

        rule.unsupported = True  # (read by torch.func.hessian: forward over reverse raises here)
        return self.defjvp(rule)

    def defjvp_linear(self):
        """Declare the op linear in its tensor inputs taken together (derivatives.yaml's ``auto_linear``: views,
        reshapes, sums, add): its tangent is the op applied to the tangents, with the same parameters. Returns
        the op."""
        self.jvp = _jvp_by_kind
        self.jvp_kind = "linear"
        return self

    def defjvp_multilinear(self):
        """Declare the op linear in each tensor input separately (mm, bmm, mv, dot, outer): its tangent is the sum
        over the inputs with a tangent of the op with that input replaced by its tangent (derivatives.yaml mm:
        ``result: self_t.mm(mat2_p) + self_p.mm(mat2_t)``). Returns the op."""
        self.jvp = _jvp_by_kind
        self.jvp_kind = "multilinear"
        return self

    def defjvp_loss(self):
        """Declare the op a pointwise loss with a ``reduction`` parameter (mse_loss, binary_cross_entropy): with
        "none" it is elementwise (:meth:`defjvp_elementwise`); with "mean" or "sum" its output is 0-d and its
        tangent is the gradient dotted with the tangents, ``sum_k sum(vjp(1)[k] * t_k)`` (derivatives.yaml:
        ``apply_loss_reduction(..., reduction)`` of the elementwise tangent). Returns the op."""
        if self.vjp is None or "reduction" not in self.param_names:
            raise TypeError(f"{self.name}: defjvp_loss needs the VJP rule of an op with a reduction parameter")
        self.jvp = _jvp_by_kind
        self.jvp_kind = "loss"
        return self

    def defjvp_reduction(self):
        """Declare the op a reduction of its one tensor input over the parameters ``dim`` (None or ``()``: all
        dimensions; absent: all) and ``keepdim``: each input element contributes to one output element, so
        the tangent is ``sum(vjp(ones) * input_t, dim, keepdim)`` (derivatives.yaml's reductions, e.g. prod's
        ``(prod_backward(ones, self_p, result, dim, keepdim) * self_t).sum(dim, keepdim)``, amax's
        ``amaxamin_jvp``, std's and norm's). The VJP must be declared first. Returns the op."""
        if self.vjp is None or self.ninputs != 1:
            raise TypeError(f"{self.name}: defjvp_reduction needs the VJP rule of a one-input op first")
        self.jvp = _jvp_by_kind
        self.jvp_kind = "reduction"
        return self

    def defjvp_elementwise(self):
        """Declare the op elementwise (derivatives.yaml's ``auto_element_wise``): its Jacobian with respect to
        each input is diagonal (after broadcasting), so its tangent is the sum over the inputs with a tangent
        of the VJP rule applied to that tangent (``grad`` replaced by ``input_t``). The VJP must be declared
        first. Returns the op."""
        if self.vjp is None:
            raise TypeError(f"{self.name}: defjvp_elementwise needs the VJP rule first")
        if self.multi_output:
            raise TypeError(f"{self.name}: an op with several outputs is not elementwise")
        self.jvp = _jvp_by_kind
        self.jvp_kind = "elementwise"
        return self

    def __call__(self, *args, **kwargs):
        if kwargs:
            args = self._bind(args, kwargs)
        elif len(args) < self.nargs and self.defaults is not None:
            if len(args) < self.nrequired:
                args = self._bind(args, {})  # raises the missing-argument TypeError
            else:
                args += self.defaults[len(args):]
        if args and type(args[0]) is Tensor:  # the common case, checked first: it is the per-op overhead
            return self.apply_fn(self, args)
        n = self.ninputs
        for a in args[:n]:
            if type(a) is Tensor:
                return self.apply_fn(self, args)
        for a in args[:n]:
            # numpy arrays, and the numpy scalars that numpy returns for 0-d results, are the rules' values
            if isinstance(a, (np.ndarray, np.generic)):
                return self.forward(*(np.asarray(x) if isinstance(x, np.generic) else x for x in args[:n]),
                                    *args[n:])
        return self.apply_fn(self, args)

    def _bind(self, args, kwargs):
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.name}(): {e}") from None
        bound.apply_defaults()
        return bound.args


def _vjp_call(plan, nsaved: int, nparams: int) -> int:
    """The call code (:mod:`gradcli.engine.rules`) of a rule whose arguments are (saved values, then every non-tensor
    parameter in order, then needs_input_grad), each part optional: then the engine passes them without going
    through the plan; else CALL_PLAN."""
    kinds = [k for k, _ in plan]
    i = nsaved
    if any(k not in (ARG_INPUT, ARG_RESULT) for k in kinds[:i]):
        return CALL_PLAN
    params = [n for k, n in plan[i:] if k == ARG_PARAM]
    if params:
        if params != list(range(nparams)) or kinds[i:i + nparams] != [ARG_PARAM] * nparams:
            return CALL_PLAN
        i += nparams
    rest = kinds[i:]
    if rest not in ([], [ARG_NEEDS_INPUT_GRAD]):
        return CALL_PLAN
    if params:
        return CALL_SAVED_PARAMS_NEEDS if rest else CALL_SAVED_PARAMS
    return CALL_SAVED_NEEDS if rest else CALL_SAVED


def _set_symbolic(entry, rule):
    """``entry.symbolic = rule`` (:meth:`Op.defsymbolic`, and ``defsymbolic`` of a composite); returns entry."""
    entry.symbolic = rule
    return entry


def _jvp_by_kind(*args):
    """``Op.jvp`` of an op whose forward-mode rule is given by its kind (:meth:`Op.defjvp_linear` and the other
    shorthands): it marks that the op has one; forward mode computes the tangent from ``Op.jvp_kind``."""
    raise AssertionError("the JVP of an op declared by its kind is computed by gradcli.ops.core.forward.JVP_KINDS")


def op(name: str, *, grad_fn, note: str, inputs: int = 1, promote: str | None = "same",
       differentiable: bool = True, method=False, aliases: tuple = (), multi_output: bool = False,
       public: bool | None = None, domain: tuple | None = None, formula=None, kinks: str | None = None,
       jvp: str | None = None):
    """Declare an op (decorator on its forward); its rules follow with ``@<op>.defvjp``. See the module
    docstring.

    Args:
        name: PyTorch's name of the function (also the name its error messages use).
        grad_fn: PyTorch's backward class name, a function of the non-tensor parameters giving it (``sum``:
            SumBackward0 without dim, SumBackward1 with), or None for ops without a gradient.
        note: a one-line derivative note for ``gradcli ops``.
        inputs: number of leading tensor parameters.
        promote: "same", "float" or None (see :class:`Op`).
        differentiable: False if the outputs never require grad.
        method: also a Tensor method under ``name`` and ``aliases``: True (the op, taking the tensor first) or
            a function to install instead (``Tensor.flip(*dims)``).
        aliases: other names in the namespace (``"multiply"`` for mul); methods too when ``method``.
        multi_output: every output of the tuple the forward returns is differentiable (see :class:`Op`).
        public: whether the op is a name of the namespace; by default unless ``name`` starts with "_". An op
            that a public composite dispatches to (one of torch.pow's overloads) has the composite's name and
            ``public=False``.
        domain: see :attr:`Op.domain`.
        formula: what the graph node sends to each of its inputs, as ``gradcli grad --explain`` shows it, in
            derivatives.yaml's names (``"input: grad * other; other: grad * input"``): a text when ``grad_fn``
            is one name, else a dict grad_fn name → text (``sum``: SumBackward0 and SumBackward1). A grad_fn
            name that several declarations record (``outer`` records MulBackward0) is given its text by one
            of them; :data:`FORMULAS` gathers them all.
        kinks: for an op continuous everywhere whose one-sided derivatives differ somewhere (relu at 0), the
            name ``--check`` gives it when an input sits at a kink (:data:`KINKS`).
        jvp: the forward-mode rule by its kind (:data:`JVP_SHORTHANDS`), declared with the op instead of a
            ``@<op>.defjvp`` rule: "linear" (:meth:`Op.defjvp_linear`), "multilinear", or, from the VJP rule
            once ``@<op>.defvjp`` gives it, "elementwise", "loss", "reduction".

    Raises:
        ValueError: if a grad_fn name is given two different formulas.
    """
    def wrap(forward):
        o = Op(forward, name=name, grad_fn=grad_fn, note=note, inputs=inputs, promote=promote,
               differentiable=differentiable, method=method, aliases=aliases, multi_output=multi_output,
               domain=domain, formula=formula, kinks=kinks, jvp=jvp)
        if public if public is not None else not name.startswith("_"):
            for n in (name,) + o.aliases:
                register(n, o, "op")
                if method is True:
                    _install_op_method(o, n)
                elif method:
                    install_method(n, method)
        return o

    return wrap


def formulas_from_notes(rename) -> None:
    """Give every backward function that no declaration gave a ``formula=`` the derivative note of its op (what
    ``gradcli ops`` lists), in PyTorch's argument names (``rename``: :func:`gradcli.ops.core.formulas.pytorch_names`),
    so that ``--explain`` shows a formula for every node the table records. Called once, after the whole table
    is declared (a later ``formula=`` of the same grad_fn would otherwise conflict)."""
    for grad_fn, note in _NOTE_ONLY:
        FORMULAS.setdefault(grad_fn, rename(note))


def declare_formulas(name: str, grad_fn, formula, kinks: str | None) -> tuple[dict, str | None]:
    """Record a declaration's ``formula=`` and ``kinks=`` (see :func:`op`) in :data:`FORMULAS` and
    :data:`KINKS`; returns ``(formulas, kinks)``, the fields the declaration keeps: its formulas by grad_fn
    name, and the kinks' name.

    Raises:
        TypeError: for a text formula of a declaration whose grad_fn is not one name, or a dict of another kind.
        ValueError: if a grad_fn name already has another formula (one text per backward function).
    """
    if formula is None:
        formulas = {}
    elif isinstance(formula, str):
        if not isinstance(grad_fn, str) or not grad_fn.isidentifier():
            raise TypeError(f"{name}: formula= is a dict by grad_fn name when grad_fn is not one name")
        formulas = {grad_fn: formula}
    elif isinstance(formula, dict):
        formulas = dict(formula)
    else:
        raise TypeError(f"{name}: formula= is a text or a dict grad_fn name -> text, not {type(formula).__name__}")
    for node, text in formulas.items():
        if FORMULAS.setdefault(node, text) != text:
            raise ValueError(f"{name}: {node} already has another formula: {FORMULAS[node]!r}")
    if kinks is not None:
        names = formulas or ({grad_fn: None} if isinstance(grad_fn, str) and grad_fn.isidentifier() else {})
        if not names:
            raise TypeError(f"{name}: kinks= needs the grad_fn names (one grad_fn name, or formula=)")
        for node in names:
            KINKS[node] = kinks
    return formulas, kinks


def _install_op_method(o: Op, mname: str) -> None:
    def method(self, *args, **kwargs):
        if kwargs or len(args) + 1 != o.nargs:
            return o(self, *args, **kwargs)
        # every argument given: no binding or defaults to handle (o.apply_fn read here: view ops wrap it)
        return o.apply_fn(o, (self,) + args)

    method.__name__ = mname
    method.__doc__ = o.__doc__
    install_method(mname, method)


def check_requires_grad(data: np.ndarray, requires_grad: bool) -> None:
    """Raise PyTorch's RuntimeError if a non-float tensor is asked to require grad."""
    if requires_grad and data.dtype.kind != "f":
        raise RuntimeError(REQUIRES_GRAD_DTYPE_ERROR)


def zeros_like_grad(grad):
    """Zeros shaped like ``grad`` (PyTorch's ``zeros_like(grad)``: zero even where ``grad`` is inf or nan), for
    rules whose derivative is zero; a constant Tensor when ``grad`` is a Tensor (create_graph)."""
    if isinstance(grad, Tensor):
        return Tensor(np.zeros_like(grad.data))
    return np.zeros_like(grad)


def not_implemented_for(kernel: str, dtype) -> NotImplementedError:
    """PyTorch's dispatch error for a dtype a kernel lacks: ``"relu_cpu" not implemented for 'Bool'``."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{dtypes.scalar_type_name(dtype)}'")


def require_tensors(name: str, **args) -> None:
    """PyTorch's argument check for functions without a Python-number overload (``torch.maximum(x, 1.0)``).

    Raises:
        TypeError: "maximum(): argument 'other' (position 2) must be Tensor, not float".
    """
    for i, (arg, v) in enumerate(args.items()):
        if not isinstance(v, (Tensor, np.ndarray, np.generic)):
            raise TypeError(f"{name}(): argument '{arg}' (position {i + 1}) must be Tensor, not {type(v).__name__}")


def rule_values(x) -> np.ndarray:
    """The numpy values of a rule argument (a Tensor under create_graph, else an array)."""
    return x.data if isinstance(x, Tensor) else np.asarray(x)


#: The NumPy names PyTorch's Python argument parser accepts for four of its parameter names, NumPy's name →
#: PyTorch's (torch/csrc/utils/python_arg_parser.cpp, ``numpy_compatibility_arg_names``): ``x.sum(axis=0)``,
#: ``torch.mean(x, axis=1, keepdims=True)``, ``torch.add(x1=a, x2=b)``.
NUMPY_KEYWORDS = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input", "x2": "other"}


def numpy_keywords(func, kwargs: dict) -> dict:
    """``kwargs`` of a call of ``func`` with NumPy's parameter names (:data:`NUMPY_KEYWORDS`) renamed to PyTorch's,
    as PyTorch's argument parser does for its functions and Tensor methods: only for an entry of the op table
    (an op, a composite or a Tensor method of one) that has PyTorch's parameter and not NumPy's; anything else,
    and a call that names both (``sum(x, dim=0, axis=1)``, which PyTorch refuses too), is left as it is.
    ``kwargs`` itself is not changed."""
    if NUMPY_KEYWORDS.keys().isdisjoint(kwargs):
        return kwargs
    name = getattr(func, "__name__", None)
    target = REGISTRY.get(name) if isinstance(getattr(func, "__self__", None), Tensor) else func
    if target is None or getattr(target, "name", None) not in REGISTRY:
        return kwargs
    params = target.param_kinds if isinstance(target, Op) else {p: k for p, k, _ in param_list(target)}
    out = {}
    for k, v in kwargs.items():
        torch_name = NUMPY_KEYWORDS.get(k)
        if torch_name is not None and k not in params and torch_name in params and torch_name not in kwargs:
            k = torch_name
        out[k] = v
    return out
