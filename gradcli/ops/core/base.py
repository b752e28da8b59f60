"""The machinery of the op table: declaring ops and the functions built on them, and applying an op.

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
  :meth:`Op.defjvp`); it runs on Tensors only, recorded, so that tangents are differentiable in turn.

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

Called with Tensors (or Python numbers and lists), an op returns a Tensor and records the graph; called with
numpy arrays only (as rules do), it computes on them and returns an array.

A forward may return a tuple: by default only its first array is differentiable (``max(x, dim)``'s values, not
its indices); with ``multi_output=True`` (split, unbind) every array is an output of one graph node, as in
PyTorch, and the rule's first argument is the tuple of the outputs' gradients.
"""

from __future__ import annotations

import inspect
import operator
from typing import Protocol

import numpy as np

from ...engine import dtypes, limits
from ...engine.graph import SAVED_TANGENTS, MultiNode, Node
from ...engine.context import state as _state
from ...engine.rules import (ARG_INPUT, ARG_NEEDS_INPUT_GRAD, ARG_PARAM, ARG_RESULT, ARG_SHAPE, ARG_VARARGS, CALL_PLAN,
                     CALL_SAVED, CALL_SAVED_NEEDS, CALL_SAVED_PARAMS, CALL_SAVED_PARAMS_NEEDS)
from ...engine.tensor import (REQUIRES_GRAD_DTYPE_ERROR, Tensor, fw_tangent, normalize_dim, normalize_dims,  # noqa: F401
                      to_tensor)

#: Every callable of the language and of ``import gradcli``, by PyTorch name (aliases included): Op instances
#: and the functions declared with :func:`composite`. Filled by the op modules at import time.
REGISTRY: dict[str, object] = {}

#: The kind of each registry entry, for ``gradcli ops``: "op", "creation", "function".
KINDS: dict[str, str] = {}

#: The names of the Tensor methods installed by the op table (the language may call these).
METHODS: set[str] = set()

#: The kinds of entry (``gradcli ops --kind``): ops (differentiable or not), tensor factories, other functions.
ENTRY_KINDS = ("op", "creation", "function")


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


