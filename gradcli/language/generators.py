"""Running a generator function's body: the :class:`Generators` mixin of :class:`~.interpreter.Interpreter`.

Calling a program function whose body yields makes a :class:`~.values.Generator`, which runs the body with
:meth:`Generators.gen_block`, a Python generator: a statement that contains no ``yield`` runs through the one
statement table (:data:`.statements.STATEMENTS`, as :meth:`~.statements.Statements.exec_stmt` runs it); the
statements that contain a ``yield`` (``if``, ``while``, ``for``, ``try``) have a generator form here, built
from the same pieces as their plain form (:meth:`~.statements.Statements.if_branch`,
:meth:`~.expressions.Expressions.iterate`, :meth:`~.statements.Statements.except_clause`), which suspends at
each ``yield``.
"""

from __future__ import annotations

from ..engine.errors import EvalError
from . import nodes as n
from .statements import PASS_THROUGH, STATEMENTS, _Break, _Continue, handles, program_error

#: The statements that contain a ``yield`` -> their generator form, a generator function of ``(interpreter,
#: statement, env)`` (``yield`` and ``if`` run in :meth:`Generators.gen_block` itself).
GENERATOR_STATEMENTS: dict = {}


class Generators:
    """How the interpreter runs a generator function's statements (a mixin of the Interpreter)."""

    def yields(self, s) -> bool:
        """Whether statement ``s`` (or a block inside it) yields (cached per statement)."""
        cached = self._yields.get(id(s))
        if cached is not None:
            return cached
        t = type(s)
        if t is n.Yield:
            found = True
        elif t is n.If:
            found = any(self.yields(x) for _, b in s.branches for x in b) or any(
                self.yields(x) for x in s.orelse or ())
        elif t in (n.While, n.For, n.With):
            found = any(self.yields(x) for x in s.body)
        elif t is n.Try:
            found = any(self.yields(x) for x in [*s.body, *(x for h in s.handlers for x in h[-1]),
                                                   *(s.orelse or ()), *(s.final or ())])
        else:
            found = False
        self._yields[id(s)] = found
        return found

    def gen_block(self, body, env):
        """Run a generator function's block as a Python generator: statements that yield suspend it (their
        value goes to ``next``/``send``), the others run as :meth:`exec_stmt` runs them."""
        for s in body:
            self.step(s)
            t = type(s)
            if not self.yields(s):
                try:
                    STATEMENTS[t](self, s, env)  # exec_stmt, inlined as in exec_block
                except PASS_THROUGH:
                    raise
                except Exception as exc:  # a builtin's error, as exec_block reports it
                    raise program_error(self, exc, s) from None
            elif t is n.Yield:  # the most frequent: here, not in a generator of its own
                if s.delegate:
                    sent = yield from self.iterate(s.value, env)
                else:
                    sent = yield None if s.value is None else self.eval_expr(s.value, env)
                if s.target is not None:
                    self.assign(s.target, sent, env)
            elif t is n.If:  # as exec_if, without a generator of its own per execution
                branch = self.if_branch(s, env)
                if branch:
                    yield from self.gen_block(branch, env)
            else:
                yield from GENERATOR_STATEMENTS[t](self, s, env)

    @handles(GENERATOR_STATEMENTS, n.While)
    def gen_while(self, s: n.While, env):
        while self.truth(self.eval_expr(s.test, env), s.test):
            try:  # loop_body's break and continue, without a generator more per iteration
                yield from self.gen_block(s.body, env)
            except _Break:
                break
            except _Continue:
                pass
            self.step(s)

    @handles(GENERATOR_STATEMENTS, n.For)
    def gen_for(self, s: n.For, env):
        for item in self.iterate(s.iter, env):
            self.assign(s.target, item, env)
            try:
                yield from self.gen_block(s.body, env)
            except _Break:
                break
            except _Continue:
                pass

    @handles(GENERATOR_STATEMENTS, n.Try)
    def gen_try(self, s: n.Try, env):
        """:meth:`exec_try` for a ``try`` that yields."""
        try:
            try:
                yield from self.gen_block(s.body, env)
            except EvalError as err:
                handler = self.except_clause(err, s, env)
                if handler is None:
                    raise
                yield from self.gen_block(handler, env)
            else:
                if s.orelse:
                    yield from self.gen_block(s.orelse, env)
        finally:
            if s.final:
                yield from self.gen_block(s.final, env)

    @handles(GENERATOR_STATEMENTS, n.With)
    def gen_with(self, s: n.With, env):  # raises before gen_block's ``yield from`` needs a generator
        raise self.error(SyntaxError("gradcli does not support 'yield' inside a 'with' block"), s)
