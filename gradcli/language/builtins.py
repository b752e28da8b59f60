"""What a program can reach by name: its builtin names, Python's builtins that tutorials use, and the glue of a
program's classes to gradcli's base classes.

Names: every op of the table (:data:`gradcli.ops.REGISTRY`, under PyTorch's names), Python's builtins that
tutorials use (:data:`FUNCTIONS` and ``print``), the namespaces ``torch`` and ``F`` (``torch.nn.functional``,
built in :mod:`.namespaces`), and ``no_grad``/``enable_grad``. ``open`` reads text files, read-only, where the
command allows (:mod:`.files`). Python's other builtins (``eval``, ``getattr``, ``exec``, ...) do not exist in the
language. The builtins that build Python values (``list``,
``range``, ``min``, ``str.join``, ``round``, ...) stay within the limits of :mod:`gradcli.engine.limits` (see
:mod:`.safety`).

The attributes a program may read and set are in :mod:`.attributes`, ``str``/``repr``/``print`` and the string
methods in :mod:`.strings`, the ``torch`` namespaces and the classes a program names in :mod:`.namespaces`; the
names the interpreter uses from those are imported here too, so that it reaches the language's surface through
this one module.
"""

from __future__ import annotations

import builtins as _py
import types
from typing import Callable

from ..engine import autograd, graph
from ..ops import REGISTRY
from ..engine.tensor import Tensor
from .safety import admit, materialize
from .attributes import TENSOR_ATTRS, TYPE_ATTRS
from .containers import DICT_METHODS, LIST_METHODS, SET_METHODS, TUPLE_METHODS
from .strings import STR_METHODS
from ..ops.core.declare import METHODS
from . import custom_function, files, help_text, itertools_module, nn_bridge
# the interpreter reaches these through this module too (builtins.read_attribute, builtins.modules, ...)
from .attributes import (builtin_attribute, delete_attribute, did_you_mean, read_attribute,  # noqa: F401
                         set_base_attribute, set_instance_attribute, unsupported_name_hint, write_attribute)
from .namespaces import (CONSTANTS, EXCEPTIONS, TENSOR_CLASS, LegacyTensorType, TensorClass, TypeName,  # noqa: F401
                         _collection_types, lazy_random_module, modules)
from .strings import _repr, make_print, to_repr, to_str  # noqa: F401
from .values import MISSING, Class, ClassMethod, Instance, Namespace, Property, StaticMethod, type_name


# ------------------------------------------------------------------------------------------- functions
def _len(x):
    return len(x)


def _list(iterable=()):
    return materialize(iterable, "list()")


def _tuple(iterable=()):
    return tuple(materialize(iterable, "tuple()"))


def _range(*args):
    ints = [int(a) if isinstance(a, Tensor) else a for a in args]
    for a in ints:
        if not isinstance(a, int) or isinstance(a, bool):
            raise TypeError(f"'{type_name(a)}' object cannot be interpreted as an integer")
    return range(*ints)


def _poly(torch_name, py_fn, iterates=False):
    """A builtin that is PyTorch's op for tensors and Python's function otherwise (max, min, sum, abs).
    ``iterates``: Python's form may take one iterable, read within the ``items`` limit."""
    def fn(*args, **kwargs):
        if args and isinstance(args[0], Tensor):
            return REGISTRY[torch_name](*args, **kwargs)
        if iterates and args and not isinstance(args[0], (int, float, complex)):
            args = (materialize(args[0], f"{torch_name}()"),) + args[1:]
            if torch_name == "sum" and len(args) > 1 and isinstance(args[1], (str, list, tuple)):
                raise TypeError("sum() adds numbers and tensors in gradcli; join sequences with +")
        return py_fn(*args, **kwargs)

    fn.__name__ = torch_name
    return fn


def _float(x=0.0):
    return float(x)


_NO_BASE = object()


