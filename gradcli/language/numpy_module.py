"""NumPy inside programs: what ``import numpy as np`` gives, a safe subset of NumPy's own functions.

A program's arrays are NumPy's own ``ndarray`` values (so that ``torch.tensor(a)``, ``torch.from_numpy(a)`` and
``t.numpy()`` move data as PyTorch does, and arrays print exactly as NumPy prints them), but a program reaches
NumPy only through the explicit tables of this module: the functions of :func:`numpy_namespace`, the array
attributes of :data:`ARRAY_ATTRS`, the dtype and scalar attributes, and the methods of ``np.random``'s
``RandomState`` and ``Generator`` (:func:`attribute_table`). Never ``getattr`` with a program's name.

Nothing here reaches files, pickles, ``ctypes``, memory maps or the OS: ``save``/``load``/``fromfile``/
``memmap``/``lib``/``ctypeslib``, ``ndarray.tofile``/``dump``/``dumps``/``ctypes``/``data``/``base`` are each
refused with a message that says so (:data:`REFUSED`). Arrays hold numbers only (bool, integers, floats): an
``object`` or string dtype is refused, so no program value hides inside an array. Every array built is sized
before NumPy builds it, against the ``elements`` limit of :mod:`gradcli.engine.limits` (creation by its shape,
broadcasting by :func:`gradcli.engine.limits.check_operands`, products by ``check_matmul``, a nested list by its
nominal shape, :func:`gradcli.language.safety.nominal_shape`).

``np.random`` is NumPy's legacy ``RandomState`` of the run (seeded from the run's seed until the program calls
``np.random.seed``), and ``np.random.default_rng(seed)`` NumPy's ``Generator`` (PCG64): the same streams as
NumPy, so a seeded program draws what NumPy draws.
"""

from __future__ import annotations

import math

import numpy as np

from ..engine import limits
from ..engine.tensor import Tensor
from .safety import materialize, nominal_shape
from .values import Namespace

#: The dtypes a program names (``np.float32``) and passes as ``dtype=`` (also by these names as strings).
DTYPE_NAMES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool_")
_DTYPE_STRINGS = {"float": "float64", "int": "int64", "bool": "bool_", "double": "float64", "long": "int64",
                  "f4": "float32", "f8": "float64", "i4": "int32", "i8": "int64"}
_NUMERIC_KINDS = frozenset("biuf")
_BUILTIN_TYPES = {"_float": "float64", "_int": "int64", "_bool": "bool"}

_WHY = "gradcli programs cannot reach files, pickles, ctypes, memory maps or the OS"
#: NumPy's names that reach files, pickles, ctypes, memory maps or the OS: refused with that reason.
REFUSED = frozenset({
    "save", "savez", "savez_compressed", "load", "loadtxt", "savetxt", "genfromtxt", "fromfile", "fromregex",
    "fromstring", "frombuffer", "from_dlpack", "memmap", "lib", "ctypeslib", "DataSource", "f2py", "distutils",
    "testing", "get_include", "show_config", "show_runtime", "tofile", "dump", "dumps", "ctypes", "data", "base",
    "getbuffer", "newbuffer", "__array_interface__", "__array_struct__", "__dlpack__", "__reduce__",
    "__setstate__", "__getstate__", "setflags", "bit_generator"})


def _refused_error(owner: str, name: str) -> Exception:
    if name in REFUSED:
        return PermissionError(f"{owner}.{name} is not available to programs: {_WHY}")
    return NotImplementedError(f"{owner}.{name} is not supported by gradcli's NumPy subset")


# ------------------------------------------------------------------------------------------ dtypes
class ScalarType:
    """``np.float32`` and the other scalar types of :data:`DTYPE_NAMES` in programs: usable as ``dtype=``
    (NumPy reads its ``dtype`` attribute), compared with a dtype (``a.dtype == np.float32``), printed as NumPy's
    class (``<class 'numpy.float32'>``), and called to convert a number or an array-like (within the
    ``elements`` limit)."""

    __slots__ = ("name", "dtype")

    def __init__(self, name: str):
        self.name = name
        self.dtype = np.dtype(name)

    def __call__(self, value=0):
        if isinstance(value, (bool, int, float, np.generic)):
            return self.dtype.type(value)
        return as_array(value, f"np.{self.name}()").astype(self.dtype)

    def __eq__(self, other) -> bool:
        try:
            return self.dtype == (other.dtype if isinstance(other, ScalarType) else other)
        except TypeError:
            return False

    def __hash__(self) -> int:
        return hash(self.dtype)

    def __repr__(self) -> str:
        return f"<class 'numpy.{self.name}'>"


