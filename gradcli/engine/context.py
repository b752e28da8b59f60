"""The run context: the state a run of gradcli's engine and language reads besides its arguments.

A :class:`RunContext` holds the default float dtype, the random number generator behind ``rand``/``randn``/
``randint``, the :class:`~gradcli.engine.limits.Limits`, anomaly mode, grad mode, inference mode, the autograd
node budget, the forward-AD level (``torch.autograd.forward_ad.dual_level``, :mod:`gradcli.api.forward_ad`), the
saved-tensors hooks, the depth of running ``torch.func`` transforms, the running vmaps, the number of backward
calls and what programs may read from files: what a run changes. What belongs to one tensor or graph node (hooks, Parameter marks, views, ``grad_fn.metadata``) lives
on that object (``Tensor._meta``, ``Node.extra``), so it goes wherever the object goes. One
context is active at a time; ``with RunContext(...):`` makes one active and, on leaving the block (also by an
exception), gives back the one that was active before, with whatever that one had changed. There is always a
root context, so library code that never makes one works as with PyTorch::

    import gradcli as G
    G.set_default_dtype(G.float64)          # acts on the active context (here the root)
    with G.RunContext(dtype="float32", seed=0) as ctx:
        x = G.randn(3)                      # float32, from the context's seeded generator
        with G.no_grad():                   # grad mode, restored inside the context at the end of the block
            ...
    G.get_default_dtype()                   # float64 again

``gradcli grad`` and ``gradcli run`` requests, and every entry of ``gradcli batch`` (in this process or in a
``--jobs`` worker), run in a context of their own, so nothing one of them sets (``torch.manual_seed``,
``torch.set_grad_enabled(False)``, ``set_default_dtype``) reaches the next.

How the hot paths read it: every op reads the grad mode and the ``elements`` limit, and every graph node the
node budget, so these are read with as few attribute loads as the module globals they replace. The active
context's values live in module-level holders that activation swaps: :data:`state` (grad mode, node budget,
anomaly mode, generator), ``gradcli.engine.limits.current`` (the limits) and the default dtype of
:mod:`gradcli.engine.dtypes` (both below this module in the layers, so they keep their own holder). A context that is
not active keeps its values in its own fields; one that is active reads and writes the holders. Like PyTorch's
default dtype (and unlike its thread-local grad mode), the active context is per process, not per thread.
"""

from __future__ import annotations

import contextlib
import itertools
import weakref

from . import dtypes
from .generator import Generator
from . import limits as _limits

UNLIMITED = _limits.UNLIMITED


