"""The machinery of the op table: declaring an op with its forward and derivative, and applying it.

An op is declared once, its derivative next to it::

    @op("MulBackward0", inputs=2, promote="same", method=True)
    def mul(input, other):
        '''Elementwise product with broadcasting. Matches torch.mul.'''
        return np.multiply(input, other)

    @mul.defvjp
    def _(grad, input, other):
        return grad * other, grad * input

The forward receives numpy arrays (the first ``inputs`` parameters) and plain values (the rest) and returns an
array. The derivative rule (vector-Jacobian product) receives the output's gradient and, by naming them, what
it needs, in the spirit of PyTorch's derivatives.yaml:

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
"""

from __future__ import annotations

import inspect

import numpy as np

from .. import autograd, dtypes, limits
from ..autograd import Node
from ..tensor import REQUIRES_GRAD_DTYPE_ERROR, Tensor

#: Every callable of the language and of ``import gradcli``, by PyTorch name: Op instances and plain
#: functions (creation functions, grad modes). Filled by the op modules at import time.
REGISTRY: dict[str, object] = {}

#: The kind of each registry entry, for ``gradcli ops``: "op", "creation", "function".
KINDS: dict[str, str] = {}

#: The names of the Tensor methods installed by the op table (the language may call these).
METHODS: set[str] = set()


def register(name: str, fn, kind: str = "function") -> None:
    """Add a callable to the namespace of the language and of ``import gradcli``."""
    REGISTRY[name] = fn
    KINDS[name] = kind


def install_method(name: str, fn) -> None:
    """Make ``fn(self, ...)`` the Tensor method ``name``."""
    setattr(Tensor, name, fn)
    METHODS.add(name)


class Op:
    """A differentiable operation: its forward (on numpy arrays) and its derivative rule.

    Attributes:
        name: PyTorch's function name (``"mul"``).
        grad_fn: PyTorch's backward class name (``"MulBackward0"``).
        ninputs: how many leading parameters of the forward are tensors.
        promote: "same" (PyTorch's type promotion across inputs), "float" (promotion, then integers and bools
            become the default float dtype, as torch.div and torch.exp do), or None (inputs used as they are).
        differentiable: False for ops whose outputs never require grad (comparisons, argmax).
        vjp: the derivative rule, or None until :meth:`defvjp`.
        vjp_plan: how to build the rule's arguments (set by :meth:`defvjp`).
        saves: whether the rule needs saved tensors (then a second backward without retain_graph fails).
        note: a one-line description of the derivative for ``gradcli ops``.
    """

    def __init__(self, forward, *, grad_fn: str | None, inputs: int = 1, promote: str | None = "same",
                 differentiable: bool = True, name: str | None = None, note: str = ""):
        self.forward = forward
        self.name = name or forward.__name__
        self.grad_fn = grad_fn
        self.ninputs = inputs
        self.promote = promote
        self.differentiable = differentiable
        self.vjp = None
        self.vjp_plan = ()
        self.saves = False
        self.note = note
        self.signature = inspect.signature(forward)
        params = list(self.signature.parameters.values())
        self.input_names = [p.name for p in params[:inputs]]
        self.param_names = [p.name for p in params[inputs:]]
        # Defaults appended to short positional calls, so rules always see every parameter. Ops with *args
        # take what they are given.
        if any(p.kind in (p.VAR_POSITIONAL, p.KEYWORD_ONLY) for p in params):
            if any(p.kind == p.KEYWORD_ONLY for p in params):
                raise TypeError(f"{self.name}: forward parameters must be positional (found keyword-only)")
            self.defaults = None
        else:
            self.defaults = tuple(p.default for p in params)
        self.nargs = len(params)
        self.__doc__ = forward.__doc__
        self.__name__ = self.name

    def __repr__(self) -> str:
        return f"<gradcli op {self.name}>"

    def defvjp(self, rule):
        """Set the derivative rule (see the module docstring for the names it may take); returns the op.

        Raises:
            TypeError: if the rule names something the op does not have.
        """
        plan = []
        saves = False
        for pname in list(inspect.signature(rule).parameters)[1:]:
            if pname in self.input_names:
                plan.append((0, pname))
                saves = True
            elif pname == "result":
                plan.append((1, "result"))
                saves = True
            elif pname in self.param_names:
                kind = self.signature.parameters[pname].kind
                # a *args parameter (permute(input, *dims)) receives the whole tail of the arguments
                plan.append((5 if kind == inspect.Parameter.VAR_POSITIONAL else 2, self.param_names.index(pname)))
            elif pname.endswith("_shape") and pname[:-6] in self.input_names:
                plan.append((3, self.input_names.index(pname[:-6])))
            elif pname == "needs_input_grad":
                plan.append((4, 0))
            else:
                raise TypeError(f"{self.name}: derivative rule asks for unknown value {pname!r}")
        # Saved values are stored in one tuple: the named inputs in order, then the result.
        saved_inputs = [self.input_names.index(n) for k, n in plan if k == 0]
        self.saved_inputs = tuple(saved_inputs)
        self.saves_result = any(k == 1 for k, _ in plan)
        resolved = []
        slot = 0
        for k, n in plan:
            if k == 0:
                resolved.append((0, slot))
                slot += 1
            elif k == 1:
                resolved.append((1, len(saved_inputs)))
            else:
                resolved.append((k, n))
        self.vjp_plan = tuple(resolved)
        self.saves = saves
        self.vjp = rule
        return self

    def __call__(self, *args, **kwargs):
        if kwargs:
            args = self._bind(args, kwargs)
        elif self.defaults is not None and len(args) < self.nargs:
            if any(d is inspect.Parameter.empty for d in self.defaults[len(args):]):
                args = self._bind(args, {})
            else:
                args = args + self.defaults[len(args):]
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