SCALAR_TYPES = {name: ScalarType(name) for name in DTYPE_NAMES}


def to_dtype(value) -> np.dtype | None:
    """The NumPy dtype a program's ``dtype=`` names: one of :data:`SCALAR_TYPES`, a numeric ``np.dtype``, or a
    name of one as a string; None for None.

    Raises:
        TypeError: for anything else (an object or string dtype, a Python class).
    """
    if value is None:
        return None
    if isinstance(value, ScalarType):
        return value.dtype
    if isinstance(value, np.dtype) and value.kind in _NUMERIC_KINDS:
        return value
    if isinstance(value, str):
        name = _DTYPE_STRINGS.get(value, value)
        if name in SCALAR_TYPES or name == "bool":
            return np.dtype(name)
    builtin = _BUILTIN_TYPES.get(getattr(value, "__name__", None))  # the language's float/int/bool builtins
    if builtin is not None and getattr(value, "__module__", None) == "gradcli.language.builtins":
        return np.dtype(builtin)
    raise TypeError(f"gradcli's NumPy supports the dtypes {', '.join(DTYPE_NAMES)}, not {value!r}")


def _clean(kwargs: dict) -> dict:
    """A call's keyword arguments, ``dtype`` resolved by :func:`to_dtype`; ``out=`` refused (results are new
    arrays)."""
    if "out" in kwargs:
        raise TypeError("gradcli's NumPy does not support out=: use the result")
    if "dtype" in kwargs:
        kwargs = dict(kwargs, dtype=to_dtype(kwargs["dtype"]))
    return kwargs


def _numeric(result, what: str):
    """``result``, refusing an array of a dtype that is not a number (object, string)."""
    if isinstance(result, np.ndarray) and result.dtype.kind not in _NUMERIC_KINDS:
        raise TypeError(f"{what}: gradcli's NumPy holds numbers only, not {result.dtype}")
    if isinstance(result, tuple):
        for r in result:
            _numeric(r, what)
    return result


# ------------------------------------------------------------------------------------------ arrays
def as_array(data, what: str = "np.array()") -> np.ndarray:
    """``data`` as an array: an array itself, a tensor's data (PyTorch's error if it requires grad), a number,
    or a (nested) list or tuple of numbers sized by its nominal shape before NumPy reads it.

    Raises:
        LimitError: for more elements than the ``elements`` limit.
        TypeError: for data that is not numbers.
    """
    if isinstance(data, np.ndarray):
        return _numeric(data, what)
    if isinstance(data, Tensor):
        return data.numpy()
    if isinstance(data, (list, tuple)):
        limits.check_numel(nominal_shape(data), what)
        return _numeric(np.asarray(data), what)
    if isinstance(data, range):
        limits.check_numel((len(data),), what)
        return np.asarray(data)
    if isinstance(data, (bool, int, float, np.generic)):
        return _numeric(np.asarray(data), what)
    raise TypeError(f"{what}: gradcli's NumPy holds numbers only, not {type(data).__name__}")


def _check_lists(args, kwargs, what: str) -> None:
    """Refuse a (nested) list argument that NumPy would read as an array over the ``elements`` limit."""
    for v in (*args, *kwargs.values()):
        if isinstance(v, (list, tuple)):
            limits.check_numel(nominal_shape(v), what)


def _arrays(args, what: str) -> list:
    return [as_array(a, what) if isinstance(a, (list, tuple, Tensor, range)) else a for a in args]


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in materialize(shape, "a shape"))


def _elementwise(fn, name: str):
    """NumPy's ``fn`` on array-likes that broadcast, within the ``elements`` limit."""
    what = f"np.{name}()"

    def call(*args, **kwargs):
        args = _arrays(args, what)
        _check_lists((), kwargs, what)
        limits.check_operands([a for a in (*args, *kwargs.values()) if isinstance(a, np.ndarray)])
        return _numeric(fn(*args, **_clean(kwargs)), what)

    call.__name__ = name
    return call