class _Active:
    """The holder of the active context's values that the engine reads (one object for the whole process).

    Attributes:
        context: the active :class:`RunContext`.
        sequence: the creation counter of graph nodes (``Node.seq``): process-wide, not swapped, since nodes
            made in several contexts may meet in one graph.
        grad_enabled: grad mode: whether ops record the graph (torch.is_grad_enabled).
        graph_stop: graph nodes with a sequence number at or above this fail with the ``graph_nodes`` limit
            (:func:`gradcli.engine.node_budget.start_node_budget`); ``UNLIMITED`` outside program runs. A context that
            is not active keeps what is left of its budget, so nodes made elsewhere meanwhile do not count.
        graph_base: the sequence number at which the node budget was started (shifted likewise).
        anomaly: None when anomaly detection is off; else the positions recorded for it (graph node → where
            the program created it, see :mod:`gradcli.engine.anomaly`).
        rng: the :class:`~gradcli.engine.generator.Generator` of rand/randn/randint/..., or None until first used.
        fw_level: the forward-AD level entered with ``torch.autograd.forward_ad.dual_level`` (an int, unique
            in the process), or None outside one (:mod:`gradcli.api.forward_ad`). Ops read it on every call: only
            when it is set do they look for tangents.
        saved_hooks: the ``(pack_hook, unpack_hook)`` pairs of the ``torch.autograd.graph.saved_tensors_hooks``
            blocks entered, innermost last (:mod:`gradcli.ops.core.saved_hooks`); ``()`` outside one. Nodes read it when
            they are made: only when it is set do they pack what they save.
        inference: how many ``torch.inference_mode()`` blocks are open (:mod:`gradcli.engine.grad_mode`).
        new_tensor_meta: what every Tensor made now gets as its ``_meta``: None, or inside inference mode the
            shared inference mark (``gradcli.engine.tensor.INFERENCE_META``); read by ``Tensor.__init__``.
        backward_calls: how many times ``backward`` ran in this context (``gradcli grad`` reads it around a
            program to know whether the program called backward itself).
        func_depth: how many ``torch.func`` transforms (grad, vjp, jacrev, ...) are running (:mod:`gradcli.api.func`).
        vmap_levels: the ``(level, batch size)`` of each running vmap, outermost first; ``()`` outside one
            (:mod:`gradcli.api.vmap`).
        vmap_randomness: the ``randomness`` of each running vmap, outermost first.
        batching: while a vmap runs, ``f(op, args, params)`` that applies an op to arguments of which some may be
            batched (NotImplemented when none is); None otherwise. The apply functions read it on every call
            that is not on their inline float path (:mod:`gradcli.ops.core.apply`).
        batched_autograd: while a vmap runs, the ``(grad, backward)`` that :func:`gradcli.engine.autograd.grad`
            and ``backward`` hand BatchedTensor arguments to; None otherwise.
        file_access: what programs may read (``open``, ``Path.read_text``): None (nothing), or the object of
            :mod:`gradcli.language.files` that holds the allowed directories, the refusal's hint and the bytes
            read. A new context starts with the active context's, as with the limits (the command that allows
            reading sets it around the runs it starts, :func:`gradcli.language.files.reading_allowed`).
        print_options: the options of ``torch.set_printoptions`` (a :class:`gradcli.engine.printing.PrintOptions`),
            or None for PyTorch's defaults; read by :mod:`gradcli.engine.printing`.
        grad_layout_relaxed: inside ``torch.autograd.enforce_grad_layout_policy(False)``: a leaf's first
            gradient keeps the layout it arrives with instead of the leaf's (:mod:`gradcli.engine.graph`).
        graph_task: the backward pass that is running (:class:`gradcli.engine.autograd.GraphTask`: its roots
            and the tensors it captures), or None; process-wide like ``sequence``, restored when a nested
            backward ends. ``torch.autograd.graph.register_multi_grad_hook`` reads it.
    """

    __slots__ = ("context", "sequence", "grad_enabled", "graph_stop", "graph_base", "anomaly", "rng", "fw_level",
                 "saved_hooks", "inference", "new_tensor_meta", "backward_calls", "func_depth", "vmap_levels",
                 "vmap_randomness", "batching", "batched_autograd", "file_access", "print_options",
                 "grad_layout_relaxed", "graph_task")

    #: the values that belong to the active context: saved into it when another becomes active, loaded back
    SWAPPED = ("grad_enabled", "anomaly", "rng", "fw_level", "saved_hooks", "inference", "new_tensor_meta",
               "backward_calls", "func_depth", "vmap_levels", "vmap_randomness", "batching", "batched_autograd",
               "file_access", "print_options", "grad_layout_relaxed")


_SWAPPED_INDEX = {name: i for i, name in enumerate(_Active.SWAPPED)}

#: The active context's values (see :class:`_Active`). Hot paths read ``state.grad_enabled`` and
#: ``state.graph_stop``; :class:`RunContext` swaps the values on activation.
state = _Active()


