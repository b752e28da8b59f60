"""``torch.func``: composable function transforms — :func:`grad`, :func:`grad_and_value`, :func:`vjp`,
:func:`jvp`, :func:`jacrev`, :func:`jacfwd`, :func:`hessian` and :func:`vmap` — with PyTorch 2.13's signatures,
result nesting (pytrees of tuples, lists and dicts) and messages (torch/_functorch/eager_transforms.py,
vmap.py, apis.py).

How they are computed (the values are PyTorch's; the machinery is gradcli's own):

* reverse mode (grad, vjp, jacrev) runs the function on copies of the differentiated arguments that require
  grad and takes :func:`gradcli.engine.autograd.grad` of its outputs. When a transform is nested in another one (or an
  argument already requires grad or carries a forward-mode tangent) the gradients are taken with
  ``create_graph=True``, so that the outer transform differentiates them again; else the results are detached,
  as functorch's unwrapped results are.
* forward mode (jvp, jacfwd) uses :mod:`gradcli.api.forward_ad` (dual tensors and each op's JVP rule). Forward-AD
  levels do not nest in gradcli, so a forward transform inside another one computes its JVP by the
  double-backward trick instead (a VJP differentiated with respect to its cotangent), which gives the same
  values.
* jacrev's rows are vector-Jacobian products batched through the engine where the graph allows it
  (:func:`gradcli.api.autograd_functional.jacobian_blocks`); jacfwd's columns are one JVP per input element; hessian is
  reverse over reverse (the same values as PyTorch's jacfwd(jacrev)).
* vmap runs the function once on the batch: its mapped arguments are BatchedTensors and each op takes its
  batching rule (:mod:`gradcli.api.vmap`, functorch's design); a function that gradcli cannot batch (one that
  reads a BatchedTensor's values from numpy, a Jacobian or forward-mode transform inside vmap, or random draws
  with ``randomness="different"``) runs once per index of the mapped dimension instead, the results stacked
  along ``out_dims``.
"""

from __future__ import annotations

from ..engine import autograd
from ..engine.context import generator, state as _state
from .autograd_functional import forward_blocks, jacobian_blocks, jvp_flat, wrap
from ..ops import REGISTRY
from ..engine.tensor import Tensor, fw_tangent
from . import vmap as _vm
from . import einops as _einops

_stack = REGISTRY["stack"]
_zeros_like = REGISTRY["zeros_like"]
_ones_like = REGISTRY["ones_like"]
_reshape = REGISTRY["reshape"]

# --- pytrees: tuples, lists and dicts are nodes, anything else a leaf (torch.utils._pytree) ------------------

def tree_flatten(tree):
    """``(leaves, spec)``: the leaves of a pytree in order and its structure (tuples, lists and dicts are nodes;
    dict keys in insertion order, as torch.utils._pytree)."""
    leaves = []

    def walk(t):
        if isinstance(t, tuple) and not hasattr(t, "_fields"):
            return ("tuple", tuple(walk(e) for e in t))
        if isinstance(t, list):
            return ("list", tuple(walk(e) for e in t))
        if isinstance(t, dict):
            return ("dict", tuple(t.keys()), tuple(walk(v) for v in t.values()))
        leaves.append(t)
        return "*"

    return leaves, walk(tree)


def tree_unflatten(leaves, spec):
    """The pytree of structure ``spec`` (from :func:`tree_flatten`) with ``leaves`` in order."""
    it = iter(leaves)

    def build(s):
        if s == "*":
            return next(it)
        if s[0] == "tuple":
            return tuple(build(e) for e in s[1])
        if s[0] == "list":
            return [build(e) for e in s[1]]
        return dict(zip(s[1], (build(e) for e in s[2])))

    return build(spec)


def spec_str(spec, indent: int = 0) -> str:
    """A structure as PyTorch's ``repr(TreeSpec)``: ``*`` for a leaf, ``TreeSpec(tuple, None, [*,\n  *])`` (the
    children after the first on their own lines, indented by 2 per level)."""
    if spec == "*":
        return "*"
    context = repr(list(spec[1])) if spec[0] == "dict" else "None"
    children = spec[2] if spec[0] == "dict" else spec[1]
    text = ""
    if children:
        indent += 2
        text = spec_str(children[0], indent) + ("," if len(children) > 1 else "")
        text += ",".join("\n" + " " * indent + spec_str(c, indent) for c in children[1:])
    return f"TreeSpec({spec[0]}, {context}, [{text}])"