def _on_array(fn, name: str):
    """NumPy's ``fn`` whose first argument is an array and whose result is no larger (reductions, reshapes)."""
    what = f"np.{name}()"

    def call(a, *args, **kwargs):
        _check_lists(args, kwargs, what)
        if "shape" in kwargs:  # zeros_like(a, shape=...)
            limits.check_numel(_shape(kwargs["shape"]), what)
        return _numeric(fn(as_array(a, what), *args, **_clean(kwargs)), what)

    call.__name__ = name
    return call


def _creation(fn, name: str, shape_of):
    """NumPy's ``fn`` making an array of the shape ``shape_of(*args, **kwargs)`` gives, checked first."""
    def call(*args, **kwargs):
        _check_lists(args[1:], {k: v for k, v in kwargs.items() if k != "shape"}, f"np.{name}()")
        limits.check_numel(shape_of(*args, **kwargs), f"np.{name}()")
        return fn(*args, **_clean(kwargs))

    call.__name__ = name
    return call


def _arange_count(*args, **kwargs) -> tuple:
    start, stop, step = 0, None, 1
    if len(args) == 1:
        stop = args[0]
    elif args:
        start, stop = args[0], args[1]
        step = args[2] if len(args) > 2 else kwargs.get("step", 1)
    start, stop, step = kwargs.get("start", start), kwargs.get("stop", stop), kwargs.get("step", step)
    if stop is None or not step:
        return (0,)
    count = (float(stop) - float(start)) / float(step)
    return (max(0, math.ceil(count)) if math.isfinite(count) else limits.current.elements + 1,)


def _array(obj, dtype=None, *, copy=True, ndmin=0):
    a = np.array(as_array(obj), dtype=to_dtype(dtype), copy=copy)
    return a if ndmin <= a.ndim else a.reshape((1,) * (ndmin - a.ndim) + a.shape)


def _asarray(obj, dtype=None):
    return np.asarray(as_array(obj, "np.asarray()"), dtype=to_dtype(dtype))


def _joined(fn, name: str):
    """``concatenate``/``stack``/``vstack``/``hstack``: their result no larger than the sum of their parts."""
    what = f"np.{name}()"

    def call(arrays, *args, **kwargs):
        parts = [as_array(a, what) for a in materialize(arrays, what)]
        limits.check_numel((sum(p.size for p in parts),), what)
        return fn(parts, *args, **_clean(kwargs))

    call.__name__ = name
    return call


def _product(kind: str):
    """``dot``/``matmul``/``outer``/``inner``: the size of the result checked before it is computed."""
    def call(a, b, **kwargs):
        a, b = as_array(a, f"np.{kind}()"), as_array(b, f"np.{kind}()")
        if kind == "outer":
            limits.check_numel((a.size, b.size), "np.outer()")
        elif a.size * b.size > limits.current.elements:
            if kind == "matmul" or (a.ndim <= 2 and b.ndim <= 2):
                limits.check_matmul(a.shape, b.shape)
            elif a.ndim and b.ndim:  # N-d dot: a's dims but the last, b's but the next-to-last
                limits.check_numel(a.shape[:-1] + b.shape[:-2] + b.shape[-1:], f"np.{kind}()")
        return {"dot": np.dot, "matmul": np.matmul, "outer": np.outer, "inner": np.inner}[kind](a, b, **_clean(kwargs))

    call.__name__ = kind
    return call


def _meshgrid(*xs, **kwargs):
    arrays = [as_array(x, "np.meshgrid()") for x in xs]
    limits.check_numel((math.prod(a.size for a in arrays) * max(len(arrays), 1),), "np.meshgrid()")
    return [np.array(g) for g in np.meshgrid(*arrays, **_clean(kwargs))]


def _broadcast_to(a, shape):
    limits.check_numel(_shape(shape), "np.broadcast_to()")
    return np.broadcast_to(as_array(a, "np.broadcast_to()"), _shape(shape))