def _int(x=0, base=_NO_BASE):
    """Python's ``int(x)`` and ``int(text, base)`` (``base`` 0 reads a prefix: ``int('0b100', base=0)`` is 4);
    Python's errors (a base with a non-string, an invalid literal, a string over Python's digit limit)."""
    return int(x) if base is _NO_BASE else int(x, base)


def _bool(x=False):
    return bool(x)


def _round(x, ndigits=None):
    if type(ndigits) is int and ndigits < 0 and isinstance(x, int):
        admit(int(-ndigits * 3.33), f"round(..., {ndigits})", "int_bits")  # Python computes 10 ** -ndigits
    return round(x) if ndigits is None else round(x, ndigits)


def _type(obj):
    """``type(obj)``: ``torch.Tensor`` (:data:`TENSOR_CLASS`) for a tensor and ``nn.Parameter`` for a
    parameter, the class itself for gradcli's torch.nn modules, optimizers and schedulers (PyTorch's classes:
    ``type(m) is nn.Linear``), a program's class for its instances, else a :class:`TypeName`."""
    if isinstance(obj, Instance):
        return obj.cls
    if isinstance(obj, Tensor):
        return nn_bridge.parameter_class() if nn_bridge.is_parameter(obj) else TENSOR_CLASS
    if nn_bridge.is_module(obj) or nn_bridge.is_optimizer_or_scheduler(obj):
        return type(obj)
    if isinstance(obj, BaseException) and EXCEPTIONS.get(type(obj).__name__) is type(obj):
        return type(obj)  # the exception class a program names (type(e) is TypeError)
    if isinstance(obj, graph.Node):  # PyTorch's backward classes: MulBackward0, a custom Function's own
        return TypeName(obj.qualified_name())
    if isinstance(obj, graph.AccumulateGrad):
        return TypeName("AccumulateGrad")
    if nn_bridge.is_hook_handle(obj):
        return TypeName("torch.utils.hooks.RemovableHandle")
    if isinstance(obj, (Class, TensorClass)) or nn_bridge.is_torch_class(obj):
        return TypeName("type")
    if type(obj) in _collection_types().values():  # OrderedDict, defaultdict
        return TypeName(f"collections.{type(obj).__name__}")
    name = type_name(obj)
    return TypeName(name if isinstance(obj, (int, float, str, bool, list, tuple, dict, set, type(None)))
                    else f"gradcli.{name}")


def _dict(*args, **kwargs):
    if len(args) > 1:
        raise TypeError(f"dict expected at most 1 argument, got {len(args)}")
    source = args[0] if args else ()
    out = dict(source if isinstance(source, dict) else materialize(source, "dict()"), **kwargs)
    admit(len(out), "dict()")
    return out


def _set(iterable=()):
    return set(materialize(iterable, "set()"))


def _sorted(iterable, *, key=None, reverse=False):
    return sorted(materialize(iterable, "sorted()"), key=key, reverse=reverse)


def _reversed(seq):
    return reversed(seq if isinstance(seq, (list, tuple, str, range)) else materialize(seq, "reversed()"))


def _hasattr(obj, name) -> bool:
    """Python's ``hasattr`` over what the language lets a program read (:func:`read_attribute`)."""
    if not isinstance(name, str):
        raise TypeError("hasattr(): attribute name must be string")
    if isinstance(obj, Tensor) and name == "grad":  # the interpreter's own attribute (see TENSOR_ATTRS)
        return True
    try:
        read_attribute(obj, name)
    except (AttributeError, NotImplementedError):
        return False
    return True


def _delattr(obj, name) -> None:
    """Python's ``delattr(obj, name)``: ``del obj.name`` for a program's object (:func:`delete_attribute`).

    Raises:
        TypeError: for a name that is not a string; AttributeError as Python's otherwise."""
    if not isinstance(name, str):
        raise TypeError(f"attribute name must be string, not '{type_name(name)}'")
    delete_attribute(obj, name)


