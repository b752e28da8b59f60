"""The ``torch`` namespaces a program reaches, and the classes it names by PyTorch's names.

:func:`modules` builds ``torch``, ``torch.nn``, ``torch.nn.functional`` (``F``), ``torch.autograd`` (with
``functional``, ``forward_ad``, ``function``, ``graph``), ``torch.func``, ``torch.linalg``, ``torch.optim`` and
Python's ``math``; :func:`lazy_random_module` is Python's ``random`` for one run. The classes a program names:
``torch.Tensor`` (:data:`TENSOR_CLASS`, with the legacy constructors :data:`LEGACY_CONSTRUCTORS`),
``torch.device`` (:class:`Device`), the exception types (:data:`EXCEPTIONS`), and :class:`TypeName`, what
``type(v)`` gives for a value whose class a program cannot name otherwise.
"""

from __future__ import annotations

import collections
import math as _math

from ..engine import autograd, dtypes
from ..ops.core import saved_hooks as _saved_hooks
from ..ops import REGISTRY
from ..engine.lazy import lazy
from ..engine.tensor import Size, Tensor
from ..api import gradcheck as _gradcheck
from ..api.gradcheck import GradcheckError
from ..ops.linalg.inverses import _LinAlgError  # torch.linalg.LinAlgError
from ..ops.elementwise import special as _special  # torch.special
from ..ops.shape import layout as _layout  # torch's memory formats
from ..engine import hooks as _hooks  # torch.autograd.graph.register_multi_grad_hook
from ..api import autograd_graph as _autograd_graph  # torch.autograd's layout policy, graph's mutation block, grad_dtype
from . import custom_function, nn_bridge
from . import files as _files
from .itertools_module import itertools_module
from .torch_generator import TORCH_NAMES as _GENERATOR_NAMES, Device  # torch.device, torch.Generator
from .safety import admit, materialize, sized
from .values import LazyNamespace, Namespace

# torch.func, torch.autograd.functional and forward_ad: loaded when a program's namespaces are first built
_func = lazy("gradcli.api.func")
_functional = lazy("gradcli.api.autograd_functional")
_forward_ad = lazy("gradcli.api.forward_ad")
# NumPy for programs: loaded when a program imports numpy or converts an array (torch.from_numpy)
_numpy_module = lazy("gradcli.language.numpy_module")
_data = lazy("gradcli.api.data")  # torch.utils.data: loaded when a program first reads one of its names


# ------------------------------------------------------------------------------------------- classes
def _torch_tensor_constructor(*args):
    """``torch.Tensor(data)`` or ``torch.Tensor(*sizes)``: PyTorch's legacy constructor, always of the default
    float dtype (sizes give zeros where PyTorch leaves memory uninitialized)."""
    if not args:
        return REGISTRY["zeros"](0)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return REGISTRY["zeros"](*args)
    if len(args) > 1:
        raise TypeError("Tensor(): expected sizes (ints) or one sequence of data")
    return REGISTRY["tensor"](args[0], dtype=dtypes.get_default_dtype())


class LegacyTensorType(type):
    """The metaclass of the legacy typed tensor classes (``torch.FloatTensor``, ``torch.LongTensor``, ...):
    calling one makes a tensor of its dtype from data or sizes (sizes give zeros where PyTorch leaves memory
    uninitialized), ``isinstance(x, torch.FloatTensor)`` holds for a float32 tensor, ``x.type(torch.LongTensor)``
    converts (the class's ``legacy_dtype``), and the class prints as PyTorch's (``<class 'torch.FloatTensor'>``).

    Raises (when called):
        TypeError: for several arguments that are not all sizes (PyTorch's message).
    """

    def __call__(cls, *args):
        dtype = cls.legacy_dtype
        if not args or all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return REGISTRY["zeros"](*(args or (0,)), dtype=dtype)
        if len(args) > 1:
            raise TypeError("new(): expected sizes (ints) or one sequence of data")
        return REGISTRY["tensor"](args[0], dtype=dtype)

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.legacy_dtype

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"


#: The legacy typed constructors old tutorials use (``torch.FloatTensor``, ...), by PyTorch's names.
LEGACY_CONSTRUCTORS = {name: LegacyTensorType(name, (), {"legacy_dtype": dtypes.NAMES[dtype], "__slots__": ()})
                       for name, dtype in dtypes.LEGACY_TYPES.items()}