def spec_pprint(spec) -> str:
    """A structure as PyTorch's ``treespec_pprint``: the pytree with ``*`` for each leaf (``(*, *)``)."""
    if spec == "*":
        return "*"
    if spec[0] == "dict":
        return "{" + ", ".join(f"{k!r}: {spec_pprint(c)}" for k, c in zip(spec[1], spec[2])) + "}"
    inner = ", ".join(spec_pprint(c) for c in spec[1])
    if spec[0] == "list":
        return f"[{inner}]"
    return f"({inner},)" if len(spec[1]) == 1 else f"({inner})"


def _tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


# --- shared pieces -----------------------------------------------------------------------------------------

def _fn_name(func) -> str:
    return getattr(func, "__name__", None) or getattr(func, "name", None) or repr(func)


def _check_leaf(x):
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    return x


def _argnums_args(args, argnums):
    """The differentiated arguments (``args[argnums]``, a tuple of them for a tuple of argnums), with PyTorch's
    checks of ``argnums``."""
    def one(a):
        if not isinstance(a, int) or isinstance(a, bool):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(a)}")
        if not -len(args) <= a < len(args):
            raise RuntimeError(f"Got argnum={a}, but only {len(args)} positional inputs")
        return a % len(args) if args else a

    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        idx = tuple(one(a) for a in argnums)
        if len(set(idx)) != len(idx):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        return idx
    if not isinstance(argnums, int) or isinstance(argnums, bool):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    return one(argnums)


def _keeps_graph(leaves) -> bool:
    """Whether gradients must be recorded: inside another transform, or arguments that require grad or carry a
    tangent (an outer autograd or forward AD differentiates the result)."""
    return _state.func_depth > 0 or any(isinstance(t, Tensor) and (t.requires_grad or fw_tangent(t) is not None)
                             for t in leaves)


class _Transform:
    """Counts the running transforms in the run context (``with _Transform():``; a transform inside another one
    keeps the graph of what it computes) and enables grad inside."""

    def __enter__(self):
        _state.func_depth += 1
        self._grad = autograd.enable_grad()
        self._grad.__enter__()

    def __exit__(self, *exc):
        _state.func_depth -= 1
        self._grad.__exit__(*exc)
        return False


def _finish(x, keep: bool):
    return _tree_map(lambda t: t if keep or not isinstance(t, Tensor) else t.detach(), x)


def _split_aux(out, has_aux: bool, api: str):
    """``(output, aux)`` of a function called with ``has_aux`` (aux: a pytree of Tensors), else ``(out, None)``.

    Raises:
        RuntimeError: not an ``(output, aux)`` pair; an aux leaf that is not a Tensor (PyTorch's messages).
    """
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    for leaf in tree_flatten(out[1])[0]:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")
    return out


def _output_leaves(out, api: str):
    """The leaves and structure of a function's outputs, which must all be Tensors.

    Raises:
        RuntimeError: PyTorch's "vjp(f, *primals): expected f(*primals) to return only tensors, got unsupported
            type <class 'int'>" (``api`` names the transform: vjp for reverse mode, jvp for forward mode).
    """
    leaves, spec = tree_flatten(out)
    for o in leaves:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")
    return leaves, spec