def composite(name: str, *, grad_fn=_REQUIRED, note=_REQUIRED, method=False, aliases: tuple = (),
              kind: str = "op", differentiable: bool = True):
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
        aliases, method, kind, signature, summary: see :class:`Entry` (``kind`` is always "op").
        domain: where the op is defined and differentiable, as an open interval ``(low, high)`` of its input's
            values (``(0, inf)`` for log), or None for everywhere; tests sample inputs there.
        multi_output: the forward returns a tuple of arrays that are all differentiable outputs of one
            :class:`~gradcli.engine.graph.MultiNode` (torch.split's SplitBackward0); the rule's first argument is
            then the tuple of their gradients (zeros for outputs that got none).
        vjp: the derivative rule (reverse mode), or None until :meth:`defvjp`.
        jvp: the forward-mode rule (Jacobian-vector product), or None until :meth:`defjvp`.
        jvp_plan: the arguments of ``jvp``, ``(kind, index)`` per parameter (set by :meth:`defjvp`).
        jvp_kind: "rule" (:meth:`defjvp`), "linear" (:meth:`defjvp_linear`), "elementwise"
            (:meth:`defjvp_elementwise`), or None without a forward-mode rule.
        vjp_plan: how to build the rule's arguments: ``(kind, index)`` per argument, kinds from
            :mod:`gradcli.engine.rules` (set by :meth:`defvjp`).
        vjp_call: how the engine calls the rule, a call code of :mod:`gradcli.engine.rules`.
        saves: whether the rule needs saved values (then a second backward without retain_graph fails).
        save_plan: which values a node saves, in the rule's order: input indices, ``ninputs`` for the result.
        needs_shapes: the rule takes an input's shape (nodes then record the input shapes).
    """

    kind = "op"

    def __init__(self, forward, *, name: str, grad_fn, note: str, inputs: int = 1, promote: str | None = "same",
                 differentiable: bool = True, method=False, aliases: tuple = (), multi_output: bool = False,
                 domain: tuple | None = None):
        self.forward = forward
        self.name = name
        self.grad_fn = grad_fn
        self.note = note
        self.ninputs = inputs
        self.promote = promote
        self.differentiable = differentiable
        self.method = method
        self.aliases = tuple(aliases)
        self.multi_output = multi_output
        self.domain = domain
        self.vjp = None
        self.jvp = None
        self.jvp_plan = ()
        self.jvp_kind = None
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
        self.__doc__ = forward.__doc__
        self.__name__ = self.name

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

    def defjvp_unsupported(self, aten: str):
        """Declare that forward AD through the op fails, as PyTorch's does for the ops whose derivative is
        "not implemented" (floor_divide): NotImplementedError "Trying to use forward AD with aten::floor_divide
        that does not support it." Returns the op."""
        def rule():
            raise NotImplementedError(f"Trying to use forward AD with aten::{aten} that does not support it.")

        return self.defjvp(rule)

    def defjvp_linear(self):
        """Declare the op linear in its tensor inputs taken together (derivatives.yaml's ``auto_linear``: views,
        reshapes, sums, add): its tangent is the op applied to the tangents, with the same parameters. Returns
        the op."""
        self.jvp = _linear_jvp
        self.jvp_kind = "linear"
        return self

    def defjvp_multilinear(self):
        """Declare the op linear in each tensor input separately (mm, bmm, mv, dot, outer): its tangent is the sum
        over the inputs with a tangent of the op with that input replaced by its tangent (derivatives.yaml mm:
        ``result: self_t.mm(mat2_p) + self_p.mm(mat2_t)``). Returns the op."""
        self.jvp = _linear_jvp
        self.jvp_kind = "multilinear"
        return self

    def defjvp_loss(self):
        """Declare the op a pointwise loss with a ``reduction`` parameter (mse_loss, binary_cross_entropy): with
        "none" it is elementwise (:meth:`defjvp_elementwise`); with "mean" or "sum" its output is 0-d and its
        tangent is the gradient dotted with the tangents, ``sum_k sum(vjp(1)[k] * t_k)`` (derivatives.yaml:
        ``apply_loss_reduction(..., reduction)`` of the elementwise tangent). Returns the op."""
        if self.vjp is None or "reduction" not in self.param_names:
            raise TypeError(f"{self.name}: defjvp_loss needs the VJP rule of an op with a reduction parameter")
        self.jvp = _elementwise_jvp
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
        self.jvp = _reduction_jvp
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
        self.jvp = _elementwise_jvp
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
            return _apply(self, args)
        n = self.ninputs
        for a in args[:n]:
            if type(a) is Tensor:
                return _apply(self, args)
        for a in args[:n]:
            # numpy arrays, and the numpy scalars that numpy returns for 0-d results, are the rules' values
            if isinstance(a, (np.ndarray, np.generic)):
                return self.forward(*(np.asarray(x) if isinstance(x, np.generic) else x for x in args[:n]),
                                    *args[n:])
        return _apply(self, args)

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


def op(name: str, *, grad_fn, note: str, inputs: int = 1, promote: str | None = "same",
       differentiable: bool = True, method=False, aliases: tuple = (), multi_output: bool = False,
       public: bool | None = None, domain: tuple | None = None):
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
    """
    def wrap(forward):
        o = Op(forward, name=name, grad_fn=grad_fn, note=note, inputs=inputs, promote=promote,
               differentiable=differentiable, method=method, aliases=aliases, multi_output=multi_output,
               domain=domain)
        if public if public is not None else not name.startswith("_"):
            for n in (name,) + o.aliases:
                register(n, o, "op")
                if method is True:
                    _install_op_method(o, n)
                elif method:
                    install_method(n, method)
        return o

    return wrap


def _install_op_method(o: Op, mname: str) -> None:
    def method(self, *args, **kwargs):
        if kwargs or len(args) + 1 != o.nargs:
            return o(self, *args, **kwargs)
        return _apply(o, (self,) + args)  # every argument given: no binding or defaults to handle

    method.__name__ = mname
    method.__doc__ = o.__doc__
    install_method(mname, method)


def positional(o: Op, nargs: int):
    """A function ``f(a)`` (``nargs`` 1) or ``f(a, b)`` (``nargs`` 2) that applies ``o`` to Tensor ``a`` (and
    ``b``) with the other parameters at their defaults: ``o(a, b)`` without the keyword and default
    handling of :meth:`Op.__call__`, for Tensor's operators (``Tensor.__add__ = positional(add, 2)``)."""
    if nargs != o.ninputs or nargs not in (1, 2):
        raise ValueError(f"positional({o.name}, {nargs}): the op takes {o.ninputs} tensor inputs")
    rest = o.defaults[nargs:] if o.defaults is not None else ()
    # (the argument tuple is built directly for no parameter or one, add's alpha: that is cheaper than a tuple
    # concatenation, itself cheaper than unpacking, ``(a, b, *rest)``)
    if nargs == 1:
        def f(a):
            return _apply(o, (a,) + rest, rest)
    elif not rest:
        def f(a, b):
            return _apply(o, (a, b), rest)
    elif len(rest) == 1:
        (r0,) = rest

        def f(a, b):
            return _apply(o, (a, b, r0), rest)
    else:
        def f(a, b):
            return _apply(o, (a, b) + rest, rest)
    f.__name__ = f.__qualname__ = o.name
    f.__doc__ = o.__doc__
    return f


def _is_number(v) -> bool:
    return isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating))


