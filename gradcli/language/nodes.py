"""The program: what the builder makes of a Lark tree and the interpreter runs.

Every node carries the 1-based ``line`` and ``col`` of its first character, for error messages.
Expression nodes end in ``Expr``-like names of what they compute; statement nodes are the Python statements
the language has. The tree node names of the grammar map onto these one to one (see build.py).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

#: Node classes are slotted dataclasses without a generated ``__repr__`` and ``__eq__``: nodes compare by
#: identity (two ``x`` in a program are two nodes), and the 36 classes cost half as much to create at every
#: start-up (issue 15 item 5).
_node = dataclass(slots=True, repr=False, eq=False)


@_node
class Node:
    line: int
    col: int


# ----------------------------------------------------------------------------------------------- expressions
@_node
class Const(Node):
    """A number, string, True/False/None or Ellipsis literal."""
    value: object


@_node
class FString(Node):
    """An f-string: literal text and ``{expr}`` parts in order."""
    parts: list  # str or Node


@_node
class Name(Node):
    id: str


@_node
class Seq(Node):
    """A list, tuple or set display; ``kind`` is "list", "tuple" or "set"."""
    kind: str
    items: list


@_node
class Dict(Node):
    """A dict display: (key, value) pairs in order; key None for a ``**mapping`` item."""
    items: list


@_node
class Comprehension(Node):
    """A list/set/dict comprehension or generator expression (``kind``: "list", "set", "dict", "generator"):
    the element (``key`` too for a dict) and its ``for`` clauses, each (target, iterable, [conditions])."""
    kind: str
    element: Node
    key: Node | None
    clauses: list


@_node
class BinOp(Node):
    """An infix operator; ``op`` is the grammar's node name ("add", "matmul", ...)."""
    op: str
    left: Node
    right: Node


@_node
class UnaryOp(Node):
    op: str  # "neg", "pos", "invert", "not_"
    operand: Node


@_node
class Compare(Node):
    """A chain ``a < b <= c``: operators and operands, evaluated left to right like Python."""
    ops: list
    operands: list


@_node
class BoolOp(Node):
    op: str  # "and_" or "or_"
    left: Node
    right: Node


@_node
class Ternary(Node):
    body: Node
    test: Node
    orelse: Node


@_node
class Attribute(Node):
    value: Node
    attr: str


@_node
class Call(Node):
    func: Node
    args: list
    kwargs: list  # (name, Node)
    star: Node | None = None  # *iterable
    kwstars: list | None = None  # **mappings


@_node
class Subscript(Node):
    value: Node
    index: list  # Node or SliceExpr per comma-separated part
    is_tuple: bool


@_node
class SliceExpr(Node):
    start: Node | None
    stop: Node | None
    step: Node | None


@_node
class Lambda(Node):
    """``lambda params: expr``; ``body`` is ``[Return(expr)]``, as a function's. The parameters are as
    :class:`FunctionDef`'s."""
    params: list
    body: list
    vararg: str | None = None
    kwonly: list | None = None
    kwarg: str | None = None


# ------------------------------------------------------------------------------------------------ statements
@_node
class Try(Node):
    """``try``: the body, its handlers ((exception expression or None, alias or None, body)), ``else`` and
    ``finally`` blocks (None when absent)."""
    body: list
    handlers: list
    orelse: list | None
    final: list | None


@_node
class Raise(Node):
    exc: Node | None


@_node
class Assert(Node):
    test: Node
    msg: Node | None


@_node
class ExprStmt(Node):
    value: Node


@_node
class Assign(Node):
    target: Node  # Name, Attribute, Subscript or Seq of those
    value: Node
    more: list | None = None  # ``a = b = value``: the targets after the first, assigned left to right


@_node
class AugAssign(Node):
    target: Node
    op: str  # the binary op name, "add" for "+="
    value: Node


@_node
class Return(Node):
    value: Node | None


@_node
class Pass(Node):
    pass


@_node
class Break(Node):
    pass


@_node
class Continue(Node):
    pass


@_node
class Import(Node):
    module: str
    alias: str | None
    name: str | None = None  # for "from module import name"


@_node
class If(Node):
    branches: list  # (test, body) pairs, "if" then each "elif"
    orelse: list | None


@_node
class While(Node):
    test: Node
    body: list


@_node
class For(Node):
    target: Node
    iter: Node
    body: list


@_node
class FunctionDef(Node):
    """``def name(params, *vararg, kwonly, **kwarg): body``, under its ``decorators`` (expressions, applied
    last to first). ``declared`` maps the names of its ``global``/``nonlocal`` statements to "global" or
    "nonlocal" (None when there are none)."""
    name: str
    params: list  # (name, default Node or None): the positional-or-keyword parameters
    body: list
    vararg: str | None = None  # *args
    kwonly: list | None = None  # (name, default Node or None) after * or *args
    kwarg: str | None = None  # **kwargs
    decorators: list | None = None
    declared: dict | None = None
    generator: bool = False  # its body yields: calling it makes a generator


@_node
class ClassDef(Node):
    """``class name(bases, **keywords): body`` under its ``decorators``; ``bases`` are expressions."""
    name: str
    bases: list
    body: list
    decorators: list | None = None


@_node
class Global(Node):
    """``global a, b`` or ``nonlocal a, b`` (``kind``): the function assigns these names in the program's
    variables or in the enclosing function's."""
    kind: str
    names: list


@_node
class Yield(Node):
    """``yield value`` or ``yield from iterable`` (``delegate``), as a statement or as ``target = yield
    value`` (what ``send`` gave, None for ``next``)."""
    value: Node | None
    delegate: bool
    target: Node | None = None


@_node
class Delete(Node):
    """``del a, b[0], c.attr``."""
    targets: list


@_node
class With(Node):
    context: Node
    alias: str | None
    body: list


@_node
class Program:
    """A parsed program: its statements and the text they came from."""
    body: list
    source: str
    filename: str = "<input>"


def _children(value, out: list) -> None:
    """Append the program nodes directly inside ``value`` (a node's field: a node, or lists and tuples of
    nodes, strings and None, as in Call.kwargs or If.branches)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, Node):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            stack.extend(v)


def max_depth(body: list, limit: int):
    """The first node nested deeper than ``limit`` levels in ``body`` (a statement list or one expression),
    or None. Every statement and expression node is one level (``f(g(x))`` is three, ``a + b + c`` two).
    Iterative, so any depth can be measured."""
    stack = [(n, 1) for n in (body if isinstance(body, list) else [body]) if isinstance(n, Node)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return node
        kids: list = []
        for f in fields(node):
            _children(getattr(node, f.name), kids)  # noqa: B009 - dataclass fields of our own nodes
        stack.extend((k, depth + 1) for k in kids)
    return None
