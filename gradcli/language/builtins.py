"""What a program can reach: its builtin names, the ``torch`` namespaces, and the attributes it may read or set.

Names: every op of the table (:data:`gradcli.ops.REGISTRY`, under PyTorch's names), Python's builtins that
tutorials use (:data:`FUNCTIONS` and ``print``), the namespaces ``torch`` and ``F`` (``torch.nn.functional``),
and ``no_grad``/``enable_grad``. Python's other builtins (``open``, ``eval``, ``getattr``, ``type``, ...) do not
exist in the language. The builtins that build Python values (``list``, ``range``, ``min``, ``str.join``,
``round``, ...) stay within the limits of :mod:`gradcli.engine.limits` (see :mod:`.safety`).

Attributes: only through the explicit tables of accessors below (:data:`TENSOR_ATTRS`, :data:`NODE_ATTRS`,
:data:`DTYPE_ATTRS`, :data:`STR_METHODS`, :data:`LIST_METHODS`) and the Tensor methods the op table installed
(:data:`gradcli.ops.core.base.METHODS`): no ``getattr`` with a name from the program. The builder already refused
names starting with ``__``; :func:`read_attribute` refuses attributes starting with ``_`` of gradcli's objects,
except PyTorch's own ``Tensor._version`` and a graph node's saved values ``grad_fn._saved_<name>`` and
``grad_fn._raw_saved_<name>`` (read from the table of :mod:`gradcli.ops.core.saved_names`, never by ``getattr``).
What gradcli lacks but PyTorch has is a NotImplementedError naming it (:mod:`gradcli.language.torch_names`).
"""

from __future__ import annotations

import math as _math

import builtins as _py
import types
from typing import Callable

from ..engine import autograd, dtypes, graph, limits
from ..ops.core import saved_hooks as _saved_hooks
from ..ops import REGISTRY
from ..ops.core.base import METHODS
from ..engine.tensor import Size, Tensor
from ..api.gradcheck import GradcheckError
from ..ops.linalg.decompositions import _LinAlgError  # torch.linalg.LinAlgError
from .safety import check_format_widths, materialize
from . import custom_function, nn_bridge
from .values import (MISSING, Class, ClassMethod, Function, Generator, Instance, Namespace, Property,
                     StaticMethod, type_name)


# ------------------------------------------------------------------------------------------- functions
def to_str(x="") -> str:
    """``str(x)``: strings as they are, anything else as ``print`` shows it (PyTorch's tensor repr)."""
    from ..engine.printing import format_value

    return x if isinstance(x, str) else format_value(x, default_dtype=dtypes.get_default_dtype().np)


def to_repr(x) -> str:
    """``repr(x)``: Python's for strings, numbers and containers of them, PyTorch's tensor repr otherwise (as
    ``print`` shows it)."""
    if isinstance(x, (str, int, float, bool, type(None))):
        return repr(x)
    if isinstance(x, (list, tuple)) and all(isinstance(v, (str, int, float, bool, type(None))) for v in x):
        return repr(x)
    return to_str(x)


def make_print(write: Callable[[str], None]):
    """Python's ``print(*args, sep=" ", end="\\n")`` writing to ``write`` (values formatted as :func:`to_str`)."""
    def print_(*args, sep=" ", end="\n", flush=False):
        text = (sep if sep is not None else " ").join(to_str(a) for a in args)
        write(text + (end if end is not None else "\n"))

    return print_


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


def _int(x=0):
    return int(x)


def _bool(x=False):
    return bool(x)


def _round(x, ndigits=None):
    if type(ndigits) is int and ndigits < 0 and isinstance(x, int):
        limits.check_int_bits(int(-ndigits * 3.33), f"round(..., {ndigits})")  # Python computes 10 ** -ndigits
    return round(x) if ndigits is None else round(x, ndigits)


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


def _typed_constructor(dtype_name: str):
    """``torch.FloatTensor(data)`` / ``torch.FloatTensor(*sizes)`` and the other legacy typed constructors:
    a tensor of that dtype (sizes give zeros where PyTorch leaves memory uninitialized)."""
    def construct(*args):
        dtype = dtypes.NAMES[dtype_name]
        if not args or all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return REGISTRY["zeros"](*(args or (0,)), dtype=dtype)
        if len(args) > 1:
            raise TypeError("new(): expected sizes (ints) or one sequence of data")
        return REGISTRY["tensor"](args[0], dtype=dtype)

    return construct