def _apply(o: Op, args, params=None):
    """Apply an op to Tensors (and Python numbers): promote, run the forward, record the graph. ``args`` are
    all the op's arguments; ``params``, if given, is ``args[ninputs:]`` (a shared tuple saves memory per node)."""
    # This function is gradcli's per-op overhead (benchmarks/README.md): the common case, one or two inputs of
    # one floating dtype (or a float Tensor and a Python number), runs inline below; everything else takes
    # the general path (_fast_promote/_promote, _wrap_output). Both build their node with _new_node and give the
    # same results (tests/engine/test_perf_paths.py).
    if _state.fw_level is not None:  # inside torch.autograd.forward_ad.dual_level: tangents may flow
        return _fw_apply(o, args, params)
    n = o.ninputs
    a = args[0]
    if n <= 2 and type(a) is Tensor:
        da = a.data
        dtype = da.dtype
        # (numpy attribute reads are slow next to an identity test: the usual float dtypes are singletons)
        if dtype is _F32 or dtype is _F64 or dtype.kind == "f":
            b = db = None
            if n == 2:
                b = args[1]
                if type(b) is Tensor:
                    db = b.data
                    if db.dtype is not dtype and db.dtype != dtype:
                        db = None
                elif (type(b) is float or type(b) is int) and o.promote is not None:
                    # a number takes a float tensor's dtype (PyTorch); repeated numbers share one array
                    db = _NUMBERS.get((b, dtype))
                    if db is None:
                        db = _number_array(b, dtype)
            if n == 1 or db is not None:
                if n == 2 and da.size * db.size > limits.current.elements:
                    limits.check_operands((da, db))  # before the forward allocates a broadcast result
                if params is None:
                    params = args[n:]
                try:
                    if n == 1:
                        out = o.forward(da, *params) if params else o.forward(da)
                    else:
                        out = o.forward(da, db, *params) if params else o.forward(da, db)
                except ValueError as e:
                    raise _forward_error(e, (da, db)) from None
                if type(out) is not np.ndarray:
                    if type(out) is tuple:
                        return _tuple_output(o, out, args, (da,) if n == 1 else (da, db), dtype)
                    out = np.asarray(out)
                odt = out.dtype
                if not (o.differentiable and _state.grad_enabled and (odt is dtype or odt.kind == "f")):
                    return Tensor(out)
                # edges: the node that made each input, the input itself if it is a leaf that requires grad,
                # None if it does not require grad (``t.grad_fn or t``: a Node is always true)
                ea = (a.grad_fn or a) if a.requires_grad else None
                if n == 1:
                    if ea is None:
                        return Tensor(out)
                    edges = (ea,)
                    if type(ea) is Node:  # Node.uses, counted here rather than in Node.__init__
                        ea.uses += 1
                    elif type(ea) is MultiNode:  # an output of a node with several: the edge says which
                        edges = _output_edges(edges, args)
                    return Tensor(out, True, _new_node(o, edges, params, (da,), out, odt, dtype, True))
                eb = (b.grad_fn or b) if type(b) is Tensor and b.requires_grad else None
                if ea is None and eb is None:
                    return Tensor(out)
                edges = (ea, eb)
                if type(ea) is Node:
                    ea.uses += 1
                elif type(ea) is MultiNode:
                    edges = _output_edges(edges, args)
                if type(eb) is Node:
                    eb.uses += 1
                elif type(eb) is MultiNode:
                    edges = _output_edges(edges, args)
                return Tensor(out, True, _new_node(o, edges, params, (da, db), out, odt, dtype, True))
    return _apply_general(o, args)


