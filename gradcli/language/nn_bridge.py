"""torch.nn and torch.optim in programs: the glue between gradcli.api.nn / gradcli.api.optim (library code) and the
language's classes.

* A program's ``class Net(nn.Module)`` (or of any built-in module, ``class QuantLinear(nn.Linear)``) makes
  instances that are the language's :class:`~.values.Instance` holding a module of the built-in class as their
  ``base`` (made without running its ``__init__``: ``super().__init__(...)`` runs it). Assigning a Parameter or
  a module to an attribute registers it in the base; reading an attribute looks in the instance, its class,
  then the base's parameters, buffers, submodules and public methods; calling the instance calls the base,
  which runs the hooks around the program's ``forward`` (or the base class's when the program defines none).
* Reading attributes of gradcli's modules, optimizers, schedulers and hook handles from a program is limited to
  what each class lists in ``program_attributes`` plus a module's registered names; names starting with ``_``
  are refused except a module's hook tables (``_forward_hooks`` ...), given as read-only snapshots.
"""

from __future__ import annotations

import types

from ..engine.hooks import RemovableHandle
from ..engine.lazy import lazy
from .values import MISSING, Instance

# torch.nn and torch.optim are loaded when a program first names them (about 3 ms of every start otherwise):
# until then no module, Parameter, optimizer or hook handle can exist, and the checks below answer False
# without loading them.
_nn = lazy("gradcli.api.nn")
_optim = lazy("gradcli.api.optim")


def _nn_loaded() -> bool:
    """Whether gradcli.api.nn has run (a lazy module becomes a plain module when it is first used)."""
    return type(_nn) is types.ModuleType


def is_module(obj) -> bool:
    """Whether ``obj`` is one of gradcli's torch.nn modules (a built-in layer or a program object's base)."""
    return _nn_loaded() and isinstance(obj, _nn.Module)


def is_parameter(obj) -> bool:
    """Whether ``obj`` is a tensor marked as an ``nn.Parameter``."""
    return _nn_loaded() and isinstance(obj, _nn.Parameter)


def is_hook_handle(obj) -> bool:
    """Whether ``obj`` is a hook's RemovableHandle (from a module's or a tensor's ``register_*_hook``)."""
    return isinstance(obj, RemovableHandle)


def is_optimizer_or_scheduler(obj) -> bool:
    """Whether ``obj`` is one of gradcli's optimizers or learning-rate schedulers."""
    return type(_optim) is types.ModuleType and isinstance(obj, (_optim.Optimizer, _optim.lr_scheduler.LRScheduler))


def assigns_items(obj) -> bool:
    """Whether ``obj`` is one of gradcli's container modules, which take ``obj[key] = value`` as PyTorch's do
    (ModuleList, ModuleDict, Sequential, ParameterList, ParameterDict: each registers the value)."""
    return is_module(obj) and isinstance(obj, (_nn.ModuleList, _nn.ModuleDict, _nn.Sequential, _nn.ParameterList,
                                               _nn.ParameterDict))


def extends_in_place(obj) -> bool:
    """Whether ``obj`` is an ``nn.ModuleList`` or ``nn.ParameterList``, whose ``+=`` extends it in place (their
    ``__iadd__``)."""
    return is_module(obj) and isinstance(obj, (_nn.ModuleList, _nn.ParameterList))


def parameter_class():
    """``torch.nn.Parameter`` (gradcli's class), loading torch.nn if needed."""
    return _nn.Parameter


def is_parameter_class(value) -> bool:
    """Whether ``value`` is the class ``torch.nn.Parameter``."""
    return _nn_loaded() and value is _nn.Parameter

#: A module's private tables a program may look at (read-only snapshots, e.g. ``len(m._forward_hooks)``).
READABLE_TABLES = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_parameters", "_buffers",
                   "_modules")


def is_module_class(value) -> bool:
    """Whether ``value`` is gradcli's Module or one of its built-in subclasses (a base for program classes)."""
    return _nn_loaded() and isinstance(value, type) and issubclass(value, _nn.Module)


def is_torch_class(value) -> bool:
    """Whether ``value`` is one of gradcli's torch.nn or torch.optim classes (a module class, ``Parameter``, an
    optimizer or a scheduler): classes a program may name in ``isinstance`` and get from ``type()``."""
    return _nn_loaded() and isinstance(value, _nn.naming.TorchClass)


def make_instance(base: type, cls) -> Instance:
    """A new program object of ``cls`` (deriving the built-in module class ``base``): an Instance whose ``base``
    is an uninitialised ``base`` module that knows its program object, class name and ``forward``."""
    obj = Instance(cls)
    core = base.__new__(base)
    interp = cls.interpreter
    object.__setattr__(core, "_owner", obj)
    object.__setattr__(core, "_name", cls.name)

    def forward(*args, **kwargs):
        node = interp.call_node
        f = interp.object_attribute(obj, "forward", node)
        return interp.call_value(f, list(args), kwargs, node)

    object.__setattr__(core, "_forward", forward)
    obj.base = core
    return obj