class RunContext:
    """The state of a run: default dtype, random generator, limits, anomaly, grad and inference modes, node
    budget, forward-AD level, saved-tensors hooks, transform depth, backward-call count.

    Use it as a context manager: ``with RunContext(dtype="float64", seed=0):`` makes it the active context
    for the block and restores the one that was active before on the way out (exceptions included). Contexts
    nest, and one context may be entered again later (an interactive session keeps one): it then has the
    values it had when its last block ended. ``no_grad()``/``enable_grad()`` inside a context change that
    context's grad mode and restore it at the end of their block, as in PyTorch.

    Args:
        dtype: the default float dtype, ``"float32"``/``"float64"`` or a DType (default float32, PyTorch's).
        seed: seed of the generator behind rand/randn/randint/randperm/normal_/... (PyTorch's CPU generator,
            :mod:`gradcli.engine.generator`: the same seed gives PyTorch's numbers); None draws a fresh seed from the
            operating system at first use.
        limits: the :class:`~gradcli.engine.limits.Limits`; default: those of the active context, so that the
            limits a process sets (``--limit``, :func:`gradcli.engine.limits.configure`) apply to the runs it starts.
        anomaly: detect anomalies in backward (torch.autograd.detect_anomaly, see :mod:`gradcli.engine.anomaly`).
        grad_enabled: the initial grad mode (True, as in PyTorch).

    Raises:
        TypeError: ``dtype`` is not a floating dtype (PyTorch's message).
        ValueError: ``seed`` cannot be read as an integer or is out of [-2**63, 2**64) (PyTorch's messages).

    Attributes and properties (of the context, whether active or not): ``default_dtype``, ``limits``,
    ``grad_enabled``, ``anomaly`` (bool) and ``generator`` (:class:`~gradcli.engine.generator.Generator`, made on first use).
    """

    __slots__ = ("_graph_left", "_graph_done", "_dtype", "_limits", "_outer", "_values")

    def __init__(self, *, dtype=None, seed: int | None = None, limits: _limits.Limits | None = None,
                 anomaly: bool = False, grad_enabled: bool = True):
        d = dtypes.float32 if dtype is None else dtypes.as_dtype(dtype)
        if d not in (dtypes.float32, dtypes.float64):
            raise TypeError("only floating-point types are supported as the default type")
        self._dtype = d
        self._limits = current()._get_limits() if limits is None else limits
        self._graph_left = UNLIMITED  # the node budget, as nodes left and nodes made (see _Active.graph_stop)
        self._graph_done = 0
        # the values of _Active.SWAPPED while this context is not active, in that order
        self._values = [bool(grad_enabled), weakref.WeakKeyDictionary() if anomaly else None,
                        None if seed is None else _seeded(seed), None, (), 0, None, 0, 0, (), (), None, None,
                        current()._value("file_access"), None, False]
        self._outer = []

    # -------------------------------------------------------------------------------------- activation
    def __enter__(self) -> "RunContext":
        outer = state.context
        outer._store()
        self._load()
        self._outer.append(outer)
        return self

    def __exit__(self, *exc) -> bool:
        if state.context is not self:
            raise RuntimeError("RunContext blocks must nest: the context being left is not the active one")
        self._store()
        self._outer.pop()._load()
        return False

    def _load(self) -> None:
        # this context's values become the active ones
        s = state
        for name, value in zip(_Active.SWAPPED, self._values):
            setattr(s, name, value)
        now = peek_sequence()
        s.graph_stop = now + self._graph_left if self._graph_left < UNLIMITED else UNLIMITED
        s.graph_base = now - self._graph_done
        dtypes.set_default_dtype(self._dtype)
        _limits.current = self._limits
        s.context = self

    def _store(self) -> None:
        # the active values (changed by set_default_dtype, configure, no_grad, ...) are this context's
        s = state
        self._values = [getattr(s, name) for name in _Active.SWAPPED]
        now = peek_sequence()
        self._graph_left = s.graph_stop - now if s.graph_stop < UNLIMITED else UNLIMITED
        self._graph_done = now - s.graph_base
        self._dtype = dtypes.get_default_dtype()
        self._limits = _limits.current

    @property
    def active(self) -> bool:
        """Whether this is the active context."""
        return state.context is self

    # ------------------------------------------------------------------------------------------- values
    @property
    def default_dtype(self) -> dtypes.DType:
        """The default float dtype (float32 or float64)."""
        return dtypes.get_default_dtype() if state.context is self else self._dtype

    @default_dtype.setter
    def default_dtype(self, d) -> None:
        d = dtypes.as_dtype(d)
        if d not in (dtypes.float32, dtypes.float64):
            raise TypeError("only floating-point types are supported as the default type")
        if state.context is self:
            dtypes.set_default_dtype(d)
        else:
            self._dtype = d

    def _get_limits(self) -> _limits.Limits:
        return _limits.current if state.context is self else self._limits

    @property
    def limits(self) -> _limits.Limits:
        """The :class:`~gradcli.engine.limits.Limits` of runs in this context."""
        return self._get_limits()

    @limits.setter
    def limits(self, value: _limits.Limits) -> None:
        if state.context is self:
            _limits.current = value
        else:
            self._limits = value

    def _value(self, name: str):
        # one of _Active.SWAPPED: the active value when this context is active, else its own
        return getattr(state, name) if state.context is self else self._values[_SWAPPED_INDEX[name]]

    def _set_value(self, name: str, value) -> None:
        if state.context is self:
            setattr(state, name, value)
        else:
            self._values[_SWAPPED_INDEX[name]] = value

    @property
    def grad_enabled(self) -> bool:
        """Grad mode: whether ops record the autograd graph."""
        return self._value("grad_enabled")

    @grad_enabled.setter
    def grad_enabled(self, mode: bool) -> None:
        self._set_value("grad_enabled", bool(mode))

    @property
    def anomaly(self) -> bool:
        """Whether anomaly detection is on (see :mod:`gradcli.engine.anomaly`)."""
        return self._value("anomaly") is not None

    @property
    def backward_calls(self) -> int:
        """How many times ``backward`` (torch.autograd.backward, Tensor.backward) ran in this context."""
        return self._value("backward_calls")

    @property
    def generator(self) -> Generator:
        """PyTorch's CPU generator behind rand/randn/randint/randperm/normal_/... in this context (made on first
        use, seeded from the operating system unless a seed was given)."""
        if state.context is self:
            return generator()
        if self._value("rng") is None:
            self._set_value("rng", Generator())
        return self._value("rng")

    def manual_seed(self, seed: int) -> None:
        """Seed this context's generator (torch.manual_seed).

        Raises:
            ValueError: see :meth:`gradcli.engine.generator.Generator.manual_seed`.
        """
        self._set_value("rng", _seeded(seed))

    def __repr__(self) -> str:
        return (f"RunContext(dtype={self.default_dtype.name}, grad_enabled={self.grad_enabled}, "
                f"anomaly={self.anomaly}{', active' if self.active else ''})")