def _fw_apply(o: Op, args, params):
    """:func:`_apply` under a forward-AD level: the primal as usual, then, if an input is a dual tensor, the
    output's tangent by the op's JVP rule (:meth:`Op.defjvp`), computed with forward AD off (the rule sees
    primals, never duals) and recorded (so that the tangent is differentiable, as PyTorch's)."""
    n = o.ninputs
    tangents = [fw_tangent(a) if type(a) is Tensor else None for a in args[:n]]
    level = _state.fw_level
    _state.fw_level = None
    try:
        out = _apply(o, args, params)
        if all(t is None for t in tangents):
            return out
        outs = out if type(out) is tuple else (out,)
        if not o.differentiable or outs[0].data.dtype.kind != "f":
            return out
        if o.jvp is None:
            raise NotImplementedError(fw_not_implemented(o.name))
        kind = o.jvp_kind
        if kind == "rule":
            ts = o.jvp(*_jvp_args(o, args, tangents, out))
        elif kind == "linear":
            # a non-float tensor input (cat of ints and floats) has a zero tangent of its dtype
            filled = [Tensor(np.zeros_like(a.data)) if t is None and type(a) is Tensor else t
                      for a, t in zip(args, _filled_tangents(o, args, tangents))]
            ts = _apply(o, tuple(filled) + tuple(args[n:]))
        elif kind == "multilinear":  # one term per input with a tangent: the op with that input's tangent
            ts = None
            for k, t in enumerate(tangents):
                if t is not None:
                    term = _apply(o, tuple(args[:k]) + (t,) + tuple(args[k + 1:]))
                    ts = term if ts is None else ts + term
        elif kind == "reduction":
            ts = _reduction_jvp(o, args, tangents, outs[0])
        elif kind == "loss" and args[n + o.param_names.index("reduction")] != "none":
            # a 0-d loss: the gradient (the VJP of 1) dotted with the tangents
            _sum = REGISTRY["sum"]  # (the op module of sum imports this one)
            ts = None
            needs = tuple([t is not None for t in tangents])
            g = o.vjp(*_vjp_args(o, Tensor(np.ones_like(outs[0].data)), args, outs[0], needs))
            g = g if type(g) is tuple else (g,)
            for k, t in enumerate(tangents):
                if t is not None and g[k] is not None:
                    term = _sum(g[k] * t)
                    ts = term if ts is None else ts + term
        else:  # elementwise: one VJP per input with a tangent, the tangent as the output's gradient
            ts = None
            needs = tuple([t is not None for t in tangents])
            for k, t in enumerate(tangents):
                if t is not None:
                    g = o.vjp(*_vjp_args(o, t, args, out, needs))
                    g = g[k] if type(g) is tuple else g
                    if g is not None:
                        ts = g if ts is None else ts + g
        if o.multi_output:
            for x, t in zip(outs, ts):
                _set_tangent(x, t, level)
        else:
            _set_tangent(outs[0], ts, level)
        node = outs[0].grad_fn
        if node is not None and o.save_plan:  # forward over reverse: the saved values' tangents
            saved = {}
            for slot, j in enumerate(o.save_plan):
                t = fw_tangent_at(outs[0], level) if j == n else tangents[j]
                if t is not None:
                    saved[slot] = t
            if saved:
                SAVED_TANGENTS[node] = (level, saved)
    finally:
        _state.fw_level = level
    return out