def _dir(*args) -> list:
    """Python's ``dir(obj)`` over what the language lets a program read: the public methods of strings, lists,
    dicts, sets and tuples (Python's list for them), a namespace's members, a tensor's attributes and methods,
    a program object's attributes and its classes' names (with the special methods they define).

    Raises:
        TypeError: without an argument (gradcli lists a value's names, not the program's variables)."""
    if len(args) != 1:
        raise TypeError(f"gradcli's dir() takes exactly one argument ({len(args)} given)")
    obj = args[0]
    if type(obj) in (str, list, dict, set, tuple, int, float, bool):
        return _py.dir(type(obj))  # names only, as Python lists them
    if isinstance(obj, Namespace):
        return sorted(obj.members)
    if isinstance(obj, Tensor):
        return sorted(n for n in set(TENSOR_ATTRS) | set(METHODS) if not n.startswith("_") or n == "_version")
    if isinstance(obj, (Instance, Class)):
        cls = obj.cls if isinstance(obj, Instance) else obj
        names = {n for c in cls.mro for n in c.namespace}
        if isinstance(obj, Instance):
            names.update(obj.attrs)
        return sorted(names)
    names = set()
    for n in getattr(type(obj), "program_attributes", ()):
        names.add(n)
    return sorted(names)


#: Python's builtins in the language besides ``print`` (which :func:`names` binds to the run's output).
FUNCTIONS = {
    "len": _len, "range": _range, "abs": _poly("abs", _py.abs), "min": _poly("min", _py.min, True),
    "max": _poly("max", _py.max, True), "sum": _poly("sum", _py.sum, True), "float": _float, "int": _int,
    "bool": _bool, "str": to_str, "round": _round, "list": _list, "tuple": _tuple, "enumerate": enumerate,
    "zip": zip, "dict": _dict, "set": _set, "sorted": _sorted, "reversed": _reversed, "any": _py.any,
    "all": _py.all, "hasattr": _hasattr, "repr": lambda obj: _repr(obj), "filter": filter, "map": map,
    "id": _py.id, "dir": _dir, "delattr": _delattr,
}
class _Marker:
    """A builtin name with no Python behaviour of its own (``object``, ``super``): the interpreter gives it
    its meaning."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<class '{self.name}'>"


OBJECT = _Marker("object")
SUPER = _Marker("super")

#: Python's types behind the builtins that convert (``float``, ``int``, ...), for ``isinstance``.
_TYPES = {}


def _classinfo(kind, who: str = "isinstance() arg 2 must be a type, a tuple of types, or a union"):
    """The classes ``kind`` stands for (a class or a tuple of them, nested), one by one, as :func:`_isinstance`
    checks them: program classes and ``object`` as they are, ``torch.Tensor`` as gradcli's Tensor,
    ``float``/``list``/... as Python's types, exception types and gradcli's torch.nn/torch.optim classes as they are.

    Raises:
        TypeError: Python's message ``who`` for anything else."""
    if isinstance(kind, tuple):  # one at a time, as Python checks them: (int, 2) holds for 1
        for k in kind:
            yield from _classinfo(k, who)
        return
    yield _as_class(kind, who)


def _isinstance(obj, kind) -> bool:
    """Python's ``isinstance`` over the language's values: program classes (through their MRO), ``object``,
    ``torch.Tensor``, ``nn.Parameter``, the builtin types (``float``, ``list``, ...), exception types and gradcli's
    torch.nn modules, optimizers and schedulers (a program's module derives its torch.nn base class).

    Raises:
        TypeError: Python's message when ``kind`` is not a class or a tuple of classes."""
    for c in _classinfo(kind):
        if c is OBJECT:
            return True
        if isinstance(c, Class):
            if isinstance(obj, Instance) and c in obj.cls.mro:
                return True
        elif isinstance(obj, Instance):
            if obj.cls.builtin is not None and _derives(obj.cls.builtin, c):
                return True
        elif isinstance(obj, c):  # Parameter checks the tensor's mark (its metaclass's __instancecheck__)
            return True
    return False