def _linspace_shape(start, stop, num=50, *args, **kwargs) -> tuple:
    num = kwargs.get("num", num)
    extra = math.prod(np.shape(as_array(v)) or (1,) for v in (start, stop) if not isinstance(v, (int, float)))
    return (int(num) * max(extra, 1),)


def _eye_shape(N, M=None, *args, **kwargs) -> tuple:
    return (int(N), int(N if M is None else M))


def _tile(a, reps):
    a = as_array(a, "np.tile()")
    r = _shape(reps)
    limits.check_numel((a.size, math.prod(r)), "np.tile()")
    return np.tile(a, r)


def _repeat(a, repeats, axis=None):
    a = as_array(a, "np.repeat()")
    counts = as_array(repeats, "np.repeat()")
    most = int(counts.max()) if counts.size else 0
    limits.check_numel((a.size, max(most, 0)), "np.repeat()")  # each element at most `most` times
    return np.repeat(a, counts, axis=axis)


_ELEMENTWISE = (
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "square", "cbrt", "abs", "absolute", "fabs",
    "sign", "negative", "positive", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh",
    "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "floor", "ceil", "trunc", "rint", "round", "around",
    "isnan", "isinf", "isfinite", "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power",
    "mod", "remainder", "fmod", "maximum", "minimum", "fmax", "fmin", "arctan2", "hypot", "equal", "not_equal",
    "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_not", "logical_xor",
    "where", "clip", "isclose", "heaviside", "deg2rad", "rad2deg", "degrees", "radians", "nan_to_num",
    "signbit", "copysign", "sinc", "float_power")
_ON_ARRAY = (
    "sum", "mean", "std", "var", "max", "min", "amax", "amin", "argmax", "argmin", "prod", "cumsum", "cumprod",
    "median", "average", "any", "all", "nansum", "nanmean", "nanmax", "nanmin", "count_nonzero", "ptp",
    "reshape", "transpose", "ravel", "squeeze", "expand_dims", "swapaxes", "moveaxis", "flip", "fliplr",
    "flipud", "sort", "argsort", "unique", "diff", "nonzero", "argwhere", "shape", "ndim", "size", "trace",
    "triu", "tril", "roll", "atleast_1d", "atleast_2d", "copy", "percentile", "quantile", "rot90",
    "allclose", "array_equal", "searchsorted", "sign", "zeros_like",
    "ones_like", "full_like", "empty_like")
_JOINED = ("concatenate", "stack", "vstack", "hstack", "column_stack", "dstack")


def _numpy_functions() -> dict:
    members: dict = {name: _elementwise(vars(np)[name], name) for name in _ELEMENTWISE}
    members.update({name: _on_array(vars(np)[name], name) for name in _ON_ARRAY})
    for name in ("allclose", "array_equal"):  # two arrays that broadcast
        members[name] = _elementwise(vars(np)[name], name)
    members["empty_like"] = _on_array(np.zeros_like, "empty_like")  # zeros: NumPy's are uninitialized
    members.update({name: _joined(vars(np)[name], name) for name in _JOINED})
    members.update({name: _product(name) for name in ("dot", "matmul", "outer", "inner")})
    shape_first = lambda shape=(), *a, **k: _shape(k.get("shape", shape))  # noqa: E731
    members.update({
        "array": _array, "asarray": _asarray,
        "zeros": _creation(np.zeros, "zeros", shape_first), "ones": _creation(np.ones, "ones", shape_first),
        "empty": _creation(np.zeros, "empty", shape_first), "full": _creation(np.full, "full", shape_first),
        "arange": _creation(np.arange, "arange", _arange_count),
        "linspace": _creation(np.linspace, "linspace", _linspace_shape),
        "eye": _creation(np.eye, "eye", _eye_shape),
        "identity": _creation(np.identity, "identity", lambda n, *a, **k: (int(n), int(n))),
        "meshgrid": _meshgrid, "broadcast_to": _broadcast_to, "tile": _tile, "repeat": _repeat,
        "pi": np.pi, "e": np.e, "inf": np.inf, "nan": np.nan, "newaxis": None, "euler_gamma": np.euler_gamma,
    })
    members.update(SCALAR_TYPES)
    members["bool"] = SCALAR_TYPES["bool_"]
    members["double"] = SCALAR_TYPES["float64"]
    members["dtype"] = lambda value: to_dtype(value)
    return members