def fw_tangent_at(t: Tensor, level):
    """The tangent of ``t`` at ``level`` (while forward AD is off to compute a rule), or None."""
    fw = getattr(t, "_fw", None)
    return fw[1] if fw is not None and fw[0] == level else None


def fw_not_implemented(name: str) -> str:
    """PyTorch's message (a NotImplementedError) for forward AD through an op without a forward-mode rule."""
    return (f"Trying to use forward AD with {name} that does not support it because it has not been "
            f"implemented yet.\nPlease file an issue to PyTorch at "
            f"https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can "
            f"prioritize its implementation or submit a PR adding the implementation to derivatives.yaml")


def _linear_jvp(*args):
    raise AssertionError("the JVP of an op declared linear is the op itself (see _fw_apply)")


def _elementwise_jvp(*args):
    raise AssertionError("the JVP of an op declared elementwise is its VJP (see _fw_apply)")


def _reduction_jvp(o: Op, args, tangents, out: Tensor):
    # Op.defjvp_reduction: the partial derivatives (the VJP of ones) times the tangent, summed per slice.
    _sum = REGISTRY["sum"]  # (the op module of sum imports this one)
    x, t = args[0], tangents[0]
    ones = Tensor(np.ones_like(out.data))
    p = o.vjp(*_vjp_args(o, ones, args, out, (True,)))
    if type(p) is tuple:
        p = p[0]
    if p is None:  # no derivative (the norm of order 0): a zero tangent
        return Tensor(np.zeros_like(out.data))
    prod = p * t
    names = o.param_names
    dim = args[1 + names.index("dim")] if "dim" in names else None
    keepdim = bool(args[1 + names.index("keepdim")]) if "keepdim" in names else False
    ndim = x.data.ndim
    axes = tuple(range(ndim)) if dim is None or dim == () else normalize_dims(dim, ndim)
    if prod.data.shape != x.data.shape:
        prod = prod.expand(x.data.shape)
    r = _sum(prod, axes, keepdim) if ndim else prod
    return r if r.data.shape == out.data.shape else r.reshape(out.data.shape)


def _filled_tangents(o: Op, args, tangents) -> list:
    # per tensor input: its tangent; zeros for a float Tensor without one, 0.0 for a number, else None
    out = []
    for a, t in zip(args[:o.ninputs], tangents):
        if t is None:
            if type(a) is Tensor:
                t = Tensor(np.zeros_like(a.data)) if a.data.dtype.kind == "f" else None
            elif _is_number(a):
                t = 0.0
        out.append(t)
    return out


def _vjp_args(o: Op, grad, args, out, needs) -> list:
    # The VJP rule's arguments (as Node._rule_args builds them) from the call's Tensors, ``grad`` a tangent.
    n = o.ninputs
    vals = [grad]
    for kind, i in o.vjp_plan:
        if kind == ARG_INPUT or kind == ARG_RESULT:
            j = o.save_plan[i]
            vals.append(out if j == n else args[j])
        elif kind == ARG_PARAM:
            vals.append(args[n + i])
        elif kind == ARG_SHAPE:
            a = args[i]
            vals.append(None if a is None else tuple(np.shape(a.data if type(a) is Tensor else a)))
        elif kind == ARG_VARARGS:
            vals.append(tuple(args[n + i:]))
        else:  # ARG_NEEDS_INPUT_GRAD
            vals.append(needs)
    return vals


