"""The program: what the builder makes of a Lark tree and the interpreter runs.

Every node carries the 1-based ``line`` and ``col`` of its first character, for error messages.
Expression nodes end in ``Expr``-like names of what they compute; statement nodes are the Python statements
the language has. The tree node names of the grammar map onto these one to one (see build.py).
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(slots=True)
class Node:
    line: int
    col: int


# ----------------------------------------------------------------------------------------------- expressions
@dataclass(slots=True)
class Const(Node):
    """A number, string, True/False/None or Ellipsis literal."""
    value: object


@dataclass(slots=True)
class FString(Node):
    """An f-string: literal text and ``{expr}`` parts in order."""
    parts: list  # str or Node


@dataclass(slots=True)
class Name(Node):
    id: str


@dataclass(slots=True)
class Seq(Node):
    """A list, tuple or set display; ``kind`` is "list", "tuple" or "set"."""
    kind: str
    items: list


@dataclass(slots=True)
class Dict(Node):
    """A dict display: (key, value) pairs in order; key None for a ``**mapping`` item."""
    items: list


@dataclass(slots=True)
class Comprehension(Node):
    """A list/set/dict comprehension or generator expression (``kind``: "list", "set", "dict", "generator"):
    the element (``key`` too for a dict) and its ``for`` clauses, each (target, iterable, [conditions])."""
    kind: str
    element: Node
    key: Node | None
    clauses: list


@dataclass(slots=True)
class BinOp(Node):
    """An infix operator; ``op`` is the grammar's node name ("add", "matmul", ...)."""
    op: str
    left: Node
    right: Node


@dataclass(slots=True)
class UnaryOp(Node):
    op: str  # "neg", "pos", "invert", "not_"
    operand: Node


@dataclass(slots=True)
class Compare(Node):
    """A chain ``a < b <= c``: operators and operands, evaluated left to right like Python."""
    ops: list
    operands: list


@dataclass(slots=True)
class BoolOp(Node):
    op: str  # "and_" or "or_"
    left: Node
    right: Node


@dataclass(slots=True)
class Ternary(Node):
    body: Node
    test: Node
    orelse: Node


@dataclass(slots=True)
class Attribute(Node):
    value: Node
    attr: str


@dataclass(slots=True)
class Call(Node):
    func: Node
    args: list
    kwargs: list  # (name, Node)
    star: Node | None = None


@dataclass(slots=True)
class Subscript(Node):
    value: Node
    index: list  # Node or SliceExpr per comma-separated part
    is_tuple: bool


@dataclass(slots=True)
class SliceExpr(Node):
    start: Node | None
    stop: Node | None
    step: Node | None


@dataclass(slots=True)
class Lambda(Node):
    """``lambda params: expr``; ``body`` is ``[Return(expr)]``, as a function's."""
    params: list
    body: list


# ------------------------------------------------------------------------------------------------ statements
@dataclass(slots=True)
class Try(Node):
    """``try``: the body, its handlers ((exception expression or None, alias or None, body)), ``else`` and
    ``finally`` blocks (None when absent)."""
    body: list
    handlers: list
    orelse: list | None
    final: list | None


@dataclass(slots=True)
class Raise(Node):
    exc: Node | None


@dataclass(slots=True)
class Assert(Node):
    test: Node
    msg: Node | None


@dataclass(slots=True)
class ExprStmt(Node):
    value: Node


@dataclass(slots=True)
class Assign(Node):
    target: Node  # Name, Attribute, Subscript or Seq of those
    value: Node


@dataclass(slots=True)
class AugAssign(Node):
    target: Node
    op: str  # the binary op name, "add" for "+="
    value: Node


@dataclass(slots=True)
class Return(Node):
    value: Node | None


@dataclass(slots=True)
class Pass(Node):
    pass


@dataclass(slots=True)
class Break(Node):
    pass


@dataclass(slots=True)
class Continue(Node):
    pass


@dataclass(slots=True)
class Import(Node):
    module: str
    alias: str | None
    name: str | None = None  # for "from module import name"


@dataclass(slots=True)
class If(Node):
    branches: list  # (test, body) pairs, "if" then each "elif"
    orelse: list | None


@dataclass(slots=True)
class While(Node):
    test: Node
    body: list


@dataclass(slots=True)
class For(Node):
    target: Node
    iter: Node
    body: list


@dataclass(slots=True)
class FunctionDef(Node):
    name: str
    params: list  # (name, default Node or None)
    body: list


@dataclass(slots=True)
class With(Node):
    context: Node
    alias: str | None
    body: list


@dataclass(slots=True)
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