def _vjp_of(outputs, inputs, cotangents, keep: bool):
    """``d(sum(cotangents * outputs)) / d(inputs)``, zeros for inputs the outputs do not depend on."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    if not pairs:
        return tuple(_zeros_like(t) for t in inputs)
    g = autograd.grad([o for o, _ in pairs], list(inputs), [c for _, c in pairs], retain_graph=True,
                      create_graph=keep, allow_unused=True)
    return tuple(_zeros_like(t) if gi is None else gi for gi, t in zip(g, inputs))


# --- reverse mode ------------------------------------------------------------------------------------------

def grad_and_value(func, argnums=0, has_aux: bool = False):
    """``grad_and_value(func)(*args)``: ``(gradient, value)`` of a function returning a 0-d Tensor, the
    gradient with respect to ``args[argnums]`` (a pytree of Tensors; a tuple of them for a tuple of argnums);
    with ``has_aux`` the function returns ``(value, aux)`` and the result is ``(gradient, (value, aux))``.
    Matches torch.func.grad_and_value.

    Raises:
        RuntimeError: an output that is not a 0-d Tensor ("Expected f(*args) to return a scalar Tensor, got tensor
            with 1 dims. Maybe you wanted to use the vjp or jacrev APIs instead?"), bad argnums, has_aux without
            an ``(output, aux)`` pair (PyTorch's messages).
        ValueError: a differentiated argument that is not a Tensor.
    """
    api = "grad_and_value(f)(*args)"

    def wrapper(*args, **kwargs):
        idx = _argnums_args(args, argnums)
        diff = tuple(args[i] for i in idx) if isinstance(idx, tuple) else args[idx]
        leaves, spec = tree_flatten(diff)
        for x in leaves:
            _check_leaf(x)
        keep = _keeps_graph(leaves)
        with _Transform():
            wrapped = [wrap(_vm.lift(t), keep) for t in leaves]
            new_diff = tree_unflatten(wrapped, spec)
            new_args = list(args)
            if isinstance(idx, tuple):
                for i, d in zip(idx, new_diff):
                    new_args[i] = d
            else:
                new_args[idx] = new_diff
            out = func(*new_args, **kwargs)
            out, aux = _split_aux(out, has_aux, api)
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got tensor with "
                                   f"{out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            grads = _vjp_of([out], wrapped, [_ones_like(out)], keep)
        g = _finish(tree_unflatten(list(grads), spec), keep)
        value = _finish(out, keep)
        if has_aux:
            return g, (value, _finish(aux, keep))
        return g, value

    return wrapper


def grad(func, argnums=0, has_aux: bool = False):
    """``grad(func)(*args)``: the gradient of a function returning a 0-d Tensor with respect to
    ``args[argnums]`` (same structure as that argument; a tuple for a tuple of argnums); with ``has_aux``,
    ``(gradient, aux)``. Transforms nest (``grad(grad(f))``). Matches torch.func.grad.

    Raises:
        RuntimeError, ValueError: see :func:`grad_and_value` (PyTorch's messages name grad_and_value too).
    """
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func, *primals, has_aux: bool = False):
    """``(output, vjp_fn)`` (``(output, vjp_fn, aux)`` with ``has_aux``): the function's output at ``primals``
    and a function mapping cotangents (same structure and shapes as the output) to the tuple of vector-Jacobian
    products, one per primal (each with its primal's structure). Matches torch.func.vjp.

    Raises:
        ValueError: a primal that is not a Tensor. ``vjp_fn``: RuntimeError for cotangents of another structure
            ("Expected pytree structure of cotangents to be the same as pytree structure of outputs to the
            function. cotangents: (*,), primal output: *") or shape (autograd.grad's "Mismatch in shape").
    """
    leaves, spec = tree_flatten(primals)
    for x in leaves:
        _check_leaf(x)
    keep = _keeps_graph(leaves)
    with _Transform():
        wrapped = [wrap(_vm.lift(t), keep) for t in leaves]
        out = func(*tree_unflatten(wrapped, spec))
        out, aux = _split_aux(out, has_aux, "vjp(f, *primals)")
        out_leaves, out_spec = _output_leaves(out, "vjp(f, *primals)")

    def vjp_fn(*cotangents, retain_graph=True, create_graph=None):
        ct = cotangents[0] if len(cotangents) == 1 else cotangents
        ct_leaves, ct_spec = tree_flatten(ct)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {spec_pprint(ct_spec)}, primal output: "
                               f"{spec_pprint(out_spec)}")
        for i, (c, o) in enumerate(zip(ct_leaves, out_leaves)):
            if not isinstance(c, Tensor):
                raise RuntimeError(f"Expected cotangents to be tensors, got {type(c)}")
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of torch.Size({list(c.shape)})"
                                   f" and output[{i}] has a shape of torch.Size({list(o.shape)}).")
        inner_keep = keep or _keeps_graph(ct_leaves)
        with _Transform():
            grads = _vjp_of(out_leaves, wrapped, ct_leaves, inner_keep)
        return _finish(tree_unflatten(list(grads), spec), inner_keep)

    result = (_finish(out, keep), vjp_fn)
    return result + (_finish(aux, keep),) if has_aux else result


# --- forward mode ------------------------------------------------------------------------------------------

def jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(output, jvp_out)`` (``(output, jvp_out, aux)`` with ``has_aux``): the function's output at
    ``primals`` (a tuple, called as ``func(*primals)``) and the Jacobian-vector product with ``tangents`` (the
    same structure and shapes), computed by forward-mode AD. Matches torch.func.jvp.

    Raises:
        RuntimeError: primals that are not a tuple, tangents of another structure or size, no Tensor among
            the primals, ``strict=True`` (PyTorch's messages).
    """
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, (tuple, list)):
        raise RuntimeError(f"{api}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    p_leaves, p_spec = tree_flatten(tuple(primals))
    t_leaves, t_spec = tree_flatten(tuple(tangents) if isinstance(tangents, list) else tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{api}: Expected primals and tangents to have the same python structure. For example, "
                           f"if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{spec_str(p_spec)} and tangents with structure {spec_str(t_spec)}")
    if not p_leaves:
        raise RuntimeError(f"{api}: Expected primals to contain at least one Tensor.")
    if strict:
        raise RuntimeError(f"{api}: strict=True is not yet implemented")
    for x in p_leaves + t_leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{api}: Expected primals and tangents to only contain Tensors, got {type(x)}")
    keep = _keeps_graph(p_leaves + t_leaves)
    _unbatchable(p_leaves + t_leaves)
    box = {}

    def flat(*leaves):
        out = func(*tree_unflatten(list(leaves), p_spec))
        out, aux = _split_aux(out, has_aux, api)
        o_leaves, o_spec = _output_leaves(out, api)
        box["spec"] = o_spec
        return o_leaves, aux

    with _Transform():
        outs, tans, aux = jvp_flat(flat, p_leaves, t_leaves, keep)
    spec = box["spec"]
    result = (_finish(tree_unflatten(outs, spec), keep), _finish(tree_unflatten(tans, spec), keep))
    return result + (_finish(aux, keep),) if has_aux else result


# --- Jacobians ---------------------------------------------------------------------------------------------

def _unbatchable(leaves) -> None:
    """Jacobians and forward mode are not batched: inside a vmap they make it run once per example."""
    if _vm.current_levels() and any(_vm.is_batched(t) for t in leaves):
        raise _vm.Unbatchable("a Jacobian or forward-mode transform of a BatchedTensor")


def _jac_transform(func, argnums, has_aux: bool, api: str, forward: bool, randomness: str = "error"):
    def wrapper(*args):
        idx = _argnums_args(args, argnums)
        diff = tuple(args[i] for i in idx) if isinstance(idx, tuple) else args[idx]
        leaves, spec = tree_flatten(diff)
        _unbatchable(tree_flatten(args)[0])
        for x in leaves:
            _check_leaf(x)
        keep = _keeps_graph(leaves)
        box = {}

        def flat(*new_leaves):
            new_diff = tree_unflatten(list(new_leaves), spec)
            new_args = list(args)
            if isinstance(idx, tuple):
                for i, d in zip(idx, new_diff):
                    new_args[i] = d
            else:
                new_args[idx] = new_diff
            out = func(*new_args)
            out, aux = _split_aux(out, has_aux, f"{api}(f, ...)(*args)")
            o_leaves, o_spec = _output_leaves(out, "jvp(f, primals, tangents)" if forward else "vjp(f, *primals)")
            box["spec"] = o_spec
            return o_leaves, aux

        with _Transform():
            if forward:
                random = _Randomness(randomness)  # each JVP is one example of PyTorch's vmap over the basis

                def drawn(*new_leaves):
                    with random:
                        return flat(*new_leaves)

                outs, blocks, aux = forward_blocks(drawn, leaves, keep)
            else:
                wrapped = [wrap(_vm.lift(t), keep) for t in leaves]
                outs, aux = flat(*wrapped)
                blocks = [jacobian_blocks(o, wrapped, keep) for o in outs]
        # each output leaf -> the structure of the differentiated arguments
        per_out = [_finish(tree_unflatten(list(b), spec), keep) for b in blocks]
        jac = tree_unflatten(per_out, box["spec"])
        return (jac, _finish(aux, keep)) if has_aux else jac

    return wrapper


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size=None, _preallocate_and_copy: bool = False):
    """``jacrev(func, argnums)(*args)``: the Jacobian of each output (a pytree of Tensors) with respect to
    ``args[argnums]``, by reverse mode; each block has shape output + input; the result nests the output's
    structure outside the arguments' (a tuple over a tuple of argnums). With ``has_aux``: ``(jacobian, aux)``.
    ``chunk_size`` only bounds memory in PyTorch and is accepted. Matches torch.func.jacrev.

    Raises:
        RuntimeError: bad argnums, outputs that are not Tensors ("vjp(f, *primals): expected f(*primals) to return
            only tensors, got unsupported type <class 'int'>"); ValueError: an argument that is not a Tensor.
    """
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jac_transform(func, argnums, has_aux, "jacrev", forward=False)


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """``jacfwd(func, argnums)(*args)``: the Jacobian by forward-mode AD (one JVP per input element), nested as
    :func:`jacrev`'s. Matches torch.func.jacfwd, which is ``vmap(jvp, randomness=randomness)`` over the one-hot
    tangents: with ``randomness="error"`` (the default) a random draw of ``func`` (dropout in training, rrelu,
    gumbel_softmax, rand, bernoulli, ...) raises; with "same" every JVP sees the first one's numbers (the
    Jacobian of one draw); with "different" each JVP draws its own.

    Raises:
        RuntimeError: a draw with ``randomness="error"`` (PyTorch's "vmap: called random operation while in
            randomness error mode. ..."); an unknown ``randomness`` (PyTorch's message).
    """
    _check_randomness(randomness)
    return _jac_transform(func, argnums, has_aux, "jacfwd", forward=True, randomness=randomness)


def hessian(func, argnums=0):
    """``hessian(func, argnums)(*args)``: the Jacobian of the Jacobian, nested as ``jacfwd(jacrev(func, argnums),
    argnums)`` (PyTorch's definition, forward over reverse); for an output of shape O and an input of shape I a
    block of shape O + I + I. Matches torch.func.hessian.

    gradcli computes the outer Jacobian in reverse mode where that gives the same blocks, its rows batched
    through the recorded gradient (:func:`gradcli.api.autograd_functional.jacobian_blocks`; the layout is
    [output element][first derivative][second derivative] either way), much faster than one JVP per input
    element. It does so when every op of the recorded gradient has a forward-mode rule whose transpose is its
    reverse rule; where one has not (:func:`_forward_differs`: the decompositions that read one triangle of a
    symmetric matrix, whose PyTorch JVPs read the whole tangent; ops without a forward-mode rule, whose error
    PyTorch's forward over reverse raises), or where reverse over reverse raises (PyTorch's forward over reverse
    meets a missing forward-mode rule, floor_divide's, before a missing derivative), the outer Jacobian is
    PyTorch's, forward mode.

    Raises:
        NotImplementedError: forward AD through an op without a forward-mode rule (PyTorch's message, e.g. the
            second derivative of hardsigmoid: "Trying to use forward AD with aten::hardsigmoid_backward that
            does not support it."); forward AD through the function itself (its forward pass runs on dual
            numbers in PyTorch too: index_reduce's "Trying to use forward AD with index_reduce ...").
        RuntimeError: the function draws random numbers (PyTorch's jacfwd refuses them: "vmap: called random
            operation while in randomness error mode. ...").
    """
    box = {}

    def recorded(*args):
        out = box["out"] = func(*args)
        return out

    inner = jacrev(recorded, argnums)

    def checked(*args):
        out = inner(*args)
        # the gradient's graph and the function's own: forward over reverse runs both on dual numbers
        if _forward_differs(tree_flatten(out)[0]) or _forward_differs(tree_flatten(box.pop("out", None))[0]):
            raise _ForwardOverReverse
        return out

    reverse, forward = jacrev(checked, argnums), jacfwd(inner, argnums)

    def wrapper(*args):
        with _Randomness("error"):  # PyTorch's outer jacfwd refuses a draw, in either order of the modes
            try:
                return reverse(*args)
            except Exception:  # noqa: BLE001 - forward over reverse answers, or raises what PyTorch raises first
                return forward(*args)

    return wrapper


class _ForwardOverReverse(Exception):
    """Raised inside :func:`hessian`'s reverse-over-reverse attempt when the gradient's graph needs forward mode."""


#: Ops whose forward-mode rule is not the transpose of their reverse rule, as PyTorch declares them: the
#: factorizations of a symmetric matrix read one triangle, their VJPs return a symmetric gradient, while their
#: JVPs (FunctionsManual.cpp cholesky_jvp, linalg_eig_jvp) use the whole tangent.
_FORWARD_NOT_TRANSPOSE = frozenset({"_linalg_cholesky", "_linalg_eigh"})


def _forward_differs(leaves) -> bool:
    """Whether forward mode over the graph that made ``leaves`` differs from reverse mode over it: an op of
    :data:`_FORWARD_NOT_TRANSPOSE`, or a differentiable op without a forward-mode rule (or one that raises)."""
    stack = [t.grad_fn for t in leaves if isinstance(t, Tensor) and t.grad_fn is not None]
    seen = set()
    while stack:
        node = stack.pop()
        node = getattr(node, "node", node)  # an output of a node with several
        if id(node) in seen:
            continue
        seen.add(id(node))
        o = getattr(node, "op", None)
        if o is not None and (o.name in _FORWARD_NOT_TRANSPOSE or o.jvp is None
                              or getattr(o.jvp, "unsupported", False)):
            return True
        stack.extend(e for e in getattr(node, "edges", ()) if e is not None and not isinstance(e, Tensor))
    return False


# --- vmap --------------------------------------------------------------------------------------------------

def _check_randomness(randomness):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f"{randomness}")


def _broadcast_dims(dims, spec):
    """``dims`` (an int, None or a pytree prefix of the structure) → one dim per leaf."""
    def expand(d, s):
        if d is None or isinstance(d, int) and not isinstance(d, bool):
            n = len(tree_unflatten_count(s))
            return [d] * n
        if s == "*" or not isinstance(d, (tuple, list, dict)):
            raise ValueError
        kind = s[0]
        children = s[2] if kind == "dict" else s[1]
        if kind == "dict":
            if not isinstance(d, dict) or list(d.keys()) != list(s[1]):
                raise ValueError
            ds = list(d.values())
        else:
            if not isinstance(d, (tuple, list)) or len(d) != len(children):
                raise ValueError
            ds = list(d)
        out = []
        for di, si in zip(ds, children):
            out += expand(di, si)
        return out

    return expand(dims, spec)


def tree_unflatten_count(spec) -> list:
    """The leaf positions of a structure (a list as long as its number of leaves)."""
    if spec == "*":
        return [0]
    children = spec[2] if spec[0] == "dict" else spec[1]
    return [0 for c in children for _ in tree_unflatten_count(c)]


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """``vmap(func, in_dims, out_dims)(*args)``: ``func`` mapped over a dimension of its arguments — ``in_dims``
    (an int, None for an argument not mapped, or a structure matching the arguments) says which dimension of
    each Tensor; the results are stacked along ``out_dims`` (None for an output that is the same for every
    index). Nests (``vmap(vmap(f))``), and composes with grad (``vmap(grad(f))``: per-example gradients) and
    with ``torch.autograd.grad`` inside (vmap over its ``grad_outputs``). The function runs once on the batch
    (:mod:`gradcli.api.vmap`), or once per index where gradcli cannot batch it; ``chunk_size`` maps the batch
    in chunks of that size. ``randomness``: "error" (a random op raises PyTorch's error), "same" (one draw for
    every index), "different" (each index draws its own, in turn: not PyTorch's batched draw). Matches
    torch.func.vmap.

    Raises:
        ValueError: no inputs, mapped dims out of range or of different sizes, in_dims not matching the
            arguments, a non-Tensor mapped argument, outputs that are not Tensors (PyTorch's messages).
        RuntimeError: a random op with ``randomness="error"``; an unknown ``randomness`` (PyTorch's messages).
    """
    _check_randomness(randomness)
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    name = _fn_name(func)

    def wrapper(*args, **kwargs):
        if not args:
            raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                             "trying to vmap over a function with no inputs. The latter is unsupported.")
        leaves, spec = tree_flatten(tuple(args))
        if not (in_dims is None or isinstance(in_dims, (int, tuple)) and not isinstance(in_dims, bool)):
            raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): expected `in_dims` to be int or a "
                             f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
        if in_dims is None:
            raise ValueError(f"vmap({name}, in_dims=None, ...)(<inputs>): expected `in_dims` to be int or a "
                             f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
        try:
            dims = _broadcast_dims(in_dims, spec)
        except ValueError:
            d_leaves, d_spec = tree_flatten(in_dims)
            raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): in_dims is not compatible with the "
                             f"structure of `inputs`. in_dims has structure {spec_str(d_spec)} but inputs has "
                             f"structure {spec_str(spec)}.") from None
        size = None
        sizes = []
        moved = []
        for x, d in zip(leaves, dims):
            if d is None:
                moved.append(None)
                continue
            if not isinstance(x, Tensor):
                raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={d} for an input but "
                                 f"the input is of type {type(x)}. We cannot vmap over non-Tensor arguments, please "
                                 "use None as the respective in_dim")
            nd = x.dim()
            if not -nd <= d < nd:
                raise ValueError(f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>): Got in_dim={d} for some input, "
                                 f"but that input is a Tensor of dimensionality {nd} so expected in_dim to satisfy "
                                 f"-{nd} <= in_dim < {nd}.")
            sizes.append(int(x.shape[d % nd]))
            moved.append(d % nd)
        if not sizes:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        if len(set(sizes)) > 1:
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        size = sizes[0]
        call = (func, spec, kwargs, randomness, out_dims, name)
        if chunk_size is not None and size > chunk_size:
            return _chunked(call, leaves, moved, size, chunk_size)
        return _map_once(call, leaves, moved, size)

    return wrapper