def _jvp_args(o: Op, args, tangents, out) -> list:
    # The JVP rule's arguments in the order it names them (Op.jvp_plan).
    n = o.ninputs
    vals = []
    filled = None
    for kind, i in o.jvp_plan:
        if kind == "t":
            if filled is None:
                filled = _filled_tangents(o, args, tangents)
            vals.append(filled[i])
        elif kind == "input":
            vals.append(args[i])
        elif kind == "result":
            vals.append(out)
        elif kind == "param":
            vals.append(args[n + i])
        elif kind == "varargs":
            vals.append(tuple(args[n + i:]))
        else:  # shape
            a = args[i]
            vals.append(None if a is None else tuple(np.shape(a.data if type(a) is Tensor else a)))
    return vals


def _set_tangent(out: Tensor, t, level) -> None:
    """Attach ``t`` (a rule's tangent) to ``out`` at ``level``, expanded to its shape and cast to its dtype."""
    if t is None:
        return
    if type(t) is not Tensor:
        t = Tensor(np.broadcast_to(np.asarray(t, dtype=out.data.dtype), out.data.shape).copy())
    if t.data.shape != out.data.shape:
        t = t.expand(out.data.shape)
    if t.data.dtype != out.data.dtype:
        t = t.to(dtypes.from_numpy(out.data.dtype))
    out._fw = (level, t)


def _new_node(o: Op, edges, params, datas, out: np.ndarray, odt, dtype, counted: bool = False) -> Node:
    """The graph node of ``out = o.forward(*datas, *params)``, for both paths of :func:`_apply`.

    Args:
        edges: per tensor input, the Node (or OutputEdge) that made it, the leaf that requires grad, or None.
        datas: a tuple of the arrays the op computed on (in ``dtype``; None for an absent optional input).
        odt: ``out.dtype`` (the caller has read it: numpy's attribute reads are slow).
        dtype: the dtype the op computed in (gradients of the inputs are computed in it).
        counted: the caller has already counted the new use of each Node in ``edges`` (``Node.uses``).

    The node saves what the rule names (:attr:`Op.save_plan`): inputs as the op computed on them and the
    output, never Tensors (the engine rebuilds Tensors from them and the edges only for create_graph).

    Raises:
        RuntimeError: PyTorch's "the derivative for 'x' is not implemented." for an op without a rule.
    """
    plan = o.save_plan
    if not plan:
        if o.vjp is None:  # (an op without a rule saves nothing)
            raise RuntimeError(f"the derivative for '{o.name}' is not implemented.")
        saved = ()
    elif len(plan) == 1:
        i = plan[0]
        saved = (out if i == o.ninputs else datas[i],)
    else:
        saved = o.save_getter(datas + (out,))
    in_shapes = tuple([None if d is None else _shape(d.shape) for d in datas]) if o.needs_shapes else None
    shape = out.shape
    return Node(o, edges, saved, params, in_shapes, _SHAPES.get(shape) or _shape(shape), odt, dtype, counted)


def _apply_general(o: Op, args):
    """:func:`_apply` for any arguments: promotion, forward, :func:`_wrap_output`."""
    n = o.ninputs
    datas, dtype = _fast_promote(o, args)
    if datas is None:
        datas, dtype = _promote(o, args[:n])
    if n > 1:
        limits.check_operands(datas)  # before the forward allocates a broadcast result
    try:
        out = o.forward(*datas, *args[n:]) if len(args) > n else o.forward(*datas)
    except ValueError as e:
        raise _forward_error(e, datas) from None
    if type(out) is tuple:
        return _tuple_output(o, out, args, datas, dtype)
    return _wrap_output(o, out, args, datas, dtype)