# ------------------------------------------------------------------------------------------ np.random
def _size_of(size) -> tuple | None:
    return None if size is None else _shape(size)


def _draw(fn, params: tuple, name: str):
    """A random draw ``fn(*params, size=None, ...)``: list parameters read as arrays, the result's size (``size``,
    else the parameters broadcast) checked before NumPy draws."""
    what = f"np.random.{name}()"

    def call(*args, **kwargs):
        args = _arrays(args, what)
        _check_lists((), {k: v for k, v in kwargs.items() if k != "size"}, what)
        kwargs = {k: (as_array(v, what) if isinstance(v, (list, tuple, Tensor)) and k != "size" else v)
                  for k, v in _clean(kwargs).items()}
        size = args[len(params)] if len(args) > len(params) else kwargs.get("size")
        if size is not None:
            limits.check_numel(_shape(size), what)
        else:
            limits.check_operands([a for a in (*args, *kwargs.values()) if isinstance(a, np.ndarray)])
        return fn(*args, **kwargs)

    call.__name__ = name
    return call


def _dims(fn, name: str):
    """``rand(d0, d1, ...)``/``randn``: dimensions checked first."""
    def call(*dims):
        limits.check_numel(tuple(int(d) for d in dims), f"np.random.{name}()")
        return fn(*dims)

    call.__name__ = name
    return call


def _choice(fn):
    def choice(a, size=None, replace=True, p=None, **kwargs):
        if isinstance(a, (int, np.integer)):
            if not replace:  # NumPy permutes the whole population first
                limits.check_numel((int(a),), "np.random.choice()")
        else:
            a = as_array(a, "np.random.choice()")
        if size is not None:
            limits.check_numel(_shape(size), "np.random.choice()")
        p = None if p is None else as_array(p, "np.random.choice()")
        return fn(a, size, replace, p, **kwargs)

    return choice


def _permutation(fn):
    def permutation(x, **kwargs):
        if isinstance(x, (int, np.integer)):
            limits.check_numel((int(x),), "np.random.permutation()")
        else:
            x = as_array(x, "np.random.permutation()")
        return fn(x, **kwargs)

    return permutation


def _shuffle(fn):
    def shuffle(x, **kwargs):
        if not isinstance(x, (np.ndarray, list)):
            raise TypeError(f"shuffle(): expected an array or a list, not {type(x).__name__}")
        fn(x, **kwargs)

    return shuffle


def _seed_value(seed):
    if seed is None or isinstance(seed, (int, np.integer)):
        return seed
    return as_array(seed, "a seed")


def random_state_members(rs: np.random.RandomState) -> dict:
    """The methods of NumPy's legacy ``RandomState`` ``rs`` a program calls (``np.random.rand``, ...)."""
    return {
        "seed": lambda seed=None: rs.seed(_seed_value(seed)),
        "rand": _dims(rs.rand, "rand"), "randn": _dims(rs.randn, "randn"),
        "random": _draw(rs.random_sample, (), "random"), "random_sample": _draw(rs.random_sample, (), "random_sample"),
        "sample": _draw(rs.random_sample, (), "sample"), "ranf": _draw(rs.random_sample, (), "ranf"),
        "standard_normal": _draw(rs.standard_normal, (), "standard_normal"),
        "normal": _draw(rs.normal, ("loc", "scale"), "normal"),
        "uniform": _draw(rs.uniform, ("low", "high"), "uniform"),
        "randint": _draw(rs.randint, ("low", "high"), "randint"),
        "exponential": _draw(rs.exponential, ("scale",), "exponential"),
        "binomial": _draw(rs.binomial, ("n", "p"), "binomial"), "poisson": _draw(rs.poisson, ("lam",), "poisson"),
        "beta": _draw(rs.beta, ("a", "b"), "beta"), "gamma": _draw(rs.gamma, ("shape", "scale"), "gamma"),
        "laplace": _draw(rs.laplace, ("loc", "scale"), "laplace"),
        "multivariate_normal": _draw(rs.multivariate_normal, ("mean", "cov"), "multivariate_normal"),
        "choice": _choice(rs.choice), "permutation": _permutation(rs.permutation), "shuffle": _shuffle(rs.shuffle),
    }