def _map_once(call, leaves, dims, size):
    """One vmap of ``call = (func, spec, kwargs, randomness, out_dims, name)`` over ``leaves`` mapped along
    ``dims`` (non-negative, None for an unmapped leaf): batched (:mod:`gradcli.api.vmap`), or once per example
    where gradcli cannot batch the function."""
    try:
        return _batched_call(call, leaves, dims, size)
    except (_vm.Unbatchable, _DrewRandom):
        pass
    except Exception as e:
        if getattr(e, "type", None) != "Unbatchable":  # (the language reports it as an EvalError of that type)
            raise
    return _per_example(call, leaves, dims, size)


class _DrewRandom(Exception):
    """A function batched with randomness="different" drew random numbers: it runs once per example instead, so
    that each example draws its own (gradcli's creation functions give one draw for the whole batch)."""


class _Watch:
    """The generator during a batched call with randomness="different": records whether anything drew."""

    def __init__(self, rng):
        self.rng = rng
        self.used = False

    def __getattr__(self, name):
        self.used = True
        return getattr(self.rng, name)


def _batched_call(call, leaves, dims, size):
    """One call of the function on BatchedTensors, the results unbatched along ``out_dims``."""
    func, spec, kwargs, randomness, out_dims, name = call
    with _vm.Level(size, randomness) as level:
        args = [x if d is None else _vm.add_level(x, d, level) for x, d in zip(leaves, dims)]
        if randomness == "different":
            import copy  # (standard library) the generator's state, restored if the batched call drew

            real = generator()
            before = copy.deepcopy(real)
            _state.rng = watch = _Watch(real)
            try:
                out = func(*tree_unflatten(args, spec), **kwargs)
            finally:
                _state.rng = watch.rng if _state.rng is watch else _state.rng
            if watch.used:
                _state.rng = before
                raise _DrewRandom
        else:
            with _Randomness(randomness if randomness == "error" else "batched"):
                out = func(*tree_unflatten(args, spec), **kwargs)
        o_leaves, o_spec = tree_flatten(out)
        odims = _out_dims(out_dims, o_spec, name)
        result = []
        for leaf, d in zip(o_leaves, odims):
            if d is None:
                if _vm.is_batched(leaf) and level in leaf._levels:
                    raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is "
                                     "None")
                result.append(leaf)
                continue
            if isinstance(leaf, tuple) and hasattr(leaf, "_fields") and all(isinstance(e, Tensor) for e in leaf):
                # (values, indices) of sort, max(dim), ...: a structseq, mapped field by field as PyTorch's pytree
                result.append(type(leaf)(*(_vm.remove_level(e, level, size, d) for e in leaf)))
                continue
            if not isinstance(leaf, Tensor):
                raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(leaf)}. "
                                 "Did you mean to set out_dims= to None for output?")
            result.append(_vm.remove_level(leaf, level, size, d))
    return tree_unflatten(result, o_spec)