def infer_size(*shapes) -> tuple:
    """The broadcast shape of ``shapes``, folded left to right as PyTorch's at::infer_size does (each pair
    compared from the last dimension).

    Raises:
        RuntimeError: PyTorch's "The size of tensor a (3) must match the size of tensor b (4) at non-singleton
            dimension 0" for the first pair that does not broadcast.
    """
    acc = ()
    for shape in shapes:
        ndim = max(len(acc), len(shape))
        a = (1,) * (ndim - len(acc)) + tuple(acc)
        b = (1,) * (ndim - len(shape)) + tuple(shape)
        for i in range(ndim - 1, -1, -1):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                raise RuntimeError(f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at "
                                   f"non-singleton dimension {i}")
        acc = tuple(y if x == 1 else x for x, y in zip(a, b))
    return acc


def broadcast_error(error: ValueError, *arrays) -> Exception:
    """What numpy's ValueError for operands that do not broadcast becomes: PyTorch's RuntimeError
    (:func:`infer_size`) naming the first pair that does not broadcast; any other ValueError unchanged.
    ``arrays`` are the operands (None for absent ones)."""
    try:
        infer_size(*(np.shape(a) for a in arrays if a is not None))
    except RuntimeError as e:
        return e
    return error


def _forward_error(e: ValueError, datas) -> Exception:
    """What a forward's ValueError becomes: PyTorch's RuntimeError for operands that do not broadcast."""
    if "could not be broadcast" not in str(e):
        return e
    err = broadcast_error(e, *datas)
    return err if err is not e else RuntimeError("operands could not be broadcast together")


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)

#: Python numbers as read-only 0-d arrays, by (number, dtype): ``x * 2`` in a loop shares one array.
_NUMBERS: dict = {}


def _number_array(v, dtype) -> np.ndarray:
    a = np.asarray(v, dtype=dtype)
    if v and v == v:  # not zeros (0.0 and -0.0 are equal keys but differ) nor NaN
        if len(_NUMBERS) >= 4096:
            _NUMBERS.clear()
        a.flags.writeable = False
        _NUMBERS[(v, dtype)] = a
    return a


#: Shape tuples shared between nodes (a graph holds many of the same few shapes).
_SHAPES: dict = {}


def _shape(shape: tuple) -> tuple:
    s = _SHAPES.get(shape)
    if s is None:
        if len(_SHAPES) >= 4096:
            _SHAPES.clear()
        _SHAPES[shape] = s = shape
    return s


def _output_edges(edges, args) -> tuple:
    """``edges`` (per tensor input: its grad_fn, the leaf itself, or None) with each MultiNode replaced by the
    :class:`~gradcli.engine.graph.OutputEdge` of the output that the input is."""
    return tuple([e.outputs[t._output_nr] if type(e) is MultiNode else e for e, t in zip(edges, args)])


def _tuple_output(o: Op, out, args, datas, dtype):
    if o.multi_output:
        return _multi_output(o, out, args, datas, dtype)
    # (values, indices)-style results: only the first output is differentiable.
    first = _wrap_output(o, out[0], args, datas, dtype)
    return (first,) + tuple(Tensor(np.asarray(x)) for x in out[1:])


def _multi_output(o: Op, out, args, datas, dtype) -> tuple:
    """The outputs of an op with several differentiable ones (``Op.multi_output``) as Tensors sharing one
    :class:`~gradcli.engine.graph.MultiNode` (each tensor's ``output_nr`` its index), when recording."""
    outs = [x if type(x) is np.ndarray else np.asarray(x) for x in out]
    n = o.ninputs
    if not (o.differentiable and _state.grad_enabled and outs and outs[0].dtype.kind == "f" and
            any(type(t) is Tensor and t.requires_grad for t in args[:n])):
        return tuple(Tensor(x) for x in outs)
    if o.vjp is None:
        raise RuntimeError(f"the derivative for '{o.name}' is not implemented.")
    edges = _output_edges([(t.grad_fn or t) if type(t) is Tensor and t.requires_grad else None
                           for t in args[:n]], args)
    plan = o.save_plan
    saved = tuple(datas[i] for i in plan)
    odt = outs[0].dtype
    node = MultiNode(o, edges, saved, args[n:],
                     tuple([None if d is None else _shape(d.shape) for d in datas]) if o.needs_shapes else None,
                     tuple([_shape(x.shape) for x in outs]), odt, odt if dtype is None else dtype)
    result = []
    for k, x in enumerate(outs):
        t = Tensor(x, True, node)
        t._output_nr = k
        result.append(t)
    return tuple(result)