def _seeded(seed) -> Generator:
    return Generator(seed)


def peek_sequence() -> int:
    """The sequence number the next graph node will get, without taking it (nodes made before it have smaller
    ones)."""
    n = next(state.sequence)
    state.sequence = itertools.count(n)
    return n


def current() -> RunContext:
    """The active :class:`RunContext` (the root context when no other is active)."""
    return state.context


def generator() -> Generator:
    """The active context's random generator (PyTorch's CPU generator, :class:`gradcli.engine.generator.Generator`),
    made on first use with a seed from the operating system, as PyTorch's default generator is."""
    rng = state.rng
    if rng is None:
        rng = state.rng = Generator()
    return rng


def generator_of(g=None) -> Generator:
    """The engine generator behind an op's ``generator=`` argument: the active context's (``torch.default_generator``)
    for None, else the one a ``torch.Generator`` object holds (its ``engine``).

    Raises:
        TypeError: for anything that is not a ``torch.Generator``.
    """
    if g is None:
        return generator()
    inner = getattr(g, "engine", None) if not isinstance(g, Generator) else g
    if not isinstance(inner, Generator):
        raise TypeError(f"expected a torch.Generator as generator=, not {type(g).__name__}")
    return inner


@contextlib.contextmanager
def drawing_from(g=None):
    """Within it, the active context's random ops draw from ``g``'s generator (an op's ``generator=`` argument);
    None leaves the context's own. The context's generator is restored on leaving.

    Raises:
        TypeError: see :func:`generator_of`.
    """
    if g is None:
        yield
        return
    inner, saved = generator_of(g), state.rng
    if getattr(saved, "refuses_draws", False):  # vmap(randomness="error") and jacfwd refuse any generator's draw
        yield
        return
    state.rng = inner
    try:
        yield
    finally:
        state.rng = saved


def manual_seed(seed: int) -> None:
    """Seed the active context's generator (torch.manual_seed: PyTorch's CPU generator and stream).

    Raises:
        ValueError: see :meth:`gradcli.engine.generator.Generator.manual_seed`.
    """
    rng = state.rng
    if getattr(rng, "refuses_draws", False):
        # inside vmap(randomness="error") or jacfwd the generator is replaced by a refusal: the seed goes to the
        # generator it hides (restored when the transform ends), and draws stay refused, as PyTorch's; nested
        # refusals hide one another, the innermost hidden one is the generator
        while getattr(rng.hidden, "refuses_draws", False):
            rng = rng.hidden
        rng.__dict__["hidden"] = _seeded(seed)
        return
    state.rng = _seeded(seed)


def _make_root() -> RunContext:
    root = RunContext.__new__(RunContext)
    root._outer = []
    state.context = root
    state.sequence = itertools.count()
    state.graph_stop = UNLIMITED
    state.graph_base = 0
    for name, value in zip(_Active.SWAPPED, (True, None, None, None, (), 0, None, 0, 0, (), (), None, None, None,
                                              None, False)):
        setattr(state, name, value)
    state.graph_task = None
    root._store()
    return root


#: The context active when no other is: library code that never makes a context uses it.
ROOT = _make_root()
