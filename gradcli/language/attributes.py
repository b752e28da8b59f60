"""The attributes a program may read and set, and the rules for them.

Attributes: only through the explicit tables of accessors below (:data:`TENSOR_ATTRS`, :data:`NODE_ATTRS`,
:data:`DTYPE_ATTRS`, :data:`gradcli.language.strings.STR_METHODS`, :data:`LIST_METHODS`) and the Tensor methods
the op table installed (:data:`gradcli.ops.core.declare.METHODS`): no ``getattr`` with a name from the program. The
builder already refused names starting with ``__``; :func:`read_attribute` refuses attributes starting with ``_``
of gradcli's objects, except PyTorch's own ``Tensor._version`` and a graph node's saved values
``grad_fn._saved_<name>`` and ``grad_fn._raw_saved_<name>`` (read from the table of
:mod:`gradcli.ops.core.saved_names`, never by ``getattr``). What gradcli lacks but PyTorch has is a
NotImplementedError naming it (:func:`missing`, from :mod:`gradcli.language.torch_names`). Also here: what a
program's class or instance gets from gradcli's base class (:func:`builtin_attribute`), and ``ctx.<name>`` of a
custom Function.
"""

from __future__ import annotations

import types

from ..engine import dtypes, graph
from ..ops.core import saved_hooks as _saved_hooks
from ..ops.core import saved_names
from ..ops.core.declare import METHODS
from ..engine.tensor import Size, Tensor
from ..engine.lazy import lazy
from . import files
from .safety import admit, sized
from . import custom_function, nn_bridge
from .namespaces import EXCEPTIONS, TENSOR_CLASS, TypeName
from .strings import STR_METHODS
from .containers import DICT_METHODS, LIST_METHODS, MORE_STR_METHODS, SET_METHODS, TUPLE_METHODS  # noqa: F401
from .values import Class, Function, Generator, Instance, Namespace, Property, type_name

torch_names = lazy("gradcli.language.torch_names")  # PyTorch's names, a long table read only for hints
numpy_module = lazy("gradcli.language.numpy_module")  # NumPy's tables: read once a program holds NumPy values


# ------------------------------------------------------------------------------------------ tables
def _tolist(t: Tensor):
    def tolist():
        admit(t.data.size, "tolist()")
        return t.tolist()

    return tolist


# The attributes the language may read, one accessor each (written out: no getattr with a program's name).
# Tensor methods of the op table (METHODS) are added by _tensor_member; ``x.grad`` is read by the interpreter
# (it reports the warning PyTorch gives for a non-leaf's grad).
TENSOR_ATTRS = {
    "shape": lambda t: t.shape, "dtype": lambda t: t.dtype, "ndim": lambda t: t.ndim,
    "grad_fn": lambda t: t.grad_fn, "output_nr": lambda t: t.output_nr, "requires_grad": lambda t: t.requires_grad,
    "is_leaf": lambda t: t.is_leaf, "is_inference": lambda t: t.is_inference,
    # the underscore names of a Tensor that PyTorch documents and programs read: the version counter, a
    # view's base
    "_version": lambda t: t._version, "_base": lambda t: t._base, "_is_view": lambda t: t._is_view,
    "data": lambda t: t.detach(), "T": lambda t: t.T, "mT": lambda t: t.mT, "backward": lambda t: t.backward,
    "detach": lambda t: t.detach, "detach_": lambda t: t.detach_, "requires_grad_": lambda t: t.requires_grad_,
    "retain_grad": lambda t: t.retain_grad, "register_hook": lambda t: t.register_hook,
    "register_post_accumulate_grad_hook": lambda t: t.register_post_accumulate_grad_hook, "retains_grad": lambda t: t.retains_grad, "zero_": lambda t: t.zero_,
    "item": lambda t: t.item, "tolist": _tolist, "size": lambda t: t.size, "dim": lambda t: t.dim,
    "numel": lambda t: t.numel, "is_floating_point": lambda t: t.is_floating_point, "numpy": lambda t: t.numpy,
    "grad": None,  # read with its warning, by the interpreter
    "grad_dtype": lambda t: t.grad_dtype,  # (installed by gradcli.api.autograd_graph)
}
_TENSOR_UNDERSCORE = frozenset({"_version", "_base", "_is_view"})
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
                 "tolist": lambda a: sized(a.tolist, lambda: a.size, "tolist()")}