def generator_members(g: np.random.Generator) -> dict:
    """The methods of NumPy's ``Generator`` ``g`` (``np.random.default_rng(seed)``) a program calls."""
    return {
        "random": _draw(g.random, (), "random"), "standard_normal": _draw(g.standard_normal, (), "standard_normal"),
        "normal": _draw(g.normal, ("loc", "scale"), "normal"), "uniform": _draw(g.uniform, ("low", "high"), "uniform"),
        "integers": _draw(g.integers, ("low", "high"), "integers"),
        "exponential": _draw(g.exponential, ("scale",), "exponential"),
        "binomial": _draw(g.binomial, ("n", "p"), "binomial"), "poisson": _draw(g.poisson, ("lam",), "poisson"),
        "beta": _draw(g.beta, ("a", "b"), "beta"), "gamma": _draw(g.gamma, ("shape", "scale"), "gamma"),
        "multivariate_normal": _draw(g.multivariate_normal, ("mean", "cov"), "multivariate_normal"),
        "choice": _choice(g.choice), "permutation": _permutation(g.permutation), "shuffle": _shuffle(g.shuffle),
    }


def random_namespace(seed: int) -> Namespace:
    """``np.random`` of one run: NumPy's legacy ``RandomState`` seeded from the run's seed, its functions, and
    ``default_rng`` (NumPy's Generator, seeded by the program or from this run's stream) and ``RandomState``."""
    rs = np.random.RandomState(seed % 2 ** 32)
    members = random_state_members(rs)

    def default_rng(seed=None):
        return np.random.default_rng(rs.randint(2 ** 63) if seed is None else _seed_value(seed))

    def random_state(seed=None):
        return np.random.RandomState(_seed_value(seed))

    members.update({"default_rng": default_rng, "RandomState": random_state})
    return Namespace("numpy.random", members)


def numpy_namespace(seed: int) -> Namespace:
    """``numpy`` of one run (:mod:`numpy` names, see the module docstring), its ``random`` seeded from ``seed``."""
    return Namespace("numpy", dict(_numpy_functions(), random=random_namespace(seed)))


# ------------------------------------------------------------------------------------------ attributes
def _method(bound, what: str):
    """An array method, its keyword arguments cleaned (:func:`_clean`), its list arguments sized."""
    def call(*args, **kwargs):
        _check_lists(args, kwargs, what)
        return _numeric(bound(*args, **_clean(kwargs)), what)

    return call


def _astype(a):
    def astype(dtype, **kwargs):
        return a.astype(to_dtype(dtype), **_clean(kwargs))

    return astype


def _tolist(a):
    def tolist():
        limits.check_items(a.size, "tolist()")
        return a.tolist()

    return tolist


_ARRAY_METHODS = ("sum", "mean", "std", "var", "max", "min", "argmax", "argmin", "prod", "cumsum", "cumprod",
                  "any", "all", "round", "reshape", "transpose", "squeeze", "flatten", "ravel", "copy",
                  "sort", "argsort", "swapaxes", "nonzero", "fill", "item", "trace", "diagonal", "ptp",
                  "searchsorted", "conj")
#: What a program reads of an array: its data attributes, the methods above (their keyword arguments cleaned),
#: ``astype``/``tolist`` within the limits; NumPy's other ndarray names are refused (:func:`_refuser`).
ARRAY_ATTRS: dict = {
    "shape": lambda a: a.shape, "ndim": lambda a: a.ndim, "size": lambda a: a.size, "dtype": lambda a: a.dtype,
    "T": lambda a: a.T, "itemsize": lambda a: a.itemsize, "nbytes": lambda a: a.nbytes,
    "real": lambda a: a.real, "imag": lambda a: a.imag,
    "astype": _astype, "tolist": _tolist,
    # a.dot(b), a.clip(lo, hi): their results sized as np.dot's and np.clip's
    "dot": lambda a: (lambda b, **kwargs: _product("dot")(a, b, **kwargs)),
    "clip": lambda a: (lambda *args, **kwargs: _elementwise(np.clip, "clip")(a, *args, **kwargs)),
}
ARRAY_ATTRS.update({name: (lambda a, name=name: _method(vars(np.ndarray)[name].__get__(a), f"ndarray.{name}"))
                    for name in _ARRAY_METHODS})


