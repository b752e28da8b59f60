"""Applying an op in forward mode: the output's tangent from the inputs' tangents (Jacobian-vector products).

Inside ``torch.autograd.forward_ad.dual_level`` (:mod:`gradcli.api.forward_ad`, and the transforms built on it)
every op goes through :func:`_fw_apply`: the primal as in reverse mode (:func:`gradcli.ops.core.apply._apply`),
then, when an input is a dual tensor, the output's tangent by the forward-mode rule the op declared
(:meth:`~gradcli.ops.core.declare.Op.defjvp` and its shorthands). Each way of declaring it is a kind
(``Op.jvp_kind``), and :data:`JVP_KINDS` maps each kind to the function that computes the tangent. The rules
run on Tensors with forward AD off, recorded, so that tangents are differentiable in turn (forward over reverse,
as PyTorch's).

:mod:`gradcli.ops.core.apply` is below this module and calls :func:`_fw_apply` through the hook it is given here
(:func:`~gradcli.ops.core.apply.install_forward_mode`, at import; the package ``gradcli.ops.core`` imports this
module).
"""

from __future__ import annotations

import numpy as np

from ...engine import dtypes
from ...engine.context import state as _state
from ...engine.graph import node_extra
from ...engine.rules import ARG_INPUT, ARG_PARAM, ARG_RESULT, ARG_SHAPE, ARG_VARARGS
from ...engine.tensor import Tensor, fw_tangent, normalize_dims
from .apply import _apply, _is_number, install_forward_mode
from .declare import REGISTRY, Op


def _fw_apply(o: Op, args, params):
    """:func:`~gradcli.ops.core.apply._apply` under a forward-AD level: the primal as usual, then, if an input is
    a dual tensor, the output's tangent by the op's JVP rule (:meth:`Op.defjvp`; :data:`JVP_KINDS`), computed
    with forward AD off (the rule sees primals, never duals) and recorded (so that the tangent is
    differentiable, as PyTorch's).

    Raises:
        NotImplementedError: PyTorch's message (:func:`fw_not_implemented`) for a differentiable op without a
            forward-mode rule, when an input has a tangent.
    """
    n = o.ninputs
    tangents = [fw_tangent(a) if type(a) is Tensor else None for a in args[:n]]
    level = _state.fw_level
    _state.fw_level = None
    try:
        out = o.apply_fn(o, args, params)  # (_apply for the op's arity, without the dispatch)
        if all(t is None for t in tangents):
            return out
        outs = out if type(out) is tuple else (out,)
        if not o.differentiable or outs[0].data.dtype.kind != "f":
            return out
        if o.jvp is None:
            raise NotImplementedError(fw_not_implemented(o.name))
        ts = JVP_KINDS[o.jvp_kind](o, args, tangents, out, outs)
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
                node_extra(node).fw_saved = (level, saved)
    finally:
        _state.fw_level = level
    return out


# ------------------------------------------------------------------------ the output's tangent, by kind of rule
# Each takes the op, its arguments, the tangents of its tensor inputs (None where there is none), its result as
# the op returned it (``out``: a Tensor or a tuple) and as a tuple (``outs``), and returns the output's tangent
# (a tuple of them for ``multi_output`` ops; None for none).


def _jvp_rule(o: Op, args, tangents, out, outs):
    # Op.defjvp: the op's own rule, given the values it names
    return o.jvp(*_jvp_args(o, args, tangents, out))


def _jvp_linear(o: Op, args, tangents, out, outs):
    # Op.defjvp_linear: the op applied to the tangents, with the same parameters; a non-float tensor input (cat
    # of ints and floats) has a zero tangent of its dtype
    filled = [Tensor(np.zeros_like(a.data)) if t is None and type(a) is Tensor else t
              for a, t in zip(args, _filled_tangents(o, args, tangents))]
    return _apply(o, tuple(filled) + tuple(args[o.ninputs:]))


def _jvp_multilinear(o: Op, args, tangents, out, outs):
    # Op.defjvp_multilinear: one term per input with a tangent, the op with that input replaced by its tangent
    ts = None
    for k, t in enumerate(tangents):
        if t is not None:
            term = _apply(o, tuple(args[:k]) + (t,) + tuple(args[k + 1:]))
            ts = term if ts is None else ts + term
    if ts is not None and _zero_terms_recorded(o, args):
        for k, t in enumerate(tangents):
            if t is None and _has_zero_tangent(args[k]):
                ts = _with_zero_term(ts, _apply(o, tuple(args[:k]) + (_zero_tangent(args[k]),) + tuple(args[k + 1:])))
    return ts