#: the methods of ``list``, ``dict``, ``set`` and ``tuple`` a program may call are containers.py's; ``str``'s
#: are strings.py's and containers.py's
STR_METHODS.update(MORE_STR_METHODS)
#: what a program reads of the builtin types ``str``, ``list``, ``dict``, ``set``, ``tuple`` (the language's
#: functions behind those names, filled in by builtins.py): their methods unbound (``str.lower``), and
#: ``dict.fromkeys`` and ``str.maketrans``
TYPE_ATTRS: dict = {}


def _tensor_member(t: Tensor, name: str):
    """An op-table method of Tensor (``x.sum``, ``x.pow``) bound to ``t``, or None if ``name`` is not one. Looked
    up in the class's own namespace, among the names the op table installed."""
    if name not in METHODS:
        return None
    member = vars(Tensor).get(name)
    if type(t) is not Tensor and name in vars(type(t)):  # a subclass's own method (vmap's BatchedTensor.add_)
        member = vars(type(t))[name]
    if isinstance(member, property):
        return member.fget(t)
    if isinstance(member, types.FunctionType):
        return types.MethodType(member, t)
    return None


_SEE_OPS = "run `gradcli ops` for the supported ops"


def unsupported_name_hint(name: str, known=()) -> str | None:
    """The hint for an undefined ``name``: that PyTorch has it (``torch.X`` or ``F.X``, gradcli/language/torch_names.py)
    and gradcli does not, or a did-you-mean among ``known`` (the names the program can see), else None."""
    if name in torch_names.TORCH or name in torch_names.FUNCTIONAL:
        return f"PyTorch has {name}, but gradcli does not support it ({_SEE_OPS})"
    return did_you_mean(name, known)