def _out_dims(out_dims, o_spec, name):
    try:
        return _broadcast_dims(out_dims, o_spec)
    except ValueError:
        d_leaves, d_spec = tree_flatten(out_dims)
        raise ValueError(f"vmap({name}, ...): out_dims is not compatible with the structure of `outputs`. out_dims "
                         f"has structure {spec_str(d_spec)} but outputs has structure {spec_str(o_spec)}.") from None


def _chunked(call, leaves, dims, size, chunk_size):
    """vmap with ``chunk_size``: the batch split into chunks of that size, each mapped, the results
    concatenated along ``out_dims`` (PyTorch's chunked vmap)."""
    pieces = []
    for start in range(0, size, chunk_size):
        n = min(chunk_size, size - start)
        part = [x if d is None else x.narrow(d, start, n) for x, d in zip(leaves, dims)]
        pieces.append(_map_once(call, part, dims, n))
    o_leaves, o_spec = tree_flatten(pieces[0])
    odims = _out_dims(call[4], o_spec, call[5])
    columns = [tree_flatten(p)[0] for p in pieces]
    out = [leaf if d is None else REGISTRY["cat"]([c[j] for c in columns], d)
           for j, (leaf, d) in enumerate(zip(o_leaves, odims))]
    return tree_unflatten(out, o_spec)