def _jvp_elementwise(o: Op, args, tangents, out, outs):
    # Op.defjvp_elementwise: one VJP per input with a tangent, the tangent as the output's gradient
    ts = None
    needs = tuple([t is not None for t in tangents])
    for k, t in enumerate(tangents):
        if t is not None:
            g = o.vjp(*_vjp_args(o, t, args, out, needs))
            g = g[k] if type(g) is tuple else g
            if g is not None:
                ts = g if ts is None else ts + g
    if ts is not None and _zero_terms_recorded(o, args):
        for k, t in enumerate(tangents):
            if t is None and _has_zero_tangent(args[k]):
                only = tuple([j == k for j in range(len(tangents))])
                g = o.vjp(*_vjp_args(o, _zero_tangent(args[k]), args, out, only))
                ts = _with_zero_term(ts, g[k] if type(g) is tuple else g)
    return ts


# PyTorch's forward-mode formulas are sums of one term per input (derivatives.yaml, "result: other_t * self_p +
# self_t * other_p" for mul); an input without a tangent, while another has one, gets a zero tangent there
# (at::_efficientzerotensor), and the term is still recorded: ``y * 2.0`` under jacfwd over a ``y`` that requires
# grad has a tangent ``2.0_t * y + y_t * 2.0`` that requires grad (while ``y + 2.0``'s, ``y_t + 2.0_t``, does
# not). gradcli's terms for those inputs: their value is zero (PyTorch's zero tensor gives zero even times inf),
# so only their history is kept, joined to the tangent by a where that always selects the tangent.
def _zero_terms_recorded(o: Op, args) -> bool:
    # a term for a missing tangent is recorded only when an input requires grad (and grad mode is on)
    return _state.grad_enabled and any(type(a) is Tensor and a.requires_grad for a in args[:o.ninputs])


def _has_zero_tangent(a) -> bool:
    # a float Tensor or a number (a wrapped number in PyTorch: a Tensor argument there) gets a zero tangent
    return (type(a) is Tensor and a.data.dtype.kind == "f") or (_is_number(a) and not isinstance(a, bool))


def _zero_tangent(a) -> Tensor:
    if type(a) is Tensor:
        return Tensor(np.zeros_like(a.data))
    return Tensor(np.zeros((), dtype=np.float64 if isinstance(a, (int, float)) else np.complex128))


def _with_zero_term(ts, term):
    """``ts`` with the history of ``term`` (a zero-valued term of the tangent) when it has one: the same values
    (no ``+ 0`` that would turn -0.0 into 0.0, nor ``0 * inf``), requiring grad through ``term`` too."""
    if type(term) is not Tensor or not term.requires_grad or type(ts) is not Tensor:
        return ts
    where = REGISTRY["where"]  # (the op module of where imports this one)
    return where(Tensor(np.zeros((), dtype=np.bool_)), term, ts)


def _jvp_loss(o: Op, args, tangents, out, outs):
    # Op.defjvp_loss: elementwise with reduction="none"; else a 0-d loss, whose tangent is the gradient (the VJP
    # of 1) dotted with the tangents
    if args[o.ninputs + o.param_names.index("reduction")] == "none":
        return _jvp_elementwise(o, args, tangents, out, outs)
    _sum = REGISTRY["sum"]  # (the op module of sum imports this one)
    ts = None
    needs = tuple([t is not None for t in tangents])
    g = o.vjp(*_vjp_args(o, Tensor(np.ones_like(outs[0].data)), args, outs[0], needs))
    g = g if type(g) is tuple else (g,)
    for k, t in enumerate(tangents):
        if t is not None and g[k] is not None:
            term = _sum(g[k] * t)
            ts = term if ts is None else ts + term
    return ts


def _jvp_reduction(o: Op, args, tangents, out, outs):
    # Op.defjvp_reduction
    return _reduction_jvp(o, args, tangents, outs[0])


#: The function that computes an op's output tangent, by the op's ``jvp_kind`` (how it declared its
#: forward-mode rule: :meth:`Op.defjvp` and ``defjvp_unsupported`` "rule", ``defjvp_linear`` "linear",
#: ``defjvp_multilinear``, ``defjvp_elementwise``, ``defjvp_loss``, ``defjvp_reduction``).
JVP_KINDS = {
    "rule": _jvp_rule,
    "linear": _jvp_linear,
    "multilinear": _jvp_multilinear,
    "elementwise": _jvp_elementwise,
    "loss": _jvp_loss,
    "reduction": _jvp_reduction,
}


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


install_forward_mode(_fw_apply)
