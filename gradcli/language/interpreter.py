"""The interpreter: runs a program (:mod:`.nodes`) on the engine.

Only this language runs: values are Tensors, Python numbers, strings, None, lists/tuples/sets, user
functions and the namespaces ``torch``/``F`` (:mod:`.values`). No Python ``eval``/``exec``: names and
attributes are those of :mod:`.builtins` (the ops, a few of Python's builtins, the tensor API, a grad_fn's
``name``/``next_functions``), never dunder names. The operators are those of the one operator table,
:mod:`gradcli.ops.operators`. Engine exceptions become :class:`~gradcli.engine.errors.EvalError` with the position of
the expression that failed, keeping PyTorch's type name and message. Runaway programs end with a clear error
before they exhaust the machine (:mod:`gradcli.engine.limits`): statement executions and function-call depth (here),
the autograd nodes a run records (the engine), and the size of Python's integers, lists, tuples and strings
(:mod:`.safety`).

:class:`Interpreter` is the entry point: running a program, its limits, warnings and error positions. What it
does with each kind of node is in the modules beside it, one mixin each:

* :mod:`.statements`: the table of statement handlers (node type -> handler), assignment and names;
* :mod:`.expressions`: evaluating expressions, operators, attribute reads;
* :mod:`.calls`: calls, argument binding, the program's functions and classes and their objects' attributes;
* :mod:`.generators`: running a generator function's body up to each ``yield``.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from contextlib import contextmanager

from ..engine import anomaly, context, limits, node_budget
from ..engine.errors import EvalError, GradcliError
from ..engine.tensor import Tensor
from . import builtins
from . import nodes as n
from .calls import Calls
from .expressions import Expressions
from .generators import Generators
from .namespaces import lazy_numpy_modules
from .statements import Statements, _Break, _Continue, program_error
from .values import Return as _Return

DEFAULT_MAX_STEPS = limits.SPECS["steps"].default
DEFAULT_MAX_DEPTH = limits.SPECS["call_depth"].default
# Python's recursion limit while a program runs: each level of a program (an expression, a call of a program
# function) takes a few Python frames; deeper nesting ends in a RecursionError, reported as a gradcli error,
# well before the C stack could overflow.
RECURSION_LIMIT = 20_000
#: Statements between two checks of the steps limit's clock (a few milliseconds of a loop).
STEP_CHUNK = 16_384
#: The clock of the steps limit: a run of ``steps`` statements may take this many seconds per statement (2.5 s
#: at the default 5,000,000) when it is on course to pass the limit (see Interpreter._check_steps).
SECONDS_PER_STEP = 0.5e-6


def _unraisable(info, _previous=[None]) -> None:  # noqa: B006 - the hook this one wraps
    """``sys.unraisablehook`` for the generators that run a program's generator functions: an error while one
    is finalised (``yield`` inside ``finally`` of a generator dropped half-way: Python's "generator ignored
    GeneratorExit") is one line on standard error, never a traceback of gradcli's source. Anything else goes
    to the hook that was installed before."""
    code = getattr(info.object, "gi_code", None)
    if code is not None and code.co_filename.startswith(_HERE):
        try:
            sys.stderr.write(f"Exception ignored in a generator of the program: "
                             f"{type(info.exc_value).__name__}: {info.exc_value}\n")
        except (OSError, ValueError):
            pass
        return
    (_previous[0] or sys.__unraisablehook__)(info)


_HERE = os.path.dirname(os.path.abspath(__file__))


def _install_unraisable() -> None:
    if sys.unraisablehook is not _unraisable:
        _unraisable.__defaults__[0][0] = sys.unraisablehook
        sys.unraisablehook = _unraisable


class Interpreter(Statements, Generators, Calls, Expressions):
    """Runs programs against one global environment.

    Args:
        write: where ``print`` output goes (a function taking a string); default: standard output.
        warn: where warnings go (a function taking a string); default: standard error.
        max_steps: the most statement executions before the run is stopped (``--max-steps``).
        max_depth: the deepest nesting of calls to user functions.

    Attributes:
        globals: the program's variables (name → value).
    """

    def __init__(self, *, write=None, warn=None, max_steps: int | None = None, max_depth: int | None = None):
        self.write = write or (lambda s: sys.stdout.write(s))
        self.warn = warn or (lambda s: sys.stderr.write(s))
        self.max_steps = limits.current.steps if max_steps is None else max_steps
        self.max_depth = limits.current.call_depth if max_depth is None else max_depth
        self.steps = 0
        self._check_at = min(STEP_CHUNK, self.max_steps + 1)  # the step count at which step() checks next
        self._clock = None  # (time.monotonic(), steps) when the clock of the steps limit started
        self.depth = 0
        self.program = None
        self.warned: set = set()
        self.call_node = None  # the call being evaluated (where the warnings it raises point)
        self.frames: list = []  # (function, its variables) of the program functions being called (for super())
        self._yields: dict = {}  # id(statement) -> whether it yields (see yields())
        self.modules = dict(builtins.modules())
        # `import random`: a generator of this run's own, seeded from the run's seed (--seed)
        seed = context.generator().initial_seed()
        self.modules["random"] = builtins.lazy_random_module(seed)
        # `import numpy as np`: NumPy's subset, its np.random seeded from the run's seed too
        self.modules.update(lazy_numpy_modules(seed))
        self.builtins = builtins.names(self.modules, write=lambda text: self.write(text))
        self.globals: dict = {"__name__": "__main__"}

    # ---------------------------------------------------------------------------------------- running
    def run(self, program: n.Program):
        """Run every statement of ``program``; returns the value of the last top-level statement if it is an
        expression or an assignment (the program's output), else None.

        Raises:
            EvalError: for any error while running, with the position of the failing expression.
            LimitError: when the program reaches a limit (steps, call depth, graph nodes, elements, ...).
        """
        last = None
        with self.running(program):
            for stmt in program.body:
                last = self.exec_top(stmt)
        return last

    @contextmanager
    def running(self, program: n.Program):
        """Make ``program`` the current one (for error positions and warnings) while its top-level statements
        are run one by one with :meth:`exec_top`, and give Python's stack room for ``max_depth`` calls."""
        self.program = program
        _install_unraisable()
        # Each call of a program function takes several Python frames; max_depth bounds the program's own
        # nesting, and this limit leaves room for it (a RecursionError that still happens is reported).
        old_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old_limit, min(12 * self.max_depth + 2000, RECURSION_LIMIT)))
        node_budget.start_node_budget(limits.current.graph_nodes)
        if anomaly.enabled():
            self.eval_expr = self._eval_recording_positions
        # Warnings that ops raise (PyTorch's, e.g. softmax's implicit dim) point at the program's call that
        # raised them, never at gradcli's source: routed to :meth:`warning` with the current call.
        catcher = warnings.catch_warnings()
        catcher.__enter__()
        warnings.simplefilter("always")  # :meth:`warning` shows each once per program position
        warnings.showwarning = self._show_warning
        try:
            yield self
        finally:
            catcher.__exit__(None, None, None)
            node_budget.stop_node_budget()
            sys.setrecursionlimit(old_limit)
            self.__dict__.pop("eval_expr", None)

    def _show_warning(self, message, category, filename, lineno, file=None, line=None):
        self.warning(category.__name__, str(message), self.call_node)

    def _eval_recording_positions(self, e, env):
        # --anomaly: the graph nodes this expression creates remember where it is in the source, so that a
        # backward that produces NaN/inf can name it (innermost expression first: nested calls tag their own).
        mark = anomaly.mark()
        value = Interpreter.eval_expr(self, e, env)
        if isinstance(value, Tensor) and value.grad_fn is not None:
            anomaly.tag(value.grad_fn, mark, self._where(e))
        return value

    def exec_top(self, stmt):
        """Run one top-level statement (inside :meth:`running`); returns its value (the value of an expression
        statement, the assigned value of ``name = ...``) or None.

        Raises:
            EvalError: for any error while running it, with the position of the failing expression.
        """
        try:
            if isinstance(stmt, n.ExprStmt):
                self.step(stmt)
                return self.eval_expr(stmt.value, self.globals)
            self.exec_stmt(stmt, self.globals)
            if isinstance(stmt, n.Assign) and isinstance(stmt.target, n.Name):
                return self.globals.get(stmt.target.id)
            return None
        except _Return:
            raise self.error(SyntaxError("'return' outside function"), stmt) from None
        except (_Break, _Continue):
            raise self.error(SyntaxError("'break' outside loop"), stmt) from None
        except RecursionError:
            raise self.error(RecursionError("maximum recursion depth exceeded (the program nests calls or "
                                            "expressions too deeply)"), stmt) from None
        except MemoryError as exc:
            raise limits.memory_error(exc).with_position(**self._where(stmt)) from None
        except GradcliError as exc:  # e.g. the time limit, wherever it struck
            raise self.error(exc, stmt) from None
        except Exception as exc:  # raised inside a builtin: the program's error, of Python's type
            raise program_error(self, exc, stmt) from None

    def step(self, node):
        """Count one statement execution (the ``steps`` limit); every :data:`STEP_CHUNK` of them, the clock too
        (:meth:`_check_steps`)."""
        self.steps += 1
        if self.steps >= self._check_at:
            self._check_steps(node)

    def reset_steps(self) -> None:
        """Start the ``steps`` limit again (its count and its clock): the session, for each entry."""
        self.steps = 0
        self._check_at = min(STEP_CHUNK, self.max_steps + 1)
        self._clock = None

    def _check_steps(self, node):
        """The ``steps`` limit: the count, and (with the default-like limits, where both ``steps`` and ``time``
        are set) the clock: a program whose statements have run for longer than :data:`SECONDS_PER_STEP` times
        the limit, at a rate that would pass the limit before the ``time`` limit, is stopped as it would be at
        the limit (a runaway loop ends within seconds however slow the machine, while a loop of heavy tensor
        work, a few statements a second, runs on)."""
        limit = self.max_steps
        if self.steps > limit:
            self._stop(f"the program ran more than {limit:,} statements", node)
        now = time.monotonic()
        if self._clock is None or self.steps < self._clock[1]:  # the first check, or a new entry (session)
            self._clock = (now, self.steps)
        start, first = self._clock
        elapsed, done = now - start, self.steps - first
        self._check_at = min(self.steps + STEP_CHUNK, limit + 1)
        seconds = limits.current.time
        if limit >= limits.UNLIMITED or seconds >= limits.UNLIMITED or elapsed <= limit * SECONDS_PER_STEP:
            return
        if self.steps + done / elapsed * max(seconds - elapsed, 0) > limit:
            self._stop(f"the program ran {self.steps:,} statements in {elapsed:.1f} seconds, on course to pass "
                       f"the limit before the time limit ({seconds:,} s)", node)

    def _stop(self, what: str, node):
        err = limits.exceeded("steps", what, self.max_steps)
        err.type = "StepLimitError"  # a LimitError; the name says which limit stopped the program
        err.hint += " (or --max-steps N)"
        raise err.with_position(**self._where(node))

    def _where(self, node):
        p = self.program
        if node is None:  # a special method Python called with no call of the program around it: the
            return dict(line=None, column=None, source=None, filename=None)  # statement's position, later
        return dict(line=node.line, column=node.col, source=p.source if p else None,
                    filename=p.filename if p else None)

    def warning(self, category: str, message: str, node) -> None:
        """Write a warning raised at ``node`` as Python's warnings module does by default: once per source
        line and message, as ``file:line: Category: message`` and the source line indented by two spaces."""
        key = (None if node is None else node.line, category, message)
        if key in self.warned:
            return
        self.warned.add(key)
        p = self.program
        if p is None or node is None:
            self.warn(f"{category}: {message}\n")
            return
        lines = p.source.splitlines()
        source = lines[node.line - 1].strip() if 1 <= node.line <= len(lines) else ""
        self.warn(f"{p.filename}:{node.line}: {category}: {message}\n" + (f"  {source}\n" if source else ""))

    def error(self, exc: BaseException, node) -> GradcliError:
        """Wrap a Python exception raised while evaluating ``node`` as an EvalError at its position (with a hint
        for the usual mistakes: ``^`` meant as a power)."""
        if isinstance(exc, GradcliError):
            return exc.with_position(**self._where(node))
        err = EvalError.from_exception(exc).with_position(**self._where(node))
        if type(node) is n.BinOp and node.op == "bitxor" and "bitwise_xor" in err.message:
            err.hint = "'^' is bitwise xor in Python and PyTorch; a power is '**' (x ** 2)"
        elif getattr(exc, "gradcli_hint", None):
            err.hint = exc.gradcli_hint
        return err