def _per_example(call, leaves, dims, size):
    """The function called once per example (what vmap does with a function gradcli cannot batch), the
    results stacked along ``out_dims``."""
    func, spec, kwargs, randomness, out_dims, name = call
    moved = [None if d is None else (x.movedim(d, 0) if d else x) for x, d in zip(leaves, dims)]
    results = []
    random = _Randomness(randomness)
    for i in range(max(size, 1)):
        sample = []
        for x, m in zip(leaves, moved):
            if m is None:
                sample.append(x)
            elif size == 0:  # an empty batch: the function runs once on zeros to learn the output shapes
                sample.append(REGISTRY["zeros"](tuple(m.shape[1:]), dtype=m.dtype))
            else:
                sample.append(m[i])
        with random:
            results.append(func(*tree_unflatten(sample, spec), **kwargs))
    return _stack_results(results, size, out_dims, name)


class _NoRandomness:
    """The generator of a vmap with ``randomness="error"`` (and of jacfwd's JVPs): any use is PyTorch's error.
    ``hidden``: the generator it replaces, which ``manual_seed`` inside the transform reseeds."""

    #: read by gradcli.engine.context.manual_seed
    refuses_draws = True

    def __init__(self, hidden):
        self.__dict__["hidden"] = hidden

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                           "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
                           "of vmap")