class TypeName:
    """What ``type(v)`` gives a program for a value whose class it cannot name otherwise: PyTorch's and
    Python's class name as they print it (``<class 'int'>``), comparable, and nothing else (no Python type
    object of gradcli's internals reaches the program)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<class '{self.name}'>"

    def __eq__(self, other) -> bool:
        return isinstance(other, TypeName) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


class TensorClass:
    """``torch.Tensor`` in programs: the class of every tensor (``type(x) is torch.Tensor``,
    ``isinstance(x, torch.Tensor)``, ``issubclass(nn.Parameter, torch.Tensor)``), printing as PyTorch's
    ``<class 'torch.Tensor'>``; calling it is the legacy constructor (:func:`_torch_tensor_constructor`), and its
    methods read through the class are unbound (``torch.Tensor.sum(x, 0)`` is ``x.sum(0)``, see
    :func:`.attributes.tensor_class_attribute`). One instance, :data:`TENSOR_CLASS`."""

    __slots__ = ()

    def __call__(self, *args):
        return _torch_tensor_constructor(*args)

    def __repr__(self) -> str:
        return "<class 'torch.Tensor'>"


TENSOR_CLASS = TensorClass()

#: The exception types a program can name, raise and catch (Python's classes; instances expose no attribute).
EXCEPTIONS = {cls.__name__: cls for cls in (
    Exception, ArithmeticError, LookupError, RuntimeError, TypeError, ValueError, IndexError, KeyError,
    AttributeError, NotImplementedError, ZeroDivisionError, StopIteration, AssertionError, NameError,
    ImportError, ModuleNotFoundError, OverflowError, RecursionError, UnboundLocalError, GradcheckError,
    OSError, FileNotFoundError, PermissionError, UnicodeError, UnicodeDecodeError)}
# torch.linalg.LinAlgError (torch._C._LinAlgError, a RuntimeError), catchable as either; not a
# builtin name (programs reach it as torch.linalg.LinAlgError)
EXCEPTIONS["_LinAlgError"] = _LinAlgError


# ------------------------------------------------------------------------------------------ namespaces
_CACHE: dict = {}


#: ``pi``, ``e``, ``inf`` and ``nan`` (Python floats, as ``torch.pi`` ... are), bare and under ``torch``.
CONSTANTS = {"pi": _math.pi, "e": _math.e, "inf": _math.inf, "nan": _math.nan}


def modules() -> dict[str, Namespace]:
    """The modules a program can import (and the ``torch``/``F`` it has without importing), by dotted name:
    ``torch``, ``torch.nn``, ``torch.nn.functional``, ``torch.autograd``, ``torch.autograd.functional`` and
    ``torch.autograd.forward_ad`` (:mod:`gradcli.api.forward_ad`). ``torch`` and ``F`` hold every op,
    the dtypes, the grad modes, ``Tensor``, ``Size`` and ``get_default_dtype``.

    Built once and shared by every run (a program cannot change a module: namespaces refuse assignment), again
    only if the op registry has grown since."""
    key = len(REGISTRY)
    if _CACHE.get("modules_key") != key:
        _CACHE["modules"], _CACHE["modules_key"] = _modules(), key
    return _CACHE["modules"]


_MATH_NAMES = ("acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "comb", "copysign", "cos",
               "cosh", "degrees", "dist", "erf", "erfc", "exp", "expm1", "fabs", "factorial", "floor", "fmod",
               "frexp", "fsum", "gamma", "gcd", "hypot", "isclose", "isfinite", "isinf", "isnan", "isqrt", "lcm",
               "ldexp", "lgamma", "log", "log10", "log1p", "log2", "modf", "perm", "pow", "prod", "radians",
               "remainder", "sin", "sinh", "sqrt", "tan", "tanh", "trunc", "pi", "e", "tau", "inf", "nan")


def _bits(n) -> int | None:
    return abs(n).bit_length() if type(n) is int else None


def _factorial_bits(n=None, *rest) -> int | None:
    return n * max(n.bit_length(), 1) if type(n) is int and n > 0 else None


def _prod_bits(iterable=(), *, start=1) -> int | None:
    if not isinstance(iterable, (list, tuple)):
        return None
    return sum(_bits(v) or 64 for v in (*iterable, start))


def _comb_bits(n=None, k=None) -> int | None:
    if type(n) is not int or n <= 0 or type(k) is not int:
        return None
    return min(n, max(k, 0) * n.bit_length())


def _perm_bits(n=None, k=None) -> int | None:
    if type(n) is not int or n <= 0:
        return None
    return (n if k is None or type(k) is not int else max(k, 0)) * n.bit_length()


#: The functions of ``math`` whose integer results can grow without bound, behind the ``int_bits`` limit (the
#: bits their result could have at most, from their arguments: n! < n**n, C(n, k) < 2**n, P(n, k) < n**k, the
#: product of integers < 2**(sum of their bits)).
_MATH_SIZED = {
    "factorial": (_factorial_bits, "math.factorial()"), "prod": (_prod_bits, "math.prod()"),
    "comb": (_comb_bits, "math.comb()"), "perm": (_perm_bits, "math.perm()"),
    "lcm": (lambda *a: sum(_bits(v) or 0 for v in a), "math.lcm()"),
}


def math_module() -> Namespace:
    """Python's ``math`` for programs (``import math``): its functions and constants, as Python has them; those
    whose integers can grow without bound (:data:`_MATH_SIZED`) within the ``int_bits`` limit."""
    members = {name: vars(_math)[name] for name in _MATH_NAMES if name in vars(_math)}
    for name, (size, what) in _MATH_SIZED.items():
        members[name] = sized(members[name], size, what, "int_bits")
    return Namespace("math", members)


def _ordered_dict(*args, **kwargs):
    """``collections.OrderedDict(items=(), **kwargs)`` within the ``items`` limit."""
    if len(args) > 1:
        raise TypeError(f"expected at most 1 arguments, got {len(args)}")
    source = args[0] if args else ()
    items = list(source.items()) if isinstance(source, dict) else materialize(source, "OrderedDict()")
    admit(len(items) + len(kwargs), "OrderedDict()")
    return collections.OrderedDict(items, **kwargs)


def _defaultdict(default_factory=None, *args, **kwargs):
    """``collections.defaultdict(default_factory, items=(), **kwargs)`` within the ``items`` limit (a missing
    key calls ``default_factory``, which may be a program's function)."""
    if default_factory is not None and not callable(default_factory):
        raise TypeError("first argument must be callable or None")
    return collections.defaultdict(default_factory, _ordered_dict(*args, **kwargs))


def _namedtuple(typename, field_names, *, rename=False, defaults=None, module=None):
    """``collections.namedtuple(typename, field_names)``: Python's (which accepts only identifiers as names),
    with at most the ``items`` limit of fields."""
    fields = field_names.replace(",", " ").split() if isinstance(field_names, str) else \
        materialize(field_names, "namedtuple()")
    admit(len(fields), "namedtuple()")
    return collections.namedtuple(typename, fields, rename=rename, defaults=defaults, module="__main__")


def _collection_types() -> dict:
    """The classes behind ``OrderedDict`` and ``defaultdict`` (for ``isinstance``), by the language's function."""
    return {_ordered_dict: collections.OrderedDict, _defaultdict: collections.defaultdict}


def collections_module() -> Namespace:
    """Python's ``collections`` for programs (``from collections import OrderedDict``): ``OrderedDict``,
    ``defaultdict`` and ``namedtuple``, made within the ``items`` limit."""
    return Namespace("collections", {"OrderedDict": _ordered_dict, "defaultdict": _defaultdict,
                                     "namedtuple": _namedtuple})


def random_module(seed: int) -> Namespace:
    """Python's ``random`` for one run (``import random``): a ``random.Random`` of its own, seeded from the run's
    seed (``--seed``, or the seed the run context drew), so that a seeded run repeats and runs never share it."""
    import random as _random

    r = _random.Random(seed)
    return Namespace("random", {
        "random": r.random, "uniform": r.uniform, "randint": r.randint, "randrange": r.randrange,
        "choice": r.choice, "shuffle": r.shuffle, "gauss": r.gauss,
        # within the limits: the items of the lists they build, the bits of the integer
        "choices": sized(r.choices, lambda population=(), weights=None, *, cum_weights=None, k=1:
                         k if type(k) is int else None, "random.choices()"),
        "sample": sized(r.sample, lambda population=(), k=0, **kw: k if type(k) is int else None, "random.sample()"),
        "getrandbits": sized(r.getrandbits, lambda k=0: k if type(k) is int else None, "random.getrandbits()",
                             "int_bits"),
        "normalvariate": r.normalvariate, "seed": r.seed,
        "betavariate": r.betavariate, "expovariate": r.expovariate})


class _LazyRandomModule(Namespace):
    """:func:`random_module`, made when a program first reads it (``import random``): seeding a
    ``random.Random`` takes longer than a whole small batch entry, and few programs import it."""

    __slots__ = ("seed",)

    def __init__(self, seed: int):
        self.name = "random"
        self.seed = seed

    @property
    def members(self) -> dict:
        slot = Namespace.__dict__["members"]
        try:
            return slot.__get__(self, Namespace)
        except AttributeError:
            members = random_module(self.seed).members
            slot.__set__(self, members)
            return members


def lazy_random_module(seed: int) -> Namespace:
    """:func:`random_module` for one run, made on first use (see :class:`_LazyRandomModule`): the same module."""
    return _LazyRandomModule(seed)


def lazy_numpy_modules(seed: int) -> dict[str, Namespace]:
    """``numpy`` and ``numpy.random`` for one run (:mod:`.numpy_module`), built when a program first reads them:
    one namespace, its ``random`` NumPy's ``RandomState`` seeded from the run's ``seed``."""
    built: list = []

    def members() -> dict:
        if not built:
            built.append(_numpy_module.numpy_namespace(seed))
        return built[0].members

    return {"numpy": LazyNamespace("numpy", members),
            "numpy.random": LazyNamespace("numpy.random", lambda: members()["random"].members)}


def _from_numpy(ndarray):
    """``torch.from_numpy(ndarray)``: see :func:`gradcli.language.numpy_module.from_numpy`."""
    return _numpy_module.from_numpy(ndarray)


def _as_tensor(data, dtype=None, device=None):
    """``torch.as_tensor(data, dtype=None, device=None)``: see :func:`gradcli.language.numpy_module.as_tensor`."""
    return _numpy_module.as_tensor(data, dtype, device, REGISTRY["tensor"])


def _variable(data, requires_grad: bool = False, volatile: bool = False):
    """The legacy ``torch.autograd.Variable(tensor, requires_grad=False)``: since PyTorch 0.4 a Tensor: a new
    leaf sharing ``data``'s memory (detached), requiring grad when asked. Matches torch.autograd.Variable.

    Raises:
        TypeError: for data that is not a Tensor (PyTorch's message).
    """
    if not isinstance(data, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
    t = data.detach()
    if requires_grad:
        t.requires_grad_(True)
    return t


def _modules() -> dict[str, Namespace]:
    members = dict((k, v) for k, v in REGISTRY.items() if not k.startswith("_") and "." not in k)
    members.update({name: d for name, d in dtypes.NAMES.items()})
    members.update({
        "no_grad": autograd.no_grad, "enable_grad": autograd.enable_grad,
        "set_grad_enabled": autograd.set_grad_enabled, "is_grad_enabled": autograd.is_grad_enabled,
        "inference_mode": autograd.inference_mode,
        "is_inference_mode_enabled": autograd.is_inference_mode_enabled,
        "Tensor": TENSOR_CLASS, "Size": Size, "get_default_dtype": dtypes.get_default_dtype,
        "from_numpy": _from_numpy, "as_tensor": _as_tensor,
    })
    members.update(CONSTANTS)
    members.update(_layout.MEMORY_FORMATS)  # torch.contiguous_format, torch.channels_last, ...
    members.update(LEGACY_CONSTRUCTORS)
    members.update(_GENERATOR_NAMES)  # torch.Generator, default_generator, manual_seed, default device
    members.update({"device": Device, "cuda": Namespace("torch.cuda", {"is_available": lambda: False,
                                                                        "device_count": lambda: 0})})
    functional = Namespace("torch.nn.functional", members)
    # ---- torch.nn / torch.optim (gradcli.api.nn, gradcli.api.optim; language glue in nn_bridge)
    nn_spaces = nn_bridge.namespaces(LazyNamespace)
    nn = LazyNamespace("torch.nn", lambda: dict(nn_spaces["nn"](), functional=functional))
    autograd_functional = Namespace("torch.autograd.functional", {
        "jacobian": _functional.jacobian, "hessian": _functional.hessian, "vjp": _functional.vjp,
        "jvp": _functional.jvp, "vhp": _functional.vhp, "hvp": _functional.hvp})
    forward_ad = Namespace("torch.autograd.forward_ad", {
        "dual_level": _forward_ad.dual_level, "make_dual": _forward_ad.make_dual,
        "unpack_dual": _forward_ad.unpack_dual, "enter_dual_level": _forward_ad.enter_dual_level,
        "exit_dual_level": _forward_ad.exit_dual_level, "UnpackedDualTensor": _forward_ad.UnpackedDualTensor})
    function_ns = Namespace("torch.autograd.function", {"Function": custom_function.FUNCTION,
                                                         "once_differentiable": custom_function.once_differentiable})
    graph_ns = Namespace("torch.autograd.graph", {"saved_tensors_hooks": _saved_hooks.saved_tensors_hooks,
                                                  "save_on_cpu": _saved_hooks.save_on_cpu,
                                                  "register_multi_grad_hook": _hooks.register_multi_grad_hook,
                                                  "allow_mutation_on_saved_tensors":
                                                      _autograd_graph.allow_mutation_on_saved_tensors})
    autograd_ns = Namespace("torch.autograd", {"grad": autograd.grad, "backward": autograd.backward,
                                               "gradcheck": _gradcheck.gradcheck,
                                               "gradgradcheck": _gradcheck.gradgradcheck, "function": function_ns,
                                               "Variable": _variable, "Function": custom_function.FUNCTION,
                                               "functional": autograd_functional, "forward_ad": forward_ad,
                                               "graph": graph_ns,
                                               "enforce_grad_layout_policy":
                                                   _autograd_graph.enforce_grad_layout_policy})
    func_ns = Namespace("torch.func", {"grad": _func.grad, "grad_and_value": _func.grad_and_value,
                                       "vjp": _func.vjp, "jvp": _func.jvp, "jacrev": _func.jacrev,
                                       "jacfwd": _func.jacfwd, "hessian": _func.hessian, "vmap": _func.vmap,
                                       "linearize": _func.linearize, "rearrange": _func.rearrange})
    # torch.linalg: the table's "linalg.<name>" entries
    linalg_ns = Namespace("torch.linalg", dict({k[len("linalg."):]: v for k, v in REGISTRY.items()
                                                if k.startswith("linalg.")}, LinAlgError=_LinAlgError))
    # torch.special: the table's "special.<name>" entries
    special_ns = Namespace("torch.special", _special.special_namespace())
    data_ns = LazyNamespace("torch.utils.data", lambda: dict(_data.NAMES))
    utils_ns = Namespace("torch.utils", {"data": data_ns})
    torch = Namespace("torch", dict(members, nn=nn, autograd=autograd_ns, optim=nn_spaces["torch.optim"],
                                    func=func_ns, vmap=_func.vmap, linalg=linalg_ns, special=special_ns,
                                    utils=utils_ns))
    return {"torch": torch, "torch.nn": nn, "torch.nn.functional": functional, "torch.autograd": autograd_ns,
            "torch.nn.init": nn_spaces["torch.nn.init"], "torch.nn.utils": nn_spaces["torch.nn.utils"],
            "torch.optim": nn_spaces["torch.optim"],
            "torch.optim.lr_scheduler": nn_spaces["torch.optim.lr_scheduler"],
            "torch.autograd.functional": autograd_functional, "torch.autograd.forward_ad": forward_ad,
            "torch.autograd.function": function_ns, "torch.func": func_ns,
            "torch.autograd.graph": graph_ns,
            "torch.linalg": linalg_ns, "torch.special": special_ns,
            "torch.utils": utils_ns, "torch.utils.data": data_ns, "collections": collections_module(),
            "itertools": itertools_module(),
            "math": math_module(), "pathlib": Namespace("pathlib", {"Path": _files.PathValue})}