def _as_class(value, who: str):
    """``value`` as the class :func:`_issubclass` compares: a program class, ``object``, gradcli's Tensor for
    ``torch.Tensor``, Python's type behind ``float``/``int``/..., or a gradcli class (torch.nn, torch.optim,
    torch.autograd.Function, exceptions)."""
    if isinstance(value, Class) or value is OBJECT:
        return value
    if value is TENSOR_CLASS:
        return Tensor
    if isinstance(value, type) and value.__name__ in EXCEPTIONS:
        return value
    if isinstance(value, types.FunctionType) and value in _TYPES:
        return _TYPES[value]
    if is_builtin_base(value) or nn_bridge.is_torch_class(value) or isinstance(value, LegacyTensorType) or (
            isinstance(value, type) and value.__module__ in (
                "gradcli.api.data", "gradcli.language.torch_generator")):  # torch.utils.data's, Generator, device
        return value
    raise TypeError(who)


def _issubclass(cls, kind) -> bool:
    """Python's ``issubclass`` over the language's classes: program classes (through their MRO and their
    gradcli base), ``torch.Tensor`` and ``nn.Parameter`` (a subclass of it, as in PyTorch), Python's builtin
    types, exceptions and gradcli's torch.nn/torch.optim classes.

    Raises:
        TypeError: Python's messages when ``cls`` is not a class, or ``kind`` not a class or tuple of them."""
    cls = _as_class(cls, "issubclass() arg 1 must be a class")
    for c in _classinfo(kind, "issubclass() arg 2 must be a class, a tuple of classes, or a union"):
        if c is OBJECT or cls is c:
            return True
        if isinstance(cls, Class):
            if (isinstance(c, Class) and c in cls.mro) or (
                    not isinstance(c, Class) and cls.builtin is not None and _derives(cls.builtin, c)):
                return True
        elif cls is OBJECT or isinstance(c, Class):
            continue
        elif nn_bridge.is_parameter_class(cls):
            if c is Tensor:
                return True
        elif not nn_bridge.is_parameter_class(c) and issubclass(cls, c):
            return True
    return False


def _callable(obj) -> bool:
    if isinstance(obj, Instance):
        return obj.cls.lookup("__call__") is not MISSING
    return callable(obj) and not isinstance(obj, (Tensor, Namespace, str, list, tuple))


# the exception types are builtin names (torch.linalg.LinAlgError, registered as "_LinAlgError", is not)
FUNCTIONS.update((k, v) for k, v in EXCEPTIONS.items() if not k.startswith("_"))
_NO_DEFAULT = object()


def _next(iterator, default=_NO_DEFAULT):
    """Python's ``next(iterator[, default])``."""
    if not hasattr(type(iterator), "__next__"):
        raise TypeError(f"'{type_name(iterator)}' object is not an iterator")
    try:
        return next(iterator)
    except StopIteration:
        if default is _NO_DEFAULT:
            raise
        return default


def _iter(obj):
    """Python's ``iter(obj)`` (one argument) over the language's iterables."""
    return iter(obj)


FUNCTIONS.update({"open": files.open_file, "next": _next, "iter": _iter, "type": _type, "slice": slice, "divmod": divmod, "object": OBJECT, "super": SUPER, "staticmethod": StaticMethod, "classmethod": ClassMethod,
                  "property": Property, "isinstance": _isinstance, "issubclass": _issubclass,
                  "callable": _callable})
BUILTIN_NAMES = ("print",) + tuple(FUNCTIONS)


def _unbound(kind: type, table: dict, name: str):
    """``str.lower`` and the other methods of a builtin type read through the type: a function whose first
    argument is the object (Python's TypeError for another type)."""
    def method(*args, **kwargs):
        if not args or not isinstance(args[0], kind):
            got = type_name(args[0]) if args else "nothing"
            raise TypeError(f"descriptor '{name}' for '{kind.__name__}' objects doesn't apply to a '{got}' object")
        return table[name](args[0])(*args[1:], **kwargs)

    method.__name__ = name
    return method