#: PyTorch's submodules that gradcli does not have (``torch.linalg``): using one says so, rather than claiming
#: that PyTorch lacks it.
TORCH_SUBMODULES = ("fft", "distributions", "optim", "utils", "cuda", "backends", "func",
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
    known = {"torch": torch_names.TORCH, "torch.nn.functional": torch_names.FUNCTIONAL,
             "Tensor": torch_names.TENSOR, "torch.linalg": torch_names.LINALG,
             "torch.special": torch_names.SPECIAL}.get(owner) or torch_names.MEMBERS.get(owner, ())
    if name in known:
        return NotImplementedError(f"'{owner}.{name}' is not supported by gradcli ({_SEE_OPS})")
    if owner in ("numpy", "numpy.random"):  # refused (files, pickles, the OS) or outside the subset
        refused = numpy_module.missing(owner, name)
        if refused is not None:
            return refused
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


# ------------------------------------------------------------------------------------------ torch.Tensor
#: Tensor attributes that are data (properties in PyTorch), not methods: ``torch.Tensor.<name>`` is not a
#: function a program can call with a tensor.
_TENSOR_DATA_ATTRS = frozenset({"shape", "dtype", "ndim", "grad_fn", "output_nr", "requires_grad", "is_leaf",
                                "is_inference", "_version", "data", "T", "mT", "grad", "retains_grad",
                                "grad_dtype"})


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


# -------------------------------------------------------------------------- program classes and ctx
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
    if isinstance(obj, Instance) and obj.base is not None and nn_bridge.is_module(obj.base):
        try:
            return True, nn_bridge.module_attribute(obj.base, name, through_super)
        except AttributeError:
            return False, None
    return False, None


def set_base_attribute(obj: Instance, name: str, value) -> bool:
    """``self.name = value`` for a program object with a gradcli base: True when the base took it (torch.nn
    registers parameters and modules)."""
    if nn_bridge.is_module(obj.base):
        return nn_bridge.set_instance_attribute(obj, name, value)
    return False


def set_instance_attribute(obj: Instance, name: str, value) -> None:
    """``obj.name = value`` on a program's instance (within the ``items`` limit of attributes)."""
    if name not in obj.attrs:
        admit(len(obj.attrs) + 1, f"the attributes of a {obj.cls.name} object")
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


# ------------------------------------------------------------------------------------------ read, write
def _class_name(obj):
    """``obj.__name__`` for a class a program can name (a program's function or class, ``torch.Tensor``, a
    :class:`TypeName`, gradcli's torch classes, the exception types), else None."""
    if isinstance(obj, (Function, Class)):
        return obj.name.rpartition(".")[2]
    if obj is TENSOR_CLASS or isinstance(obj, TypeName):
        return "Tensor" if obj is TENSOR_CLASS else obj.name.rpartition(".")[2]
    if nn_bridge.is_torch_class(obj) or (isinstance(obj, type) and EXCEPTIONS.get(obj.__name__) is obj):
        return obj.__name__
    return None


def _tensor_attribute(t: Tensor, name: str):
    """``t.name``: :data:`TENSOR_ATTRS`, else an op-table method (:func:`_tensor_member`), else :func:`missing`."""
    accessor = TENSOR_ATTRS.get(name)
    if accessor is not None:
        return accessor(t)
    member = _tensor_member(t, name)
    if member is None:
        raise missing("Tensor", name)
    return member


def _attribute_table(obj):
    """The table of accessors for ``obj``'s kind (graph nodes, dtypes, saved tensors, sizes, numpy arrays,
    strings, lists, dicts), or None."""
    if isinstance(obj, (graph.Node, graph.AccumulateGrad)):
        return NODE_ATTRS
    if isinstance(obj, dtypes.DType):
        return DTYPE_ATTRS
    if isinstance(obj, _saved_hooks.SavedTensor):  # grad_fn._raw_saved_self.register_hooks
        return SAVED_TENSOR_ATTRS
    if isinstance(obj, Size):
        return SIZE_ATTRS
    if type(obj).__module__ == "gradcli.ops.shape.inplace":
        return NDARRAY_ATTRS
    if type(obj).__module__.startswith("numpy"):  # arrays, dtypes, scalars, np.random's generators
        return numpy_module.attribute_table(obj)
    if isinstance(obj, str):
        return STR_METHODS
    if isinstance(obj, list):
        return LIST_METHODS
    if isinstance(obj, dict):
        return DICT_METHODS
    if isinstance(obj, set):
        return SET_METHODS
    if type(obj) is tuple:
        return TUPLE_METHODS
    if isinstance(obj, files.ReadFile):
        return files.FILE_ATTRS
    if isinstance(obj, files.PathValue):
        return files.PATH_ATTRS
    return None


def _is_data_object(obj) -> bool:
    """Whether ``obj`` is one of torch.utils.data's datasets, samplers or loaders (gradcli.api.data, which is
    loaded once a program has named it)."""
    return type(obj).__module__ in _PROGRAM_OBJECT_MODULES


#: The modules whose objects a program reads through their ``program_attributes``: torch.utils.data's, the
#: storages of ``untyped_storage()``, torch.autograd.graph's multi-hook handle, torch.Generator and torch.device.
_PROGRAM_OBJECT_MODULES = frozenset({"gradcli.api.data", "gradcli.ops.shape.strided", "gradcli.engine.hooks",
                                     "gradcli.language.torch_generator"})


def _library_attribute(obj, name: str):
    """``(True, value)`` for ``obj.name`` of a custom Function's ctx, a torch.nn module, an optimizer, scheduler
    or hook handle, a class's ``__name__``, ``torch.Tensor.<name>`` or a graph node's saved value; else
    ``(False, None)``: the attribute is the tables' (:func:`read_attribute`)."""
    if isinstance(obj, custom_function.FunctionCtx) and not name.startswith("__"):
        return True, _ctx_attribute(obj, name)
    if nn_bridge.is_module(obj):  # torch.nn modules: their registered names and public API
        return True, nn_bridge.module_attribute(obj, name)
    if nn_bridge.is_library_object(obj) or _is_data_object(obj):  # optimizers, ..., torch.utils.data's
        return True, nn_bridge.object_attribute(obj, name)
    if name == "__name__":
        class_name = _class_name(obj)
        if class_name is not None:
            return True, class_name
    if nn_bridge.is_torch_class(obj) and name in getattr(obj, "static_attributes", ()):  # nn.Transformer.<static>
        return True, getattr(obj, name)
    if obj is TENSOR_CLASS:  # torch.Tensor.sum: the method, unbound
        return True, tensor_class_attribute(name)
    if name.startswith(("_saved_", "_raw_saved_")) and isinstance(obj, graph.Node):  # PyTorch's names
        return True, saved_names.saved_value(obj, name)
    return False, None


def read_attribute(obj, name: str):
    """``obj.name`` as a program may read it: through the tables above, a namespace's members, or the fields of
    a named tuple (``max(x, 0).values``). ``x.grad`` is the interpreter's (see :data:`TENSOR_ATTRS`).

    Raises:
        AttributeError: for a name outside the tables (Python's or PyTorch's message) or starting with ``_``
            (but ``Tensor._version``, ``_base``, ``_is_view`` and a graph node's ``_saved_<name>``/``_raw_saved_<name>``).
        NotImplementedError: for a name PyTorch has and gradcli does not (see :func:`missing`).
    """
    found, value = _library_attribute(obj, name)
    if found:
        return value
    if name.startswith("_") and not (name in _TENSOR_UNDERSCORE and isinstance(obj, Tensor)):
        raise AttributeError(f"'{type_name(obj)}' object has no attribute '{name}' (gradcli does not "
                             "expose names starting with '_')")
    if isinstance(obj, Property):
        return _property_attribute(obj, name)
    if isinstance(obj, Generator) and name in ("send", "close"):
        return obj.send if name == "send" else obj.close
    if isinstance(obj, Tensor):
        return _tensor_attribute(obj, name)
    if isinstance(obj, Namespace):
        if name in obj.members:
            return obj.members[name]
        raise missing(obj.name, name, obj.members)
    if isinstance(obj, types.FunctionType) and name in TYPE_ATTRS.get(obj, ()):
        return TYPE_ATTRS[obj][name]
    table = _attribute_table(obj)
    if table is not None and name in table:
        return table[name](obj)
    fields = getattr(type(obj), "_fields", ()) if isinstance(obj, tuple) else ()
    if name in fields:  # max(dim).values, .indices
        return obj[fields.index(name)]
    raise AttributeError(f"'{type_name(obj)}' object has no attribute '{name}'")


def write_attribute(obj, name: str, value) -> None:
    """``obj.name = value``: only a tensor's ``requires_grad`` (PyTorch's setter), ``grad`` and ``grad_dtype``.

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
    elif isinstance(obj, Tensor) and name == "grad_dtype":
        obj.grad_dtype = value
    elif nn_bridge.is_module(obj):
        nn_bridge.set_module_attribute(obj, name, value)
    elif isinstance(obj, custom_function.FunctionCtx) and not name.startswith("__"):
        if name in ("saved_tensors", "needs_input_grad") or name in _CTX_METHODS:
            raise AttributeError(f"attribute '{name}' of 'FunctionCtx' objects is not writable")
        if name not in obj.attrs:
            admit(len(obj.attrs) + 1, "the attributes of ctx")
        obj.attrs[name] = value
    else:
        raise AttributeError(f"cannot set attribute '{name}' of '{type_name(obj)}' object")