class _Randomness:
    """What random ops see during one call of a vmapped function (``with``): "error" makes them raise; "same"
    gives every index the numbers the first one drew (the generator is rewound before each call); "different"
    draws on (each index in turn takes the next numbers)."""

    def __init__(self, randomness: str):
        import copy

        self.mode = randomness
        self.start = None
        if randomness == "same":
            self.start = copy.deepcopy(generator())
        self._saved = None

    def __enter__(self):
        import copy

        if self.mode == "error":
            self._saved = _state.rng
            _state.rng = _NoRandomness(self._saved)
        elif self.mode == "same":
            _state.rng = copy.deepcopy(self.start)

    def __exit__(self, *exc):
        if self.mode == "error":
            rng = _state.rng
            _state.rng = rng.hidden if isinstance(rng, _NoRandomness) else self._saved
        return False


def _stack_results(results, size: int, out_dims, name: str):
    o_leaves, o_spec = tree_flatten(results[0])
    try:
        dims = _broadcast_dims(out_dims, o_spec)
    except ValueError:
        d_leaves, d_spec = tree_flatten(out_dims)
        raise ValueError(f"vmap({name}, ...): out_dims is not compatible with the structure of `outputs`. out_dims "
                         f"has structure {spec_str(d_spec)} but outputs has structure {spec_str(o_spec)}.") from None
    per_sample = [tree_flatten(r)[0] for r in results]
    out = []
    for j, (leaf, d) in enumerate(zip(o_leaves, dims)):
        column = [p[j] for p in per_sample]
        if d is None:
            if isinstance(leaf, Tensor) and any(not (c.data.shape == leaf.data.shape and
                                                     (c.data == leaf.data).all()) for c in column):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            out.append(leaf)
            continue
        if not isinstance(leaf, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(leaf)}. Did you "
                             "mean to set out_dims= to None for output?")
        nd = leaf.dim() + 1
        if not -nd <= d < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {d})")
        if size == 0:
            shape = list(leaf.shape)
            shape.insert(d % nd, 0)
            out.append(REGISTRY["zeros"](tuple(shape), dtype=leaf.dtype))
        else:
            out.append(_stack(column, d))
    return tree_unflatten(out, o_spec)