def _fast_promote(o: Op, args):
    """The common cases without the general promotion: Tensors of one dtype, or float Tensors with Python
    numbers (a float tensor's dtype wins over wrapped numbers). ``args`` are the op's arguments (tensor inputs
    first). Returns (None, None) where it does not apply.

    Gives the same arrays and dtype as :func:`_promote` where it applies (tests/engine/test_perf_paths.py
    checks it), except that with ``promote=None`` it returns the inputs' common dtype rather than None."""
    tensors = args[:o.ninputs]
    dtype = None
    for a in tensors:
        if type(a) is Tensor:
            d = a.data.dtype
            if dtype is None:
                dtype = d
            elif d != dtype:
                return None, None
        elif not (type(a) is float or type(a) is int):
            return None, None
    if dtype is None:
        return None, None
    if o.promote is None:
        return [a.data if type(a) is Tensor else np.asarray(a) for a in tensors], dtype
    if dtype.kind != "f":
        return None, None
    return [a.data if type(a) is Tensor else np.asarray(a, dtype=dtype) for a in tensors], dtype


def _promote(o: Op, tensors):
    """PyTorch's type promotion of the tensor arguments (see :mod:`gradcli.engine.dtypes`); returns the arrays to
    compute on and the dtype they share (None for ops that do not promote)."""
    wrapped = []
    for i, a in enumerate(tensors):
        if type(a) is not Tensor and a is not None:
            if _is_number(a):
                wrapped.append(i)
            elif not isinstance(a, Tensor):
                raise TypeError(f"{o.name}(): argument '{o.input_names[i]}' must be Tensor, not "
                                f"{type(a).__name__}")
    datas = [None if a is None else (a.data if i not in wrapped else a) for i, a in enumerate(tensors)]
    dtype = None
    if o.promote is not None:
        dim, zero = [], []
        for i, d in enumerate(datas):
            if d is None or i in wrapped:
                continue
            (dim if d.ndim else zero).append(d.dtype)
        dtype = dtypes.result_type(dim, zero, [tensors[i] for i in wrapped])
        if o.promote == "float" and dtype.kind != "f":
            dtype = dtypes.get_default_dtype().np
        for i, d in enumerate(datas):
            if d is None:
                continue
            if i in wrapped:
                datas[i] = np.asarray(d, dtype=dtype)
            elif d.dtype != dtype:
                datas[i] = d.astype(dtype)
    else:
        for i in wrapped:
            datas[i] = np.asarray(datas[i])
    return datas, dtype


def _wrap_output(o: Op, out, args, datas, dtype):
    """The op's result as a Tensor, with a graph Node when it is differentiable and an input requires grad."""
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    odt = out.dtype
    if not (o.differentiable and _state.grad_enabled and odt.kind == "f"):
        return Tensor(out)
    # edges as in _apply
    n = o.ninputs
    edges = []
    requires = False
    for t in args[:n]:
        if type(t) is Tensor and t.requires_grad:
            requires = True
            edges.append(t.grad_fn or t)
        else:
            edges.append(None)
    if not requires:
        return Tensor(out)
    if dtype is None:
        dtype = odt
    if o.promote is None and o.saved_inputs:
        # ops that do not promote may have computed on mixed dtypes: rules get their inputs in the node's dtype
        datas = [d if d is None or d.dtype == dtype else d.astype(dtype) for d in datas]
    datas = tuple(datas)
    return Tensor(out, True, _new_node(o, _output_edges(edges, args), args[n:], datas, out, odt, dtype))


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