def init_function(base: type, obj: Instance):
    """``super().__init__`` reaching the built-in module class: its ``__init__`` on the object's base."""
    def __init__(*args, **kwargs):
        base.__init__(obj.base, *args, **kwargs)

    return __init__


def _snapshot(core, name: str):
    table = core.__dict__.get(name, {})
    return types.MappingProxyType({k: (v._face() if isinstance(v, _nn.Module) else v) for k, v in table.items()})


def module_attribute(core, name: str, through_super: bool = False):
    """``m.name`` of a module (or a program object's base): a registered parameter, buffer or submodule, an
    attribute the module set (not starting with ``_``), or a public method or attribute of its class.

    Raises:
        AttributeError: PyTorch's message otherwise (names starting with ``_`` are refused).
    """
    if name in READABLE_TABLES:
        return _snapshot(core, name)
    d = core.__dict__
    if not name.startswith("_"):
        for store in ("_parameters", "_buffers", "_modules"):
            table = d.get(store, {})
            if name in table:
                v = table[name]
                return v._face() if isinstance(v, _nn.Module) else v
        if name in d:
            return d[name]
        if name in getattr(type(core), "program_attributes", ()):
            return getattr(core, name)
    err = AttributeError(f"'{core._get_name()}' object has no attribute '{name}'")
    if name.startswith("_"):
        err = AttributeError(f"'{core._get_name()}' object has no attribute '{name}' (gradcli does not expose "
                             "names starting with '_')")
    raise err


def object_attribute(obj, name: str):
    """``obj.name`` for gradcli's optimizers, schedulers and hook handles (their ``program_attributes``).

    Raises:
        AttributeError: Python's message otherwise.
    """
    if not name.startswith("_") and name in getattr(type(obj), "program_attributes", ()):
        return getattr(obj, name)
    raise AttributeError(f"'{type(obj).__name__}' object has no attribute '{name}'")


def is_library_object(obj) -> bool:
    """Whether ``obj`` is one of gradcli's optimizers, schedulers or hook handles."""
    return is_hook_handle(obj) or is_optimizer_or_scheduler(obj)


def set_module_attribute(core, name: str, value) -> None:
    """``m.name = value`` on a module: registers parameters and modules, as PyTorch's ``__setattr__``.

    Raises:
        AttributeError: for names starting with ``_`` or naming a method of the module.
    """
    cls_attr = getattr(type(core), name, MISSING)
    if name.startswith("_") or (callable(cls_attr) and name not in core.__dict__):
        raise AttributeError(f"cannot set attribute '{name}' of '{core._get_name()}' object")
    if name == "training" and not isinstance(value, bool):
        object.__setattr__(core, name, value)
        return
    setattr(core, name, value)


def set_instance_attribute(obj: Instance, name: str, value) -> bool:
    """``self.name = value`` on a program object with a module base: True when the base took it (a
    Parameter, a module, None for a registered name, a buffer's tensor), False for an ordinary attribute."""
    core = obj.base
    d = core.__dict__
    registered = any(name in d.get(s, ()) for s in ("_parameters", "_buffers", "_modules"))
    if registered or _nn.core_of(value) is not None or _nn.Parameter.__instancecheck__(value) or name == "training":
        obj.attrs.pop(name, None)
        if name == "training":
            object.__setattr__(core, name, value)
        else:
            setattr(core, name, value)
        return True
    return False


def namespaces(LazyNamespace) -> dict:
    """The modules ``torch.nn`` (its classes, Parameter, init, utils; ``functional`` is added by the caller),
    ``torch.nn.init``, ``torch.nn.utils``, ``torch.optim`` and ``torch.optim.lr_scheduler``, as namespaces whose
    members are made (and gradcli.api.nn / gradcli.api.optim loaded) when a program first reads one: ``nn`` is
    the function that makes torch.nn's members."""
    init_ns = LazyNamespace("torch.nn.init", lambda: {n: getattr(_nn.init, n) for n in _nn.init.NAMES})
    utils_ns = LazyNamespace("torch.nn.utils", lambda: {n: getattr(_nn.utils, n) for n in _nn.utils.NAMES})
    sched = LazyNamespace("torch.optim.lr_scheduler", lambda: dict(_optim.lr_scheduler.CLASSES))
    optim_ns = LazyNamespace("torch.optim", lambda: dict(_optim.CLASSES, lr_scheduler=sched))
    return {"nn": lambda: dict(_nn.CLASSES, Parameter=_nn.Parameter, init=init_ns, utils=utils_ns),
            "torch.nn.init": init_ns, "torch.nn.utils": utils_ns, "torch.optim": optim_ns,
            "torch.optim.lr_scheduler": sched}