__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap"]


# --- linearize, rearrange ------------------------------------------------------------------------------------

def linearize(func, *primals):
    """``(output, jvp_fn)``: ``func(*primals)`` and a function that gives the Jacobian-vector product of ``func``
    at ``primals`` with the tangents it is called with (the same structure, shapes and dtypes as the primals).
    Matches torch.func.linearize; PyTorch traces the JVP once into a graph, gradcli's ``jvp_fn`` computes it by
    forward mode (:func:`jvp`) at the saved primals each time it is called (the same values, for a function
    without random draws).

    Raises:
        RuntimeError: for tangents of another structure, shape or dtype (PyTorch's messages).
    """
    output = func(*primals)
    flat, spec = tree_flatten(primals)
    shapes = [tuple(p.shape) for p in flat]
    dtypes_ = [p.dtype for p in flat]

    def jvp_fn(*tangents):
        t_flat, t_spec = tree_flatten(tangents)
        if t_spec != spec:
            raise RuntimeError(f"Expected the tangents {spec_str(t_spec)} to have the same argspec as the primals "
                               f"{spec_str(spec)}")
        for k, t in enumerate(t_flat):
            if tuple(t.shape) != shapes[k]:
                raise RuntimeError(f"tangent:{k} with shape {t.shape} in flattened pytree doesn't match the shape "
                                   f"{flat[k].shape} of the corresponding primal.")
            if t.dtype != dtypes_[k]:
                raise RuntimeError(f"tangent:{k} with dtype {t.dtype} in flattened pytree doesn't match the dtype "
                                   f"{dtypes_[k]} of the corresponding primal.")
        return jvp(func, tuple(primals), tuple(tangents))[1]

    return output, jvp_fn


def rearrange(tensor, pattern: str, **axes_lengths):
    """``torch.func.rearrange``: see :func:`gradcli.api.einops.rearrange`."""
    return _einops.rearrange(tensor, pattern, **axes_lengths)