#: The legacy typed constructors old tutorials use (``torch.FloatTensor``, ...), by PyTorch's names.
LEGACY_CONSTRUCTORS = {name: _typed_constructor(dtype) for name, dtype in (
    ("FloatTensor", "float32"), ("DoubleTensor", "float64"), ("HalfTensor", "float16"), ("LongTensor", "int64"),
    ("IntTensor", "int32"), ("ShortTensor", "int16"), ("CharTensor", "int8"), ("ByteTensor", "uint8"),
    ("BoolTensor", "bool"))}


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
    :func:`tensor_class_attribute`). One instance, :data:`TENSOR_CLASS`."""

    __slots__ = ()

    def __call__(self, *args):
        return _torch_tensor_constructor(*args)

    def __repr__(self) -> str:
        return "<class 'torch.Tensor'>"


TENSOR_CLASS = TensorClass()

#: Tensor attributes that are data (properties in PyTorch), not methods: ``torch.Tensor.<name>`` is not a
#: function a program can call with a tensor.
_TENSOR_DATA_ATTRS = frozenset({"shape", "dtype", "ndim", "grad_fn", "output_nr", "requires_grad", "is_leaf",
                                "is_inference", "_version", "data", "T", "mT", "grad", "retains_grad"})


def tensor_class_attribute(name: str):
    """``torch.Tensor.name``: the method ``name`` of Tensor unbound, a function whose first argument is the
    tensor (``torch.Tensor.isnan(x)`` is ``x.isnan()``), as PyTorch's method descriptors are.

    Raises:
        AttributeError: PyTorch's message for a name Tensor does not have (or a data attribute such as
            ``shape``, which gradcli reads from tensors only); NotImplementedError for a method PyTorch has and
            gradcli does not (see :func:`missing`).
        TypeError (when called): PyTorch's messages without a tensor as the first argument.
    """
    data = name in _TENSOR_DATA_ATTRS or isinstance(vars(Tensor).get(name), property)  # x.real: op-table data
    if data or name.startswith("_"):
        read = f" (gradcli reads '{name}' from a tensor: x.{name})" if data else ""
        raise AttributeError(f"type object 'Tensor' has no attribute '{name}'{read}")
    if name not in TENSOR_ATTRS and name not in METHODS:
        err = missing("Tensor", name)
        if isinstance(err, AttributeError):
            hint = getattr(err, "gradcli_hint", None)
            err = AttributeError(f"type object 'Tensor' has no attribute '{name}'")
            if hint:
                err.gradcli_hint = hint
        raise err

    def unbound(*args, **kwargs):
        if not args:
            raise TypeError(f"unbound method TensorBase.{name}() needs an argument")
        self = args[0]
        if not isinstance(self, Tensor):
            raise TypeError(f"descriptor '{name}' for 'torch._C.TensorBase' objects doesn't apply to a "
                            f"'{type_name(self)}' object")
        return read_attribute(self, name)(*args[1:], **kwargs)

    unbound.__name__ = unbound.__qualname__ = name
    return unbound


def _type(obj):
    """``type(obj)``: ``torch.Tensor`` (:data:`TENSOR_CLASS`) for a tensor and ``nn.Parameter`` for a
    parameter, the class itself for gradcli's torch.nn modules, optimizers and schedulers (PyTorch's classes:
    ``type(m) is nn.Linear``), a program's class for its instances, else a :class:`TypeName`."""
    if isinstance(obj, Instance):
        return obj.cls
    if isinstance(obj, Tensor):
        return nn_bridge.Parameter if isinstance(obj, nn_bridge.Parameter) else TENSOR_CLASS
    if isinstance(obj, nn_bridge.Module) or isinstance(obj, (nn_bridge.Optimizer, nn_bridge.LRScheduler)):
        return type(obj)
    if isinstance(obj, BaseException) and EXCEPTIONS.get(type(obj).__name__) is type(obj):
        return type(obj)  # the exception class a program names (type(e) is TypeError)
    if isinstance(obj, graph.Node):  # PyTorch's backward classes: MulBackward0, a custom Function's own
        return TypeName(obj.qualified_name())
    if isinstance(obj, graph.AccumulateGrad):
        return TypeName("AccumulateGrad")
    if isinstance(obj, nn_bridge.RemovableHandle):
        return TypeName("torch.utils.hooks.RemovableHandle")
    if isinstance(obj, (Class, TensorClass)) or nn_bridge.is_torch_class(obj):
        return TypeName("type")
    name = type_name(obj)
    return TypeName(name if isinstance(obj, (int, float, str, bool, list, tuple, dict, set, type(None)))
                    else f"gradcli.{name}")


def _dict(*args, **kwargs):
    if len(args) > 1:
        raise TypeError(f"dict expected at most 1 argument, got {len(args)}")
    source = args[0] if args else ()
    out = dict(source if isinstance(source, dict) else materialize(source, "dict()"), **kwargs)
    limits.check_items(len(out), "dict()")
    return out


def _set(iterable=()):
    return set(materialize(iterable, "set()"))


def _sorted(iterable, *, key=None, reverse=False):
    return sorted(materialize(iterable, "sorted()"), key=key, reverse=reverse)