def op(grad_fn: str | None, *, inputs: int = 1, promote: str | None = "same", differentiable: bool = True,
       method: bool | str = False, name: str | None = None, aliases: tuple = (), note: str = ""):
    """Declare an op (decorator). See the module docstring.

    Args:
        grad_fn: PyTorch's backward class name, or None for ops without a gradient.
        inputs: number of leading tensor parameters.
        promote: "same", "float" or None (see :class:`Op`).
        differentiable: False if the outputs never require grad.
        method: also install as Tensor method (True: same name; a string: that name).
        name: the op's name if not the function's.
        aliases: other names in the namespace (``"true_divide"`` for div).
        note: a one-line derivative note for ``gradcli ops``.
    """
    def wrap(forward):
        o = Op(forward, grad_fn=grad_fn, inputs=inputs, promote=promote, differentiable=differentiable,
               name=name, note=note)
        if not o.name.startswith("_"):  # "_name" ops are building blocks of a public function
            register(o.name, o, "op")
        for a in aliases:
            register(a, o, "op")
        if method:
            _install_op_method(o, o.name if method is True else method)
        return o

    return wrap


def _install_op_method(o: Op, mname: str) -> None:
    def method(self, *args, **kwargs):
        return o(self, *args, **kwargs)

    method.__name__ = mname
    method.__doc__ = o.__doc__
    install_method(mname, method)


def to_tensor(value, dtype=None) -> Tensor:
    """Convert a Tensor, number, nested list/tuple of numbers or numpy array to a Tensor.

    Numbers and lists get ``torch.tensor``'s dtype inference (bool, int64, or the default float); ``dtype``
    overrides it. A Tensor is returned as is (cast if ``dtype`` differs).

    Raises:
        TypeError: for values that are not numeric.
        ValueError: for ragged nested lists.
    """
    if type(value) is Tensor:
        if dtype is not None and value.data.dtype != dtype:
            return Tensor(value.data.astype(dtype))
        return value
    if isinstance(value, np.ndarray):
        dtypes.from_numpy(value.dtype)
        return Tensor(value if dtype is None else value.astype(dtype))
    if dtype is None:
        dtype = dtypes.infer_dtype(value)
    if isinstance(value, (list, tuple)) and _contains_tensor(value):
        value = _unwrap(value)
    try:
        arr = np.array(value, dtype=dtype)
    except ValueError as e:
        if "inhomogeneous" in str(e) or "sequence" in str(e):
            raise ValueError("expected sequence of equal length lists (ragged nested list)") from None
        raise
    return Tensor(arr)


def _contains_tensor(seq) -> bool:
    return any(isinstance(v, Tensor) or (isinstance(v, (list, tuple)) and _contains_tensor(v)) for v in seq)