def _refuser(owner: str, name: str):
    def refuse(obj):
        raise _refused_error(owner, name)

    return refuse


ARRAY_ATTRS.update({name: _refuser("ndarray", name) for name in (*vars(np.ndarray), *REFUSED)
                    if not name.startswith("__") and name not in ARRAY_ATTRS})
#: What a program reads of a dtype (``a.dtype.name``).
DTYPE_ATTRS = {"name": lambda d: d.name, "itemsize": lambda d: d.itemsize, "kind": lambda d: d.kind,
               "char": lambda d: d.char}
#: What a program reads of a NumPy scalar (``a.sum()``): its value and dtype.
SCALAR_ATTRS = {"item": lambda s: s.item, "dtype": lambda s: s.dtype, "shape": lambda s: s.shape,
                "ndim": lambda s: s.ndim, "size": lambda s: s.size, "tolist": lambda s: s.tolist,
                "astype": _astype, "real": lambda s: s.real, "imag": lambda s: s.imag,
                "is_integer": lambda s: s.is_integer}
_GENERATOR_ATTRS = {name: (lambda g, name=name: generator_members(g)[name])
                    for name in generator_members(np.random.default_rng(0))}
_RANDOM_STATE_ATTRS = {name: (lambda r, name=name: random_state_members(r)[name])
                       for name in random_state_members(np.random.RandomState(0))}


def attribute_table(obj) -> dict | None:
    """The table of accessors (name -> function of the object) for a NumPy value: an array, a dtype, a scalar,
    a ``Generator`` or ``RandomState``; None for anything else."""
    if isinstance(obj, np.ndarray):
        return ARRAY_ATTRS
    if isinstance(obj, np.dtype):
        return DTYPE_ATTRS
    if isinstance(obj, np.generic):
        return SCALAR_ATTRS
    if isinstance(obj, np.random.Generator):
        return _GENERATOR_ATTRS
    if isinstance(obj, np.random.RandomState):
        return _RANDOM_STATE_ATTRS
    return None


def missing(owner: str, name: str) -> Exception | None:
    """The error for ``numpy.<name>`` (or ``numpy.random.<name>``) outside the subset: PermissionError for the
    names of :data:`REFUSED`, NotImplementedError for another name NumPy has; None for a name NumPy lacks (the
    caller's AttributeError with a did-you-mean)."""
    space = vars(np.random) if owner == "numpy.random" else vars(np)
    if name in REFUSED or name in space:
        return _refused_error(owner, name)
    return None


# ------------------------------------------------------------------------------------------ torch
def from_numpy(a):
    """``torch.from_numpy(a)``: a tensor sharing ``a``'s memory (writes to either show in both).

    Raises:
        TypeError: for a value that is not an array, or of a dtype PyTorch does not take (PyTorch's messages).
        ValueError: for an array with a negative stride (PyTorch's message).
    """
    if not isinstance(a, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(a).__name__})")
    if any(s < 0 for s in a.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making a "
                         "copy of your array  with array.copy().) ")
    if a.dtype.kind not in _NUMERIC_KINDS:
        raise TypeError(f"can't convert np.ndarray of type numpy.{a.dtype}. The only supported types are: "
                        "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint64, "
                        "uint32, uint16, uint8, and bool.")
    return Tensor(a)


def as_tensor(data, dtype=None, device=None, tensor=None):
    """``torch.as_tensor(data, dtype=None)``: ``data`` itself for a tensor of that dtype, a tensor sharing an
    array's memory when no conversion is needed (as :func:`from_numpy`), else ``torch.tensor(data, dtype)``
    (``tensor``, the op)."""
    if isinstance(data, Tensor) and (dtype is None or dtype == data.dtype):
        return data
    if isinstance(data, np.ndarray) and (dtype is None or dtype.np == data.dtype) and data.dtype.kind in "biuf":
        return from_numpy(data) if all(s >= 0 for s in data.strides) else tensor(data.copy())
    if isinstance(data, Tensor):
        return data.to(dtype)
    return tensor(data, dtype=dtype)