def _reversed(seq):
    return reversed(seq if isinstance(seq, (list, tuple, str, range)) else materialize(seq, "reversed()"))


def _repr(obj) -> str:
    """Python's ``repr`` of what a program holds: a Tensor as PyTorch prints it, strings quoted, containers of
    them as Python writes them (through :func:`to_str`'s rules for tensors)."""
    if isinstance(obj, (str, Device)):
        return _py.repr(obj)
    if isinstance(obj, (list, tuple, dict, set)) or not isinstance(obj, (int, float, bool, type(None))):
        return to_str(obj)
    return _py.repr(obj)


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


#: Python's builtins in the language besides ``print`` (which :func:`names` binds to the run's output).
FUNCTIONS = {
    "len": _len, "range": _range, "abs": _poly("abs", _py.abs), "min": _poly("min", _py.min, True),
    "max": _poly("max", _py.max, True), "sum": _poly("sum", _py.sum, True), "float": _float, "int": _int,
    "bool": _bool, "str": to_str, "round": _round, "list": _list, "tuple": _tuple, "enumerate": enumerate,
    "zip": zip, "dict": _dict, "set": _set, "sorted": _sorted, "reversed": _reversed, "any": _py.any,
    "all": _py.all, "hasattr": _hasattr, "repr": lambda obj: _repr(obj), "filter": filter, "map": map,
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
    if isinstance(kind, Class) or kind is OBJECT:
        yield kind
    elif kind is TENSOR_CLASS:
        yield Tensor
    elif isinstance(kind, type) and kind.__name__ in EXCEPTIONS:
        yield kind
    elif isinstance(kind, types.FunctionType) and kind in _TYPES:
        yield _TYPES[kind]
    elif is_builtin_base(kind) or nn_bridge.is_torch_class(kind):
        yield kind
    else:
        raise TypeError(who)


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
    if is_builtin_base(value) or nn_bridge.is_torch_class(value):
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
        elif cls is nn_bridge.Parameter:
            if c is Tensor:
                return True
        elif c is not nn_bridge.Parameter and issubclass(cls, c):
            return True
    return False


def _callable(obj) -> bool:
    if isinstance(obj, Instance):
        return obj.cls.lookup("__call__") is not MISSING
    return callable(obj) and not isinstance(obj, (Tensor, Namespace, str, list, tuple))


#: The exception types a program can name, raise and catch (Python's classes; instances expose no attribute).
EXCEPTIONS = {cls.__name__: cls for cls in (
    Exception, ArithmeticError, LookupError, RuntimeError, TypeError, ValueError, IndexError, KeyError,
    AttributeError, NotImplementedError, ZeroDivisionError, StopIteration, AssertionError, NameError,
    ImportError, ModuleNotFoundError, OverflowError, RecursionError, UnboundLocalError, GradcheckError)}
FUNCTIONS.update(EXCEPTIONS)
# torch.linalg.LinAlgError (torch._C._LinAlgError, a RuntimeError), catchable as either; not a
# builtin name (programs reach it as torch.linalg.LinAlgError)
EXCEPTIONS["_LinAlgError"] = _LinAlgError
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


FUNCTIONS.update({"next": _next, "iter": _iter, "type": _type, "slice": slice, "divmod": divmod, "object": OBJECT, "super": SUPER, "staticmethod": StaticMethod, "classmethod": ClassMethod,
                  "property": Property, "isinstance": _isinstance, "issubclass": _issubclass,
                  "callable": _callable})
BUILTIN_NAMES = ("print",) + tuple(FUNCTIONS)
_TYPES.update({_float: float, _int: int, _bool: bool, to_str: str, _list: list, _tuple: tuple, _dict: dict,
               _set: set})


# ------------------------------------------------------------------------------------ program classes
#: gradcli's classes a program's class may derive from: torch.autograd.Function (custom functions) and
#: torch.nn.Module with its built-in subclasses (nn_bridge.is_module_class).
BUILTIN_BASES = (custom_function.FUNCTION,)
BUILTIN_BASE_NAMES = "torch.autograd.Function, torch.nn.Module"


def is_builtin_base(value) -> bool:
    """Whether ``value`` is one of gradcli's classes a program's class may derive from."""
    return any(value is b for b in BUILTIN_BASES) or nn_bridge.is_module_class(value)


def _derives(builtin, c) -> bool:
    """Whether a program class whose gradcli base is ``builtin`` (torch.autograd.Function, or a torch.nn
    module class) derives the class ``c``: ``builtin`` itself or a class it derives (nn.Module for nn.Linear);
    never nn.Parameter, whose class check is a tensor's mark."""
    if builtin is c:
        return True
    return isinstance(builtin, type) and isinstance(c, type) and c is not nn_bridge.Parameter and issubclass(builtin, c)


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


def builtin_attribute(obj, name: str, through_super: bool = False):
    """``(True, value)`` for an attribute a program's class or instance gets from gradcli's base class
    (``Exp.apply`` of a torch.autograd.Function, ``self.weight`` or ``self.parameters`` of a torch.nn module),
    else ``(False, None)``."""
    cls = obj if isinstance(obj, Class) else obj.cls
    if cls.builtin is custom_function.FUNCTION and name == "apply":
        interp = cls.interpreter

        def apply(*args):
            return custom_function.apply(cls, args, interp.call_node)

        return True, apply
    if isinstance(obj, Instance) and obj.base is not None and isinstance(obj.base, nn_bridge.Module):
        try:
            return True, nn_bridge.module_attribute(obj.base, name, through_super)
        except AttributeError:
            return False, None
    return False, None


def set_base_attribute(obj: Instance, name: str, value) -> bool:
    """``self.name = value`` for a program object with a gradcli base: True when the base took it (torch.nn
    registers parameters and modules)."""
    if isinstance(obj.base, nn_bridge.Module):
        return nn_bridge.set_instance_attribute(obj, name, value)
    return False


def set_instance_attribute(obj: Instance, name: str, value) -> None:
    """``obj.name = value`` on a program's instance (within the ``items`` limit of attributes)."""
    if name not in obj.attrs:
        limits.check_items(len(obj.attrs) + 1, f"the attributes of a {obj.cls.name} object")
    obj.attrs[name] = value


def delete_attribute(obj, name: str) -> None:
    """``del obj.name`` for a program's instance.

    Raises:
        AttributeError: Python's message otherwise.
    """
    if isinstance(obj, Instance) and name in obj.attrs:
        del obj.attrs[name]
        return
    raise AttributeError(f"'{type_name(obj)}' object has no attribute '{name}'")


_CTX_METHODS = {"save_for_backward", "mark_non_differentiable", "set_materialize_grads"}


def _ctx_attribute(ctx, name: str):
    if name in ctx.attrs:
        return ctx.attrs[name]
    if name == "saved_tensors":
        return ctx.saved_tensors()
    if name == "needs_input_grad":
        return ctx.needs_input_grad
    if name == "save_for_backward":
        return ctx.save_for_backward
    if name == "mark_non_differentiable":
        return ctx.mark_non_differentiable
    if name == "set_materialize_grads":
        return ctx.set_materialize_grads
    raise AttributeError(f"'FunctionCtx' object has no attribute '{name}'")


def _property_attribute(prop: Property, name: str):
    if name == "setter":
        return lambda fset: Property(prop.fget, fset)
    if name == "getter":
        return lambda fget: Property(fget, prop.fset)
    if name == "fget":
        return prop.fget
    raise AttributeError(f"'property' object has no attribute '{name}'")


# ------------------------------------------------------------------------------------------ namespaces
_CACHE: dict = {}


class Device:
    """``torch.device("cpu")``: gradcli computes on the CPU only; printed as PyTorch prints a device.

    Raises:
        RuntimeError: for a device string PyTorch does not know (its message); a CUDA device is accepted as a
            name (``.to(device)`` of a CPU tensor keeps it on the CPU, as gradcli has no other).
    """

    __slots__ = ("type", "index")

    def __init__(self, type="cpu", index=None):
        text = str(type)
        kind, _, idx = text.partition(":")
        if kind not in ("cpu", "cuda", "mps", "meta"):
            raise RuntimeError(f"Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, "
                               f"maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of "
                               f"device string: {text}")
        self.type = kind
        self.index = int(idx) if idx else index

    def __repr__(self) -> str:
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

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


def math_module() -> Namespace:
    """Python's ``math`` for programs (``import math``): its functions and constants, as Python has them."""
    return Namespace("math", {name: vars(_math)[name] for name in _MATH_NAMES if name in vars(_math)})


def random_module(seed: int) -> Namespace:
    """Python's ``random`` for one run (``import random``): a ``random.Random`` of its own, seeded from the run's
    seed (``--seed``, or the seed the run context drew), so that a seeded run repeats and runs never share it."""
    import random as _random

    r = _random.Random(seed)
    return Namespace("random", {
        "random": r.random, "uniform": r.uniform, "randint": r.randint, "randrange": r.randrange,
        "choice": r.choice, "choices": r.choices, "shuffle": r.shuffle, "sample": r.sample, "gauss": r.gauss,
        "normalvariate": r.normalvariate, "seed": r.seed, "getrandbits": r.getrandbits,
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
    })
    members.update(CONSTANTS)
    members.update(LEGACY_CONSTRUCTORS)
    members.update({"device": Device, "cuda": Namespace("torch.cuda", {"is_available": lambda: False,
                                                                        "device_count": lambda: 0})})
    functional = Namespace("torch.nn.functional", members)
    # ---- torch.nn / torch.optim (gradcli.api.nn, gradcli.api.optim; language glue in nn_bridge)
    nn_spaces = nn_bridge.namespaces(Namespace)
    nn = Namespace("torch.nn", dict(nn_spaces["nn"], functional=functional))
    from ..api import autograd_functional as _functional

    autograd_functional = Namespace("torch.autograd.functional", {
        "jacobian": _functional.jacobian, "hessian": _functional.hessian, "vjp": _functional.vjp,
        "jvp": _functional.jvp, "vhp": _functional.vhp, "hvp": _functional.hvp})
    from ..api import forward_ad as _forward_ad

    forward_ad = Namespace("torch.autograd.forward_ad", {
        "dual_level": _forward_ad.dual_level, "make_dual": _forward_ad.make_dual,
        "unpack_dual": _forward_ad.unpack_dual, "enter_dual_level": _forward_ad.enter_dual_level,
        "exit_dual_level": _forward_ad.exit_dual_level, "UnpackedDualTensor": _forward_ad.UnpackedDualTensor})
    from ..api import gradcheck as _gradcheck

    function_ns = Namespace("torch.autograd.function", {"Function": custom_function.FUNCTION,
                                                         "once_differentiable": custom_function.once_differentiable})
    graph_ns = Namespace("torch.autograd.graph", {"saved_tensors_hooks": _saved_hooks.saved_tensors_hooks,
                                                  "save_on_cpu": _saved_hooks.save_on_cpu})
    autograd_ns = Namespace("torch.autograd", {"grad": autograd.grad, "backward": autograd.backward,
                                               "gradcheck": _gradcheck.gradcheck,
                                               "gradgradcheck": _gradcheck.gradgradcheck, "function": function_ns,
                                               "Variable": _variable, "Function": custom_function.FUNCTION,
                                               "functional": autograd_functional, "forward_ad": forward_ad,
                                               "graph": graph_ns})
    from ..api import func as _func

    func_ns = Namespace("torch.func", {"grad": _func.grad, "grad_and_value": _func.grad_and_value,
                                       "vjp": _func.vjp, "jvp": _func.jvp, "jacrev": _func.jacrev,
                                       "jacfwd": _func.jacfwd, "hessian": _func.hessian, "vmap": _func.vmap})
    # torch.linalg: the table's "linalg.<name>" entries
    linalg_ns = Namespace("torch.linalg", dict({k[len("linalg."):]: v for k, v in REGISTRY.items()
                                                if k.startswith("linalg.")}, LinAlgError=_LinAlgError))
    torch = Namespace("torch", dict(members, nn=nn, autograd=autograd_ns, optim=nn_spaces["torch.optim"],
                                    func=func_ns, vmap=_func.vmap, linalg=linalg_ns))
    return {"torch": torch, "torch.nn": nn, "torch.nn.functional": functional, "torch.autograd": autograd_ns,
            "torch.nn.init": nn_spaces["torch.nn.init"], "torch.nn.utils": nn_spaces["torch.nn.utils"],
            "torch.optim": nn_spaces["torch.optim"],
            "torch.optim.lr_scheduler": nn_spaces["torch.optim.lr_scheduler"],
            "torch.autograd.functional": autograd_functional, "torch.autograd.forward_ad": forward_ad,
            "torch.autograd.function": function_ns, "torch.func": func_ns,
            "torch.autograd.graph": graph_ns,
            "torch.linalg": linalg_ns,
            "math": math_module()}


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
    out.update({"print": make_print(write), "torch": mods["torch"], "F": mods["torch.nn.functional"]})
    return out


# ------------------------------------------------------------------------------------------ attributes
def _tolist(t: Tensor):
    def tolist():
        limits.check_items(t.data.size, "tolist()")
        return t.tolist()

    return tolist


def _str_join(sep: str):
    def join(iterable):
        items = materialize(iterable, "str.join()")
        limits.check_items(sum(len(s) if isinstance(s, str) else 0 for s in items) + len(sep) * len(items),
                           "str.join()")
        return sep.join(items)

    return join


def _str_format(s: str):
    """``str.format``: replacement fields by position or name only (``{0.attr}`` and ``{0[key]}`` would reach
    Python's internals, and are refused), each value formatted as an f-string formats it."""
    import string

    def format(*args, **kwargs):
        out, auto = [], 0
        for literal, field, spec, conv in string.Formatter().parse(s):
            out.append(literal)
            if field is None:
                continue
            if "." in field or "[" in field:
                raise ValueError("gradcli's str.format takes fields by position or name only")
            if field == "":
                value, auto = args[auto], auto + 1
            elif field.isdigit():
                value = args[int(field)]
            else:
                value = kwargs[field]
            if conv == "r":
                value = _repr(value)
            elif conv == "s":
                value = to_str(value)
            if isinstance(spec, str) and "{" in spec:
                raise ValueError("gradcli's str.format does not take nested fields")
            if spec:
                v = value.item() if isinstance(value, Tensor) else value
                if not isinstance(v, (int, float, str, bool)):
                    raise TypeError(f"unsupported format string passed to {type_name(value)}.__format__")
                check_format_widths(spec, "str.format()")
                out.append(_py.format(v, spec))
            else:
                out.append(to_str(value))
            limits.check_items(_py.sum(len(p) for p in out), "str.format()")
        return "".join(out)

    return format


def _str_replace(s: str):
    def replace(old, new, count=-1):
        if isinstance(old, str) and isinstance(new, str) and isinstance(count, int):
            hits = len(s) + 1 if old == "" else s.count(old)
            if count >= 0:
                hits = _py.min(hits, count)
            limits.check_items(len(s) + hits * (len(new) - len(old)), "str.replace()")
        return s.replace(old, new, count)

    return replace


# The attributes the language may read, one accessor each (written out: no getattr with a program's name).
# Tensor methods of the op table (METHODS) are added by _tensor_member; ``x.grad`` is read by the interpreter
# (it reports the warning PyTorch gives for a non-leaf's grad).
TENSOR_ATTRS = {
    "shape": lambda t: t.shape, "dtype": lambda t: t.dtype, "ndim": lambda t: t.ndim,
    "grad_fn": lambda t: t.grad_fn, "output_nr": lambda t: t.output_nr, "requires_grad": lambda t: t.requires_grad,
    "is_leaf": lambda t: t.is_leaf, "is_inference": lambda t: t.is_inference,
    # the one underscore name of a Tensor that PyTorch documents and programs read: the version counter
    "_version": lambda t: t._version,
    "data": lambda t: t.detach(), "T": lambda t: t.T, "mT": lambda t: t.mT, "backward": lambda t: t.backward,
    "detach": lambda t: t.detach, "detach_": lambda t: t.detach_, "requires_grad_": lambda t: t.requires_grad_,
    "retain_grad": lambda t: t.retain_grad, "register_hook": lambda t: t.register_hook,
    "register_post_accumulate_grad_hook": lambda t: t.register_post_accumulate_grad_hook, "retains_grad": lambda t: t.retains_grad, "zero_": lambda t: t.zero_,
    "item": lambda t: t.item, "tolist": _tolist, "size": lambda t: t.size, "dim": lambda t: t.dim,
    "numel": lambda t: t.numel, "is_floating_point": lambda t: t.is_floating_point, "numpy": lambda t: t.numpy,
    "grad": None,  # read with its warning, by the interpreter
}
NODE_ATTRS = {"name": lambda f: (lambda: graph.torch_name(f)), "next_functions": lambda f: f.next_functions,
              "variable": lambda f: f.variable, "register_hook": lambda f: f.register_hook,
              "register_prehook": lambda f: f.register_prehook,
              # grad_fn.metadata (a dict kept with the node; AccumulateGrad has none in gradcli)
              "metadata": lambda f: f.metadata}
#: what a program reads of ``grad_fn._raw_saved_self`` (torch._C._autograd.SavedTensor)
SAVED_TENSOR_ATTRS = {"register_hooks": lambda s: s.register_hooks}
DTYPE_ATTRS = {"is_floating_point": lambda d: d.is_floating_point, "itemsize": lambda d: d.itemsize}
SIZE_ATTRS = {"numel": lambda s: s.numel}
#: what a program reads of ``t.numpy()``'s array (programs print gradients with .numpy())
NDARRAY_ATTRS = {"shape": lambda a: tuple(a.shape), "ndim": lambda a: a.ndim, "size": lambda a: a.size,
                 "tolist": lambda a: a.tolist}
def _str_pad(s: str, how: str):
    # ljust/rjust/center/zfill within the items limit (the width is the string's length)
    def pad(width, *fill):
        if not isinstance(width, int):
            raise TypeError(f"'{type_name(width)}' object cannot be interpreted as an integer")
        limits.check_items(width, f"str.{how}()")
        return {"ljust": s.ljust, "rjust": s.rjust, "center": s.center, "zfill": s.zfill}[how](width, *fill)

    return pad


STR_METHODS = {"upper": lambda s: s.upper, "lower": lambda s: s.lower, "strip": lambda s: s.strip,
               "split": lambda s: s.split, "join": _str_join, "replace": _str_replace, "format": _str_format,
               "startswith": lambda s: s.startswith, "endswith": lambda s: s.endswith,
               "lstrip": lambda s: s.lstrip, "rstrip": lambda s: s.rstrip, "title": lambda s: s.title,
               "capitalize": lambda s: s.capitalize, "find": lambda s: s.find, "index": lambda s: s.index,
               "count": lambda s: s.count, "isdigit": lambda s: s.isdigit, "isalpha": lambda s: s.isalpha,
               "ljust": lambda s: _str_pad(s, "ljust"), "rjust": lambda s: _str_pad(s, "rjust"),
               "center": lambda s: _str_pad(s, "center"), "zfill": lambda s: _str_pad(s, "zfill"),
               "splitlines": lambda s: s.splitlines, "rsplit": lambda s: s.rsplit}
DICT_METHODS = {"items": lambda d: d.items, "keys": lambda d: d.keys, "values": lambda d: d.values,
                "get": lambda d: d.get, "pop": lambda d: d.pop, "setdefault": lambda d: d.setdefault,
                "update": lambda d: d.update, "copy": lambda d: d.copy}
def _list_extend(v: list):
    def extend(iterable):
        v.extend(materialize(iterable, "list.extend()"))
    return extend


LIST_METHODS = {"append": lambda v: v.append, "pop": lambda v: v.pop, "index": lambda v: v.index,
                "count": lambda v: v.count, "extend": _list_extend, "insert": lambda v: v.insert,
                "remove": lambda v: v.remove, "reverse": lambda v: v.reverse, "clear": lambda v: v.clear}


def _tensor_member(t: Tensor, name: str):
    """An op-table method of Tensor (``x.sum``, ``x.pow``) bound to ``t``, or None if ``name`` is not one. Looked
    up in the class's own namespace, among the names the op table installed."""
    if name not in METHODS:
        return None
    member = vars(Tensor).get(name)
    if isinstance(member, property):
        return member.fget(t)
    if isinstance(member, types.FunctionType):
        return types.MethodType(member, t)
    return None


_SEE_OPS = "run `gradcli ops` for the supported ops"


def unsupported_name_hint(name: str, known=()) -> str | None:
    """The hint for an undefined ``name``: that PyTorch has it (``torch.X`` or ``F.X``, gradcli/language/torch_names.py)
    and gradcli does not, or a did-you-mean among ``known`` (the names the program can see), else None."""
    from . import torch_names

    if name in torch_names.TORCH or name in torch_names.FUNCTIONAL:
        return f"PyTorch has {name}, but gradcli does not support it ({_SEE_OPS})"
    return did_you_mean(name, known)


#: PyTorch's submodules that gradcli does not have (``torch.linalg``): using one says so, rather than claiming
#: that PyTorch lacks it.
TORCH_SUBMODULES = ("fft", "special", "distributions", "optim", "utils", "cuda", "backends", "func",
                    "jit", "sparse", "testing", "onnx", "fx", "export", "profiler", "amp", "cpu", "mps", "quantization",
                    "ao", "hub", "masked", "nested", "signal", "library", "compiler", "overrides")


def did_you_mean(name: str, candidates) -> str | None:
    """``did you mean 'x'?`` for the closest of ``candidates`` to a mistyped ``name`` (difflib), or None."""
    import difflib

    close = difflib.get_close_matches(name, [c for c in candidates if not c.startswith("_")], n=1, cutoff=0.75)
    return f"did you mean '{close[0]}'?" if close else None


def missing(owner: str, name: str, members=()) -> Exception:
    """The error for ``owner.name`` that gradcli does not have: NotImplementedError naming it when PyTorch has
    it (gradcli/language/torch_names.py, or a PyTorch submodule), else the AttributeError PyTorch would raise, with a
    did-you-mean among ``members`` (what the owner has) when one is close."""
    from . import torch_names

    known = {"torch": torch_names.TORCH, "torch.nn.functional": torch_names.FUNCTIONAL,
             "Tensor": torch_names.TENSOR, "torch.linalg": torch_names.LINALG}.get(owner, ())
    if name in known:
        return NotImplementedError(f"'{owner}.{name}' is not supported by gradcli ({_SEE_OPS})")
    if owner == "torch" and name in TORCH_SUBMODULES:
        return NotImplementedError(f"gradcli does not support torch.{name} yet ({_SEE_OPS})")
    if owner == "Tensor":
        err = AttributeError(f"'Tensor' object has no attribute '{name}'")
        members = list(TENSOR_ATTRS) + sorted(METHODS)
    else:
        err = AttributeError(f"module '{owner}' has no attribute '{name}'")
    hint = did_you_mean(name, members)
    if hint:
        err.gradcli_hint = hint
    return err


def read_attribute(obj, name: str):
    """``obj.name`` as a program may read it: through the tables above, a namespace's members, or the fields of
    a named tuple (``max(x, 0).values``). ``x.grad`` is the interpreter's (see :data:`TENSOR_ATTRS`).

    Raises:
        AttributeError: for a name outside the tables (Python's or PyTorch's message) or starting with ``_``
            (but ``Tensor._version`` and a graph node's ``_saved_<name>``/``_raw_saved_<name>``).
        NotImplementedError: for a name PyTorch has and gradcli does not (see :func:`missing`).
    """
    if isinstance(obj, custom_function.FunctionCtx) and not name.startswith("__"):
        return _ctx_attribute(obj, name)
    if isinstance(obj, nn_bridge.Module):  # torch.nn modules: their registered names and public API
        return nn_bridge.module_attribute(obj, name)
    if nn_bridge.is_library_object(obj):  # optimizers, schedulers, hook handles
        return nn_bridge.object_attribute(obj, name)
    if name == "__name__" and isinstance(obj, (Function, Class)):
        return obj.name.rpartition(".")[2]
    if name == "__name__" and (obj is TENSOR_CLASS or isinstance(obj, TypeName)):
        return "Tensor" if obj is TENSOR_CLASS else obj.name.rpartition(".")[2]
    if name == "__name__" and (nn_bridge.is_torch_class(obj) or (isinstance(obj, type)
                                                                 and EXCEPTIONS.get(obj.__name__) is obj)):
        return obj.__name__
    if obj is TENSOR_CLASS:  # torch.Tensor.sum: the method, unbound
        return tensor_class_attribute(name)
    if name.startswith(("_saved_", "_raw_saved_")) and isinstance(obj, graph.Node):  # PyTorch's names
        from ..ops.core import saved_names

        return saved_names.saved_value(obj, name)
    if name.startswith("_") and not (name == "_version" and isinstance(obj, Tensor)):
        raise AttributeError(f"'{type_name(obj)}' object has no attribute '{name}' (gradcli does not "
                             "expose names starting with '_')")
    if isinstance(obj, Property):
        return _property_attribute(obj, name)
    if isinstance(obj, Generator) and name in ("send", "close"):
        return obj.send if name == "send" else obj.close
    if isinstance(obj, Tensor):
        accessor = TENSOR_ATTRS.get(name)
        if accessor is not None:
            return accessor(obj)
        member = _tensor_member(obj, name)
        if member is None:
            raise missing("Tensor", name)
        return member
    if isinstance(obj, Namespace):
        if name in obj.members:
            return obj.members[name]
        raise missing(obj.name, name, obj.members)
    table = None
    if isinstance(obj, (graph.Node, graph.AccumulateGrad)):
        table = NODE_ATTRS
    elif isinstance(obj, dtypes.DType):
        table = DTYPE_ATTRS
    elif isinstance(obj, _saved_hooks.SavedTensor):  # grad_fn._raw_saved_self.register_hooks
        table = SAVED_TENSOR_ATTRS
    elif isinstance(obj, Size):
        table = SIZE_ATTRS
    elif type(obj).__name__ == "ndarray" or type(obj).__module__ == "gradcli.ops.shape.inplace":
        table = NDARRAY_ATTRS
    elif isinstance(obj, str):
        table = STR_METHODS
    elif isinstance(obj, list):
        table = LIST_METHODS
    elif isinstance(obj, dict):
        table = DICT_METHODS
    if table is not None and name in table:
        return table[name](obj)
    fields = getattr(type(obj), "_fields", ()) if isinstance(obj, tuple) else ()
    if name in fields:  # max(dim).values, .indices
        return obj[fields.index(name)]
    raise AttributeError(f"'{type_name(obj)}' object has no attribute '{name}'")


def write_attribute(obj, name: str, value) -> None:
    """``obj.name = value``: only a tensor's ``requires_grad`` (PyTorch's setter) and ``grad``.

    Raises:
        RuntimeError: PyTorch's messages for ``requires_grad`` on a non-leaf or a tensor that is not floating.
        AttributeError: for any other attribute.
    """
    if isinstance(obj, Tensor) and name == "requires_grad":
        # PyTorch's setter: its own texts, then requires_grad_()'s (the long one for a non-leaf)
        if obj.grad_fn is not None and value:
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        if value and not obj.is_floating_point():
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        obj.requires_grad_(bool(value))
    elif isinstance(obj, Tensor) and name == "grad":
        obj.grad = value
    elif isinstance(obj, nn_bridge.Module):
        nn_bridge.set_module_attribute(obj, name, value)
    elif isinstance(obj, custom_function.FunctionCtx) and not name.startswith("__"):
        if name in ("saved_tensors", "needs_input_grad") or name in _CTX_METHODS:
            raise AttributeError(f"attribute '{name}' of 'FunctionCtx' objects is not writable")
        if name not in obj.attrs:
            limits.check_items(len(obj.attrs) + 1, "the attributes of ctx")
        obj.attrs[name] = value
    else:
        raise AttributeError(f"cannot set attribute '{name}' of '{type_name(obj)}' object")