def _unwrap(seq):
    out = []
    for v in seq:
        if isinstance(v, Tensor):
            out.append(v.data.tolist())
        elif isinstance(v, (list, tuple)):
            out.append(_unwrap(v))
        else:
            out.append(v)
    return out


def _is_number(v) -> bool:
    return isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating))


def _apply(o: Op, args):
    n = o.ninputs
    tensors = args[:n]
    params = args[n:]
    datas, dtype = _fast_promote(o, tensors)
    if datas is None:
        datas, dtype = _promote(o, tensors)
    if n > 1:
        limits.check_operands(datas)  # before the forward allocates a broadcast result
    out = o.forward(*datas, *params)
    if type(out) is tuple:
        # (values, indices)-style results: only the first output is differentiable.
        first = _wrap_output(o, out[0], tensors, datas, params, dtype)
        return (first,) + tuple(Tensor(np.asarray(x)) for x in out[1:])
    return _wrap_output(o, out, tensors, datas, params, dtype)


def _fast_promote(o: Op, tensors):
    """The common cases without the general promotion: Tensors of one dtype, or one float Tensor with Python
    numbers (a float tensor's dtype wins over wrapped numbers). Returns (None, None) otherwise."""
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
    if dtype is None or o.promote is None:
        return (None, None) if dtype is None else ([a.data if type(a) is Tensor else a for a in tensors], dtype)
    if dtype.kind != "f":
        return None, None
    return [a.data if type(a) is Tensor else np.asarray(a, dtype=dtype) for a in tensors], dtype


def _promote(o: Op, tensors):
    """PyTorch's type promotion of the tensor arguments (see :mod:`gradcli.dtypes`); returns the arrays to
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


def _wrap_output(o: Op, out, tensors, datas, params, dtype):
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    if not (o.differentiable and autograd._mode.enabled and out.dtype.kind == "f"):
        return Tensor(out)
    requires = False
    edges = []
    for t in tensors:
        if type(t) is Tensor and t.requires_grad:
            requires = True
            edges.append(t.grad_fn if t.grad_fn is not None else t)
        else:
            edges.append(None)
    if not requires:
        return Tensor(out)
    if o.vjp is None:
        raise RuntimeError(f"the derivative for '{o.name}' is not implemented.")
    saved = [_saved_input(tensors[i], datas[i]) for i in o.saved_inputs]
    if o.saves_result:
        saved.append(out)
    node = Node(o, tuple(edges), tuple(saved), params, tuple(d.shape if d is not None else None for d in datas),
                out.shape, out.dtype, dtype if dtype is not None else out.dtype)
    return Tensor(out, True, node)


def _saved_input(t, data):
    # Keep the Tensor (its graph is needed for create_graph); numbers and casts of constants become plain
    # Tensors of the computed dtype; an omitted optional input (weight=None) stays None.
    if data is None:
        return None
    if type(t) is Tensor and (t.requires_grad or t.data is data):
        return t
    return Tensor(data)


def normalize_dim(dim: int, ndim: int) -> int:
    """A dimension index in ``[-ndim, ndim)`` made non-negative (0-d tensors accept -1 and 0).

    Raises:
        IndexError: PyTorch's "Dimension out of range (expected to be in range of [a, b], but got d)".
    """
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"dim must be an int, not {type(dim).__name__}")
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def normalize_dims(dim, ndim: int):
    """``dim`` (None, an int, or a sequence of ints) as a sorted tuple of non-negative axes (None: all).

    Raises:
        IndexError: for a dimension out of range; RuntimeError for a repeated dimension (PyTorch's texts).
    """
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        axes = tuple(normalize_dim(d, ndim) for d in dim)
        if len(set(axes)) != len(axes):
            raise RuntimeError(f"dim {axes[0]} appears multiple times in the list of dims")
        return tuple(a for a in axes if a < ndim) if ndim else ()
    d = normalize_dim(dim, ndim)
    return (d,) if ndim else ()


def check_requires_grad(data: np.ndarray, requires_grad: bool) -> None:
    """Raise PyTorch's RuntimeError if a non-float tensor is asked to require grad."""
    if requires_grad and data.dtype.kind != "f":
        raise RuntimeError(REQUIRES_GRAD_DTYPE_ERROR)