def _fromkeys(iterable, value=None) -> dict:
    """``dict.fromkeys(iterable, value=None)`` within the ``items`` limit."""
    return dict.fromkeys(materialize(iterable, "dict.fromkeys()"), value)


for _fn, _kind, _table in ((to_str, str, STR_METHODS), (_list, list, LIST_METHODS), (_dict, dict, DICT_METHODS),
                           (_set, set, SET_METHODS), (_tuple, tuple, TUPLE_METHODS)):
    TYPE_ATTRS[_fn] = {n: _unbound(_kind, _table, n) for n in _table}
TYPE_ATTRS[_dict]["fromkeys"] = _fromkeys
TYPE_ATTRS[to_str]["maketrans"] = STR_METHODS["maketrans"]("")
TYPE_ATTRS.update(itertools_module.FUNCTION_ATTRS)  # itertools.chain.from_iterable
_TYPES.update({_float: float, _int: int, _bool: bool, to_str: str, _list: list, _tuple: tuple, _dict: dict,
               _set: set})
_TYPES.update(_collection_types())  # collections.OrderedDict, defaultdict


# ------------------------------------------------------------------------------------ program classes
#: gradcli's classes a program's class may derive from: torch.autograd.Function (custom functions) and
#: torch.nn.Module with its built-in subclasses (nn_bridge.is_module_class).
BUILTIN_BASES = (custom_function.FUNCTION,)
BUILTIN_BASE_NAMES = "torch.autograd.Function, torch.nn.Module, torch.utils.data.Dataset"


def is_builtin_base(value) -> bool:
    """Whether ``value`` is one of gradcli's classes a program's class may derive from."""
    return any(value is b for b in BUILTIN_BASES) or nn_bridge.is_module_class(value) or (
        isinstance(value, type) and value.__module__ == "gradcli.api.data" and "program_base" in vars(value))


def _derives(builtin, c) -> bool:
    """Whether a program class whose gradcli base is ``builtin`` (torch.autograd.Function, or a torch.nn
    module class) derives the class ``c``: ``builtin`` itself or a class it derives (nn.Module for nn.Linear);
    never nn.Parameter, whose class check is a tensor's mark."""
    if builtin is c:
        return True
    return isinstance(builtin, type) and isinstance(c, type) and not nn_bridge.is_parameter_class(c) and issubclass(builtin, c)


def builtin_instantiate(base):
    """How instances of a class deriving from ``base`` are made (None: a plain :class:`Instance`)."""
    if nn_bridge.is_module_class(base):
        return lambda cls: nn_bridge.make_instance(base, cls)
    return None


def base_init(base, obj):
    """``super().__init__`` reaching ``object`` or gradcli's base: a function that takes no arguments (a
    torch.nn module class's ``__init__`` with its own arguments)."""
    if nn_bridge.is_module_class(base) and isinstance(obj, Instance) and obj.base is not None:
        return nn_bridge.init_function(base, obj)

    def __init__():
        return None

    return __init__


# ------------------------------------------------------------------------------------------ names
_CACHE: dict = {}


def names(mods: dict[str, Namespace], write: Callable[[str], None]) -> dict:
    """The builtin names of a run (name → value): the ops, :data:`FUNCTIONS`, ``print`` writing to ``write``,
    ``torch`` and ``F`` from ``mods`` (:func:`modules`), ``no_grad`` and ``enable_grad``."""
    key = (len(REGISTRY), len(FUNCTIONS))
    if _CACHE.get("names_key") != key:
        static = {k: v for k, v in REGISTRY.items() if not k.startswith("_") and "." not in k}
        static.update(FUNCTIONS)
        static.update({"no_grad": autograd.no_grad, "enable_grad": autograd.enable_grad})
        static.update(CONSTANTS)
        _CACHE["names"], _CACHE["names_key"] = static, key
    out = dict(_CACHE["names"])
    out.update({"print": make_print(write), "help": help_text.make_help(write), "torch": mods["torch"],
                "F": mods["torch.nn.functional"]})
    return out


