"""Loading the Lark grammar (``grammars/gradcli.lark``) and parsing text: into a Lark tree (:func:`parse`), or
straight into a program, the builder's methods called as the parser reduces each rule (:func:`parse_into`).

The grammar ships inside the wheel as ``gradcli/grammars/gradcli.lark`` (hatchling force-include); in a source
checkout or an editable install it is read from the repository's top-level ``grammars/``.

:func:`parse_into` (what builds programs and input specs) runs on the grammar's LALR tables and per-state lexers
generated into ``grammars/gradcli.tables.json`` (plain JSON, by ``scripts/gen_parse_tables.py``; a file made from
another grammar, another layout or other options is ignored), so a text that parses needs no ``lark.Lark`` object
(loading Lark's cached parser cost about 30 ms of CPU at every start), nor even imports Lark (about 20 ms): the
driver's tokens are its own :class:`Token`. The tables are the grammar's, whichever Lark is installed: they are
plain data that the driver runs on its own (Lark 1.1.9, 1.2.2 and 1.3.1 generate the same file), so their
fingerprint holds no Lark version, and a Lark other than the one that generated them still reports the errors,
from the tokens the driver hands it. Lark's parser is built, once per process and only then, for :func:`parse`
(Lark's tree), for syntax errors (their messages are Lark's), and when the tables file is stale; Lark caches it
on disk, so start-up does not rebuild the tables (about 350 ms).

Lark's cache file is a pickle, and reading it runs what it holds. Lark's default place is the shared temporary
directory, where any local user could leave a file under the name gradcli would read; so the cache lives in a
directory of the user's own (:func:`cache_path`: ``$XDG_CACHE_HOME/gradcli`` or ``~/.cache/gradcli``, mode 0700,
owned by the user), and without one there is no cache. Nothing a program or its input holds ever reaches it.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from ..engine.errors import GradcliError, GradcliSyntaxError, InputLimitError
from ..engine.lazy import lazy

limits = lazy("gradcli.engine.limits")  # (it imports numpy): loaded by the first text read, not with the grammar

GRAMMAR_NAME = "gradcli.lark"
#: The ``code`` of the syntax error of a text that parses up to its end but needs more (an open bracket, a block
#: header without its body): what a prompt reads as "not complete yet", without reading the message.
END_OF_INPUT = "end_of_input"


def grammar_path() -> Path:
    """The grammar file: the packaged copy if present, else the repository's ``grammars/``.

    Raises:
        FileNotFoundError: if neither exists (a broken install).
    """
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "grammars" / GRAMMAR_NAME, here.parent / "grammars" / GRAMMAR_NAME):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"gradcli grammar {GRAMMAR_NAME} not found next to the package")


# The Indenter's settings (Lark's ``Indenter`` attributes), shared by the Indenter given to Lark and by the
# driver's own loop (:class:`_Driver`).
_NL_TYPE, _INDENT_TYPE, _DEDENT_TYPE, _TAB_LEN = "_NEWLINE", "_INDENT", "_DEDENT", 8
_OPEN_PAREN_TYPES, _CLOSE_PAREN_TYPES = ("LPAR", "LSQB", "LBRACE"), ("RPAR", "RSQB", "RBRACE")
_STARTS = ("file_input", "spec_input")
# The options the parser is built with; the generated tables (:func:`parse_tables`) record them, so that tables
# made with other options are not used.
_LARK_OPTIONS = dict(parser="lalr", start=list(_STARTS), propagate_positions=True, maybe_placeholders=True)
TABLES_NAME = "gradcli.tables.json"


class Token(str):
    """A token of the text as :class:`_Driver`'s lexer reads it: the text it matched (the string itself), with
    Lark's ``lark.lexer.Token`` attributes (``type``, the terminal's name; ``value``, the same text;
    ``start_pos``/``end_pos``, offsets in the text; ``line``/``column`` and ``end_line``/``end_column``, from 1,
    the end column being one past the last character). It behaves as Lark's does (equality as ``str`` unless both
    are tokens of different types, ``repr``, :meth:`new_borrow_pos`); it is gradcli's own so that a text that
    parses imports no Lark (about 20 ms of start-up). Where Lark reports an error, the token is handed to it as
    Lark's own (:meth:`as_lark`)."""

    __slots__ = ("type", "start_pos", "value", "line", "column", "end_line", "end_column", "end_pos")

    def __new__(cls, type, value, start_pos=None, line=None, column=None, end_line=None, end_column=None,
                end_pos=None):
        inst = str.__new__(cls, value)
        inst.type, inst.value, inst.start_pos = type, value, start_pos
        inst.line, inst.column, inst.end_line, inst.end_column, inst.end_pos = (line, column, end_line, end_column,
                                                                                  end_pos)
        return inst

    @classmethod
    def new_borrow_pos(cls, type, value, borrow) -> "Token":
        """A token of ``type`` and ``value`` at ``borrow``'s position (Lark's ``Token.new_borrow_pos``)."""
        return cls(type, value, borrow.start_pos, borrow.line, borrow.column, borrow.end_line, borrow.end_column,
                   borrow.end_pos)

    def as_lark(self):
        """The same token as a ``lark.lexer.Token`` (for Lark's exceptions)."""
        from lark.lexer import Token as LarkToken

        return LarkToken(self.type, self.value, self.start_pos, self.line, self.column, self.end_line,
                         self.end_column, self.end_pos)

    def __repr__(self):
        return f"Token({self.type!r}, {self.value!r})"

    def __eq__(self, other):
        if isinstance(other, Token) and self.type != other.type:
            return False
        return str.__eq__(self, other)

    __hash__ = str.__hash__


@lru_cache(maxsize=1)
def parser():
    """The LALR parser for both start symbols (``file_input``, ``spec_input``), built once.

    :func:`parse_into` does not need it when the generated tables are current (:func:`parse_tables`); Lark's
    parser is what :func:`parse` uses, and what reports syntax errors."""
    from lark import Lark
    from lark.indenter import Indenter

    class _Indenter(Indenter):
        NL_type = _NL_TYPE
        OPEN_PAREN_types = list(_OPEN_PAREN_TYPES)
        CLOSE_PAREN_types = list(_CLOSE_PAREN_TYPES)
        INDENT_type = _INDENT_TYPE
        DEDENT_type = _DEDENT_TYPE
        tab_len = _TAB_LEN

        def handle_NL(self, token):
            # A dedent to no outer level is refused before the blocks it closes (Lark's Indenter closes them
            # first, so that the parser may fail on one), as Python's tokenizer does, and with the position of
            # the line that dedents (where the newline token ends), which Lark's DedentError does not say.
            indent_str = token.rsplit("\n", 1)[1]
            indent = indent_str.count(" ") + indent_str.count("\t") * self.tab_len
            if self.paren_level == 0 and indent < self.indent_level[-1] and indent not in self.indent_level:
                yield token
                raise _dedent_error(indent, self.indent_level[-1], token.end_line, len(indent_str) + 1)
            yield from super().handle_NL(token)

        def _process(self, stream):
            # Brackets nested past the nesting limit are refused as they are read: ((((1)))) builds no tree
            # nodes, but is still input nobody writes by hand.
            limit = limits.current.nesting
            for token in super()._process(stream):
                if self.paren_level >= limit and token.type in self.OPEN_PAREN_types:
                    raise _brackets_too_deep(token)
                yield token

    return Lark(grammar_path().read_text(encoding="utf-8"), postlex=_Indenter(), cache=cache_path() or False,
                **_LARK_OPTIONS)


def tables_path() -> Path:
    """The generated parse tables (``grammars/gradcli.tables.json``, next to the grammar; made by
    ``scripts/gen_parse_tables.py``)."""
    return grammar_path().with_name(TABLES_NAME)


def _fingerprint(grammar_text: str) -> dict:
    """What the generated tables were made from: the grammar's text (compared whole: no hash, so that start-up
    imports no ``hashlib``), the file's layout and the parser's options. Not Lark's version: the tables are the
    grammar's LALR tables and lexers, the same whichever Lark computed them, and the driver runs them without
    Lark (which Lark is installed is read nowhere on the way, so start-up does not depend on it)."""
    return {"grammar": grammar_text, "format": _TABLES_FORMAT,
            "options": {k: _LARK_OPTIONS[k] for k in sorted(_LARK_OPTIONS)}}


#: The layout of the tables file: 2 since the lexers list their terminals' names and the terminals' groups are
#: given once, in one order of priority; 3 since the fingerprint holds no Lark version.
_TABLES_FORMAT = 3


def tables_from_lark(lark=None) -> dict:
    """Everything :func:`parse_into` reads from Lark's parser, as plain data (what ``gradcli.tables.json``
    holds): Lark's LALR table, the rules, and each state's contextual lexer.

    * ``"states"``: one ``{symbol: action}`` per parser state (numbered as a breadth-first walk from the start
      states meets them, not as Lark numbers them); an action ``n >= 0`` shifts (a terminal) or goes (a rule)
      to state ``n``, ``-1 - i`` reduces by rule ``i``.
    * ``"start_states"``, ``"end_states"``: per start symbol.
    * ``"rules"``: ``[origin, alias, template_source, expand1, keep_all_tokens, empty_indices, expansion]``,
      the expansion as ``[name, is_term, filter_out]`` (Lark's ``Rule`` and ``RuleOptions``).
    * ``"terminals"``: every terminal's named group (``(?P<NAME>...)``, as Lark's ``Scanner`` writes it), in
      one order of priority that agrees with every lexer's (so that trying them all in that order finds, where
      the match is a terminal a state takes, what the state's own lexer finds: :meth:`_Driver._lex`).
    * ``"lexers"``: the distinct lexers of the states (Lark's ``ContextualLexer`` shares one among states that
      take the same terminals), each ``{"names": [...], "ignore": [...], "keywords": {...}}``: its terminals in
      Lark's order of priority (its scanner's expression is their groups joined with ``|``), the ignored
      terminals, and for a terminal that Lark's ``UnlessCallback`` retypes (``NAME`` that reads ``if``), the
      text -> the keyword's terminal; ``"lexer_of_state"``: the index of each state's lexer.
    * ``"fingerprint"``: :func:`_fingerprint` of the grammar.

    Raises:
        ValueError: if Lark's lexer does something the driver would not reproduce (a lexer callback other than
            keywords, a keyword with flags, regular-expression flags, a scanner expression that is not its
            terminals' groups, two lexers that order two terminals differently).
    """
    from lark.parsers.lalr_analysis import Shift

    lark = lark or parser()
    frontend = lark.parser
    table = frontend.parser.parser.parse_table
    rule_index = {id(rule): i for i, rule in enumerate(lark.rules)}
    rules = [[r.origin.name, r.alias, r.options.template_source, bool(r.options.expand1),
              bool(r.options.keep_all_tokens), [bool(b) for b in r.options.empty_indices] or None,
              [[sym.name, bool(sym.is_term), bool(sym.is_term and sym.filter_out)] for sym in r.expansion]]
             for r in lark.rules]

    def index(rule):
        i = rule_index.get(id(rule))
        if i is None:
            i = rule_index[id(rule)] = lark.rules.index(rule)
        return i

    order, number = _state_order(table)
    states = [{sym: (number[arg] if action is Shift else -1 - index(arg))
               for sym, (action, arg) in sorted(table.states[s].items())} for s in order]
    contextual = frontend.lexer.lexer
    lexers: list = []
    groups: dict = {}  # terminal -> its named group
    seen: dict = {}
    lexer_of_state = []
    for s in order:
        lexer = contextual.lexers[s]
        if id(lexer) not in seen:
            seen[id(lexer)] = len(lexers)
            lexers.append(_lexer_entry(lexer, groups))
        lexer_of_state.append(seen[id(lexer)])
    return {"fingerprint": _fingerprint(grammar_path().read_text(encoding="utf-8")),
            "start_states": {k: number[v] for k, v in sorted(table.start_states.items())},
            "end_states": {k: number[v] for k, v in sorted(table.end_states.items())},
            "rules": rules, "states": states,
            "terminals": [[name, groups[name]] for name in _one_order([lexer["names"] for lexer in lexers])],
            "lexers": lexers, "lexer_of_state": lexer_of_state}


def _state_order(table) -> tuple[list, dict]:
    """Lark's parser states in the order :func:`tables_from_lark` numbers them, and each state's number.

    Lark numbers the states in an order that depends on the process's string hashes (a parser built by another
    process numbers them otherwise): renumbered here in the order a breadth-first walk from the start states
    reaches them, symbols in sorted order, so that the same grammar gives the same file.

    Raises:
        ValueError: if a state is unreachable from the start states."""
    from lark.parsers.lalr_analysis import Shift

    order: list = []
    number: dict = {}
    for start in sorted(table.start_states):
        if table.start_states[start] not in number:
            number[table.start_states[start]] = len(order)
            order.append(table.start_states[start])
    for state in order:
        for sym in sorted(table.states[state]):
            action, arg = table.states[state][sym]
            if action is Shift and arg not in number:
                number[arg] = len(order)
                order.append(arg)
    if len(order) != len(table.states):
        raise ValueError("some of Lark's parser states are unreachable from the start states")
    return order, number


def _lexer_entry(lexer, groups: dict) -> dict:
    """One of Lark's state lexers as ``{"names": [...], "ignore": [...], "keywords": {...}}`` (see
    :func:`tables_from_lark`), adding its terminals' named groups to ``groups`` (terminal -> group).

    Raises:
        ValueError: for what the driver would not reproduce (as :func:`tables_from_lark` lists)."""
    from lark.lexer import UnlessCallback

    scanner = lexer.scanner
    if lexer.g_regex_flags or lexer.use_bytes:
        raise ValueError("the driver reads no regular-expression flags or bytes")
    keywords = {}
    for kind, callback in lexer.callback.items():
        if not isinstance(callback, UnlessCallback) or any(
                t.pattern.type != "str" or t.pattern.flags for t in callback.scanner.terminals):
            raise ValueError(f"lexer callback on {kind} is not a plain keyword check")
        keywords[kind] = {t.pattern.value: t.name for t in sorted(callback.scanner.terminals,
                                                                 key=lambda t: t.pattern.value)}
    names = []
    for t in scanner.terminals:
        group = "(?P<%s>%s)" % (t.name, t.pattern.to_regexp())  # (Lark's Scanner._build_mres)
        if groups.setdefault(t.name, group) != group:
            raise ValueError(f"two lexers write the terminal {t.name} differently")
        names.append(t.name)
    if "|".join(groups[n] for n in names) != "|".join(mre.pattern for mre in scanner._mres):
        raise ValueError("a lexer's expression is not its terminals' groups joined in order")
    return {"names": names, "ignore": sorted(lexer.ignore_types), "keywords": keywords}


def _one_order(orders: list) -> list:
    """One order of all the names in ``orders`` (lists) in which each list's names come in that list's order
    (Kahn's algorithm, ties broken by name, so the same lists give the same order).

    Raises:
        ValueError: if two lists order two names differently.
    """
    import heapq

    after: dict = {}
    before_count: dict = {}
    for order in orders:
        for name in order:
            before_count.setdefault(name, 0)
            after.setdefault(name, set())
        for a, b in zip(order, order[1:]):
            if b not in after[a]:
                after[a].add(b)
                before_count[b] += 1
    ready = [name for name, count in before_count.items() if count == 0]
    heapq.heapify(ready)
    out = []
    while ready:
        name = heapq.heappop(ready)
        out.append(name)
        for b in after[name]:
            before_count[b] -= 1
            if before_count[b] == 0:
                heapq.heappush(ready, b)
    if len(out) != len(before_count):
        raise ValueError("two lexers order their terminals differently: no one order of priority agrees with all")
    return out


def read_tables(path: Path, grammar_text: str) -> dict | None:
    """The tables in ``path`` (JSON, :func:`tables_from_lark`'s form) if they were made from ``grammar_text``
    in this layout and with these options (by any Lark), else None (missing, unreadable or stale: the caller asks
    Lark)."""
    import json

    try:
        tables = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(tables, dict) or tables.get("fingerprint") != _fingerprint(grammar_text):
        return None
    return tables


@lru_cache(maxsize=1)
def parse_tables() -> dict:
    """The parse tables :func:`parse_into` runs on: the generated ``gradcli.tables.json`` when it matches the
    grammar and the options (then no ``lark.Lark`` is built, nor its cache unpickled), else the
    same tables read from Lark's parser (:func:`tables_from_lark`)."""
    tables = read_tables(tables_path(), grammar_path().read_text(encoding="utf-8"))
    return tables if tables is not None else tables_from_lark()


def _brackets_too_deep(token) -> InputLimitError:
    err = limits.exceeded("nesting", "brackets nest too deeply here")
    err.line, err.column = token.line, token.column
    return err


def _dedent_error(indent: int, expected: int, line: int, column: int):
    """Lark's ``DedentError`` for a line indented to ``indent`` where no open block is (the innermost is at
    ``expected``), with the line's position (``line``, and ``column``, its first character) as attributes."""
    from lark.indenter import DedentError

    err = DedentError(f"Unexpected dedent to column {indent}. Expected dedent to {expected}")
    err.line, err.column = line, column
    return err


def cache_path() -> str | None:
    """Where Lark caches the parser tables: a file in a directory only this user can write
    (``$XDG_CACHE_HOME/gradcli`` or ``~/.cache/gradcli``, made with mode 0700), or None (no cache) when there is
    no such directory, it cannot be made, or it is another user's or writable by others."""
    import os
    import stat

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.join(base, "gradcli")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        st = os.stat(directory)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()) or \
            st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    import lark

    return os.path.join(directory, f"grammar-lark-{lark.__version__}.cache")


# Lark terminal names -> what a user wrote, for "expected one of" hints.
_TOKEN_WORDS = {
    "NAME": "a name", "INT": "a number", "FLOAT": "a number", "STRING": "a string", "FSTRING": "a string",
    "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'", "LBRACE": "'{'", "RBRACE": "'}'",
    "COMMA": "','", "COLON": "':'", "SEMICOLON": "';'", "EQUAL": "'='", "DOT": "'.'", "_NEWLINE": "end of line",
    "_INDENT": "an indented block", "_DEDENT": "end of block", "$END": "end of input", "PLUS": "'+'",
    "MINUS": "'-'", "STAR": "'*'", "SLASH": "'/'", "AT": "'@'", "COMP_OP": "a comparison",
    "AUGOP": "an augmented assignment ('+=', ...)", "MAGIC": "an IPython magic",
}

# Python statements the language does not have, by their first word: said so at the keyword,
# instead of the token the parser stopped at.
_UNSUPPORTED = {
    "match": "`match` statements are not supported by gradcli",
    "async": "`async` functions are not supported by gradcli",
    "await": "`await` is not supported by gradcli",
}
_STATEMENT_START = re.compile(r"[ \t]*(@|[A-Za-z_]+)")


def _unsupported_statement(text: str, line: int | None):
    """(message, column) when ``line`` of ``text`` starts with a statement the language lacks, else None."""
    lines = text.split("\n")
    if not line or line > len(lines):
        return None
    m = _STATEMENT_START.match(lines[line - 1])
    if m is None or m.group(1) not in _UNSUPPORTED:
        return None
    return _UNSUPPORTED[m.group(1)], m.start(1) + 1


def _word(terminal: str) -> str:
    if terminal in _TOKEN_WORDS:
        return _TOKEN_WORDS[terminal]
    try:
        pattern = parser().get_terminal(terminal).pattern
    except (KeyError, AttributeError):
        return terminal
    return repr(pattern.value) if pattern.type == "str" else terminal.lower()


def _expected_hint(expected) -> str | None:
    words = sorted({_word(t) for t in expected if not t.startswith("__")})
    if not words:
        return None
    return "expected one of: " + ", ".join(words)


def parse(text: str, start: str = "file_input", filename: str = "<input>"):
    """Parse ``text`` into a Lark tree (for what needs the tree or only whether the text parses; the builder
    uses :func:`parse_into`, which builds no tree).

    Args:
        text: the program (or, with ``start="spec_input"``, one expression).
        start: "file_input" or "spec_input".
        filename: shown in error messages.

    Raises:
        GradcliSyntaxError: with line, column, the source line and what was expected.
        InputLimitError: for text longer than the ``chars`` limit (checked before parsing).
    """
    limits.check_source(text, filename)
    if not text.endswith("\n"):
        text += "\n"
    with _syntax_errors(text, filename):
        return parser().parse(text, start=start)


def parse_into(text: str, start: str, filename: str, handlers: dict, context):
    """Parse ``text`` with the grammar's LALR tables and build its value as the parser reduces, without a tree.

    ``handlers`` maps the grammar's rule names (the alias after ``->``, else the rule's name) to functions
    ``f(context, meta, children)``, called in the order Lark's transformer would call them (left to right,
    bottom up). ``children`` are the rule's children as in Lark's tree (anonymous tokens filtered, ``[x]`` as
    None, ``_rules`` and EBNF repetitions inlined, ``?rule`` with one child replaced by the child); ``meta`` is
    the first token of the rule's text (what ``propagate_positions`` gives the tree: ``.line``, ``.column``), or
    None for a rule that matched nothing. This is Lark's own parse loop (``lalr_parser_state.feed_token``) over
    Lark's tables (as generated into ``gradcli.tables.json``: no ``lark.Lark`` is built unless the text has a
    syntax error), Lark's contextual lexer and the Indenter, with the tree building left out: most reductions of an
    expression are the precedence levels an atom passes through (``?test: or_test``, ...), and here they only
    change the parser's state.

    The first error a handler raises (a :class:`GradcliError`) is kept until the whole text has parsed, so that
    a syntax error further on is reported first, as when the tree was built before it was transformed.

    Raises:
        GradcliSyntaxError: for text that does not parse (the same messages as :func:`parse`), or the first
            error raised by a handler.
        InputLimitError: for text longer than the ``chars`` limit, or brackets nested too deeply.
    """
    limits.check_source(text, filename)
    if not text.endswith("\n"):
        text += "\n"
    with _syntax_errors(text, filename):
        value, failed = _Driver.get(handlers).run(text, start, context)
    if failed is not None:  # raised as the handler raised it, outside the translation of Lark's errors
        raise failed
    return value


#: Tokens a parser state reads with the expression of every terminal before its own is compiled (_Driver._lex).
_HOT = 32
#: Where a state's scanner list (_Driver._scanner) keeps its own compiled expression and its count of tokens read.
_OWN, _READS = 4, 5


class _Driver:
    """Lark's LALR loop with the handlers of one builder (see :func:`parse_into`), built once per handler table
    from the grammar's tables (:func:`parse_tables`). The lexer is Lark's contextual lexer (each state's
    expressions, compiled when the state first reads a token), and errors are Lark's: an unexpected token is
    raised as Lark's parser raises it, and where no terminal matches, Lark's parser reads the text and raises its
    own error. What is left out is Lark's work per token and per reduction (its wrappers around each step)."""

    _cache: dict = {}

    @classmethod
    def get(cls, handlers: dict) -> "_Driver":
        driver = cls._cache.get(id(handlers))
        if driver is None or driver.handlers is not handlers:
            driver = cls._cache[id(handlers)] = cls(handlers)
        return driver

    def __init__(self, handlers: dict):
        tables = parse_tables()
        self.handlers = handlers
        # the compiled rules; the table as read: state -> {symbol: next state (shift or goto) if >= 0, else ~i
        # for rule i to reduce by}, shared by every driver
        self.rules = [self._compile(rule, handlers) for rule in tables["rules"]]
        self.table = tables["states"]
        self.start_states = tables["start_states"]
        self.end_states = tables["end_states"]
        self.lexers = tables["lexers"]
        self.lexer_of_state = tables["lexer_of_state"]
        self.terminals = tables["terminals"]  # [name, its named group], in one order of priority
        self.groups = dict(self.terminals)
        self.union = None  # every terminal's group in that order, compiled on first use (_lex)
        self.compiled: dict = {}  # lexer index -> its own compiled expression (where the union's match is refused)
        self.scanners: dict = {}  # parser state -> (terminals it takes, ignored terminals, keywords, lexer index)
        self.units: dict = {}  # start -> {(state below, state, lookahead): the state after the unit reductions}

    def _units(self, key, end_state):
        """The state the parser reaches from ``key`` (the state below the top, the top, the lookahead) by the
        unit reductions (``?a: b``) it makes in a row there: an atom passes up through every precedence level
        (``?test: or_test``, ``?or_test: and_test``, ...) with the same lookahead, and those steps change only
        the top state, so they are taken once and remembered."""
        below, state, kind = key
        table, rules = self.table, self.rules
        action = table[state][kind]
        while action < 0 and rules[~action][3] is None:
            state = table[below][rules[~action][1]]
            if state == end_state:
                break
            action = table[state].get(kind)
            if action is None:
                break
        return state

    @staticmethod
    def _compile(rule, handlers: dict):
        """(size, origin, handler, which children to keep, Nones at the end, whether a lone child stands for
        the rule) -- Lark's ``maybe_create_child_filter`` and ``ExpandSingleChild`` for ``maybe_placeholders``;
        ``rule`` as :func:`tables_from_lark` gives it."""
        origin, alias, template_source, expand1, keep_all_tokens, flags, expansion = rule
        if flags:
            nones = [len(ones) for ones in "".join(str(int(b)) for b in flags).split("0")]
        else:
            nones = [0] * (len(expansion) + 1)
        keep, pending = [], 0
        for i, (sym, is_term, filter_out) in enumerate(expansion):
            pending += nones[i]
            if keep_all_tokens or not filter_out:
                keep.append((i, not is_term and sym.startswith("_"), pending))
                pending = 0
        trailing = pending + nones[len(expansion)]
        lone = bool(expand1 and not alias)
        name = alias or template_source or origin
        internal = origin.startswith("_") and not alias
        handler = None if internal else handlers.get(name)
        always_lone = lone and trailing == 0 and len(keep) == 1 and keep[0][2] == 0 and not keep[0][1]
        if handler is None and not internal and not always_lone:
            raise LookupError(f"the builder has no method for the grammar rule {name!r}")
        if always_lone and len(expansion) == 1:  # ?a: b -- only the parser's state changes
            return (1, origin, None, None, 0, True)
        return (len(expansion), origin, handler, tuple(keep), trailing, lone)

    def _lex(self, text: str, start: str, state_stack: list):
        """The tokens of ``text`` as Lark's contextual lexer and the grammar's Indenter give them to the parser:
        each read as the lexer of the parser's state when it is read reads it (Lark's ``BasicLexer.next_token``
        without its per-token calls; where no terminal matches, Lark's parser reads the text and raises its own
        error), then indentation turned into _INDENT/_DEDENT outside brackets (Lark's ``Indenter._process`` and
        gradcli's limit on nested brackets, in one loop).

        Each token is first read with one expression of every terminal (``"terminals"`` of the tables, in an
        order of priority that agrees with each lexer's): where what it matches is a terminal the state takes
        (after the keyword check), the state's own lexer, which tries the same terminals in the same order less
        those the state does not take, finds the same. Only where it is not (``**`` where the state takes ``*``
        only, a keyword after an expression, where ``NAME`` is not taken) is the state's own expression compiled
        and read, so that a command compiles one expression instead of one per state (each about 1 ms). A state
        that has read :data:`_HOT` tokens (a batch, a session) gets its own expression, which reads faster."""
        union = self.union
        if union is None:
            union = self.union = re.compile("|".join(group for _, group in self.terminals))
        scanners = self.scanners
        new, borrow = str.__new__, Token.new_borrow_pos
        nl_type, indent_type, dedent_type, tab_len = _NL_TYPE, _INDENT_TYPE, _DEDENT_TYPE, _TAB_LEN
        opening, closing = frozenset(_OPEN_PAREN_TYPES), frozenset(_CLOSE_PAREN_TYPES)
        paren_level, indent_level, limit = 0, [0], limits.current.nesting
        pos, line, line_start, end = 0, 1, 0, len(text)
        while pos < end:
            state = state_stack[-1]
            scanner = scanners.get(state)
            if scanner is None:
                scanner = self._scanner(state)
            takes, ignore, keywords, index, own, _ = scanner
            if own is not None:  # a state read often has its own expression (shorter: faster than the union)
                m = own.match(text, pos)
            else:
                scanner[_READS] += 1
                if scanner[_READS] == _HOT:
                    scanner[_OWN] = self._own(index)
                m = union.match(text, pos)
                if m is not None:
                    kind = m.lastgroup
                    if (keywords[kind].get(m.group(), kind) if kind in keywords else kind) not in takes:
                        m = self._own(index).match(text, pos)  # what the state's own lexer reads instead
            if m is None:  # nothing matches: Lark's parser, reading the same text, raises its error here
                parser().parse(text, start=start)
                # (a Lark that read it all the same, one unlike the Lark that made the tables, still gets the
                # error Lark's lexer raises where it reads nothing, not a traceback)
                from lark.exceptions import UnexpectedCharacters

                raise UnexpectedCharacters(text, pos, line, pos - line_start + 1)
            value, kind = m.group(), m.lastgroup
            if kind in keywords:  # NAME -> a keyword this state takes (Lark's UnlessCallback)
                kind = keywords[kind].get(value, kind)
            if kind in ignore:
                if "\n" in value:
                    line += value.count("\n")
                    line_start = pos + value.rindex("\n") + 1
                pos += len(value)
                continue
            token = new(Token, value)
            token.type, token.value, token.start_pos = kind, value, pos
            token.line, token.column = line, pos - line_start + 1
            if "\n" in value:
                line += value.count("\n")
                line_start = pos + value.rindex("\n") + 1
            pos += len(value)
            token.end_line, token.end_column, token.end_pos = line, pos - line_start + 1, pos
            if kind == nl_type:
                if paren_level:
                    continue
                yield token
                indent_str = value.rsplit("\n", 1)[1]
                indent = indent_str.count(" ") + indent_str.count("\t") * tab_len
                if indent > indent_level[-1]:
                    indent_level.append(indent)
                    yield borrow(indent_type, indent_str, token)
                else:
                    if indent not in indent_level:  # before the blocks it closes (as parser()'s Indenter)
                        raise _dedent_error(indent, indent_level[-1], line, len(indent_str) + 1)
                    while indent < indent_level[-1]:
                        indent_level.pop()
                        yield borrow(dedent_type, indent_str, token)
            elif kind in opening:
                if paren_level >= limit:
                    raise _brackets_too_deep(token)
                yield token
                paren_level += 1
            elif kind in closing:
                yield token
                paren_level -= 1
            else:
                yield token
        while len(indent_level) > 1:
            indent_level.pop()
            yield Token(dedent_type, "")

    def _scanner(self, state):
        """What the state's lexer takes: [the terminals it reads, keywords included; the ignored ones; the
        keyword table; the lexer's index; its own compiled expression once the state has read :data:`_HOT`
        tokens (None before); how many it has read]."""
        index = self.lexer_of_state[state]
        lexer = self.lexers[index]
        takes = set(lexer["names"])
        for kinds in lexer["keywords"].values():
            takes.update(kinds.values())
        own = self.compiled.get(index)
        scanner = self.scanners[state] = [frozenset(takes), frozenset(lexer["ignore"]), lexer["keywords"], index, own,
                                          0]
        return scanner

    def _own(self, index):
        """The lexer's own expression (its terminals' groups joined in its order, as Lark's ``Scanner`` builds
        it), compiled on first use."""
        own = self.compiled.get(index)
        if own is None:
            own = self.compiled[index] = re.compile("|".join(self.groups[n] for n in self.lexers[index]["names"]))
        return own

    def run(self, text: str, start: str, context):
        """(the value of ``text`` from ``start``, the first error a handler raised or None)."""
        table, rules = self.table, self.rules
        units = self.units.setdefault(start, {})
        end_state = self.end_states[start]
        state_stack = [self.start_states[start]]
        value_stack: list = []
        meta_stack: list = []  # the first token of each value's text (None: matched nothing)
        failed = None
        token = None
        tokens = self._lex(text, start, state_stack)
        at_end = False
        while True:
            if not at_end:
                last = token
                token = next(tokens, None)
                if token is None:
                    at_end = True
                    token = Token.new_borrow_pos("$END", "", last) if last else Token("$END", "", 0, 1, 1)
            kind = token.type
            while True:
                try:
                    action = table[state_stack[-1]][kind]
                except KeyError:
                    from lark.exceptions import UnexpectedToken

                    expected = {s for s in table[state_stack[-1]] if s.isupper()}
                    raise UnexpectedToken(token.as_lark(), expected, state=state_stack,
                                          interactive_parser=None) from None
                if action >= 0:  # shift
                    state_stack.append(action)
                    value_stack.append(token)
                    meta_stack.append(token)
                    break
                size, origin, handler, keep, trailing, lone = rules[~action]
                if keep is None:  # ?a: b -- the value and its position stay, only the state changes
                    key = (state_stack[-2], state_stack[-1], kind)
                    top = units.get(key)
                    if top is None:
                        top = units[key] = self._units(key, end_state if at_end else None)
                    state_stack[-1] = top
                    if at_end and top == end_state:
                        return value_stack[-1], failed
                    continue
                else:
                    if size:
                        raw = value_stack[-size:]
                        for meta in meta_stack[-size:]:
                            if meta is not None:
                                break
                        del state_stack[-size:], value_stack[-size:], meta_stack[-size:]
                    else:
                        raw, meta = [], None
                    children: list = []
                    for i, inline, add in keep:
                        if add:
                            children += [None] * add
                        if inline:
                            children += raw[i]
                        else:
                            children.append(raw[i])
                    if trailing:
                        children += [None] * trailing
                    if lone and len(children) == 1:
                        value = children[0]
                    elif handler is None:  # an inlined _rule or repetition: its children, spliced by the parent
                        value = children
                    elif failed is not None:
                        value = None
                    else:
                        try:
                            value = handler(context, meta, children)
                        except GradcliError as e:  # reported once the whole text has parsed
                            failed, value = e, None
                    value_stack.append(value)
                    meta_stack.append(meta)
                state_stack.append(table[state_stack[-1]][origin])
                if at_end and state_stack[-1] == end_state:
                    return value_stack[-1], failed


@contextmanager
def _syntax_errors(text: str, filename: str):
    """Lark's exceptions while parsing ``text`` turned into :class:`GradcliSyntaxError` (position, source line,
    what was expected)."""
    try:
        yield
    except InputLimitError as e:  # raised while lexing (brackets nested too deeply)
        e.source, e.filename = text, filename
        raise
    except Exception as e:
        if not type(e).__module__.startswith("lark."):  # (Lark is imported only once it has raised)
            raise
        _raise_syntax_error(e, text, filename)


def _raise_syntax_error(error: Exception, text: str, filename: str):
    """Raise the :class:`GradcliSyntaxError` for Lark's exception ``error`` while parsing ``text``."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
    from lark.indenter import DedentError

    e = error
    if isinstance(e, UnexpectedCharacters):
        raise GradcliSyntaxError(f"unexpected character {text[e.pos_in_stream]!r}" if e.pos_in_stream is not None
                                 and e.pos_in_stream < len(text) else "unexpected character",
                                 line=e.line, column=e.column, source=text, filename=filename) from None
    if isinstance(e, UnexpectedToken):
        tok = e.token
        missing = _missing_block(tok, e.expected, text)
        if missing is not None:
            raise GradcliSyntaxError(missing[0], type="IndentationError", line=missing[1], column=missing[2],
                                     source=text, filename=filename) from None
        kind = None
        if _at_end(tok, text):
            line, col = _end_position(text)
            what = "unexpected end of input"
        elif tok.type == "_DEDENT":  # a block closed where the statement goes on (a decorator's definition)
            line, col, kind = tok.end_line, tok.end_column, "IndentationError"
            what = "unexpected unindent"
        elif tok.type == "_NEWLINE":
            line, col = tok.line, tok.column
            what = "unexpected end of line"
        elif tok.type == "_INDENT":
            line, col, kind = tok.end_line, tok.end_column, "IndentationError"
            what = "unexpected indent"
        else:
            line, col = tok.line, tok.column
            what = f"invalid syntax: unexpected {str(tok)!r}"
        unsupported = _unsupported_statement(text, tok.line)
        if unsupported is not None:
            raise GradcliSyntaxError(unsupported[0], line=tok.line, column=unsupported[1], source=text,
                                     filename=filename) from None
        # (Python's IndentationError, which lists nothing: what may follow an indented line is any statement)
        err = GradcliSyntaxError(what, type=kind, line=line, column=col, source=text, filename=filename,
                                 hint=None if kind else _expected_hint(e.expected))
        if what == "unexpected end of input":
            err.code = END_OF_INPUT
        raise err from None
    if isinstance(e, UnexpectedEOF):
        line, col = _end_position(text)
        err = GradcliSyntaxError("unexpected end of input", line=line, column=col, source=text, filename=filename,
                                 hint=_expected_hint(e.expected))
        err.code = END_OF_INPUT
        raise err from None
    if isinstance(e, DedentError):  # Python's words; the position: the line that dedents, at its first character
        raise GradcliSyntaxError("unindent does not match any outer indentation level", type="IndentationError",
                                 line=getattr(e, "line", None), column=getattr(e, "column", None), source=text,
                                 filename=filename) from None
    if isinstance(e, UnexpectedInput):  # any other Lark parse failure
        raise GradcliSyntaxError("invalid syntax", line=getattr(e, "line", None), column=getattr(e, "column", None),
                                 source=text, filename=filename) from None
    raise error


# The statements that open a block, as CPython 3.11 names them in "expected an indented block after ...".
_BLOCK_OPENERS = {"def": "function definition", "class": "class definition", "if": "'if' statement",
                  "elif": "'elif' statement", "else": "'else' statement", "for": "'for' statement",
                  "while": "'while' statement", "with": "'with' statement", "try": "'try' statement",
                  "except": "'except' statement", "finally": "'finally' statement"}


def _missing_block(tok, expected, text: str):
    """(message, line, column) when the parser stopped where a block's indented body must start: a header
    (``def g(t):``) followed by a line that is not indented further (Python's ``IndentationError: expected an
    indented block after function definition on line 1``, at that line's first character); else None.

    The parser then waits for ``_INDENT`` and gets the next line's first token, or the ``_DEDENT`` of a line
    indented less (its position is the newline's; the line starts where the newline ends); or, where no terminal
    of that state matches the line's first token, Lark's lexer reports the token with the terminals it could
    read (only ``_NEWLINE``). At the end of the text (``def g(t):`` and nothing after) it stays "unexpected end
    of input": the session and the batch reader take that for an entry that goes on."""
    expected = set(expected)
    if "_INDENT" not in expected and expected != {"_NEWLINE"} or _at_end(tok, text):
        return None
    if tok.type == "_DEDENT":
        line = tok.end_line
    elif tok.type in ("$END", "_NEWLINE", "_INDENT"):
        return None
    else:
        line = tok.line
    lines = text.split("\n")
    if line is None or not 1 <= line <= len(lines):
        return None
    first = lines[line - 1]
    column = len(first) - len(first.lstrip(" \t")) + 1
    if tok.type != "_DEDENT" and tok.column != column:  # not the first token of its line
        return None
    opener = _block_opener(lines, line - 1)
    if opener is None:
        return None
    word, opener_line = opener
    return f"expected an indented block after {_BLOCK_OPENERS[word]} on line {opener_line}", line, column


def _at_end(tok, text: str) -> bool:
    """Whether the parser stopped at the end of ``text``: Lark's ``$END``, or a ``_DEDENT`` that closes a block
    there (the Indenter's at the end, which have no position, or those of the text's last newline)."""
    return tok.type == "$END" or tok.type == "_DEDENT" and (tok.end_pos is None or not text[tok.end_pos:].strip())


def _block_opener(lines: list, end: int):
    """(keyword, line from 1) of the compound statement whose header is the code just before ``lines[end]``
    (blank and comment lines skipped) and ends with ``:``, over several lines if brackets or backslashes carry
    it on; None if that code is no such header."""
    i = end - 1
    while i >= 0 and not _code_of(lines[i]).strip():
        i -= 1
    if i < 0 or not _code_of(lines[i]).endswith(":"):
        return None
    depth = 0  # closing brackets not yet matched, walking up
    while i >= 0:
        code = _code_of(lines[i])
        depth += sum(code.count(c) for c in ")]}") - sum(code.count(c) for c in "([{")
        if depth < 0:  # the ':' is inside a bracket (a lambda, a slice, a dict)
            return None
        if depth == 0 and not (i > 0 and _code_of(lines[i - 1]).endswith("\\")):
            m = re.match(r"[ \t]*([A-Za-z_]\w*)", code)  # (compiled on the error path only)
            return (m.group(1), i + 1) if m is not None and m.group(1) in _BLOCK_OPENERS else None
        i -= 1
    return None


def _code_of(line: str) -> str:
    """``line`` without its comment and trailing blanks, its strings' contents left out (one line's view, enough
    to read a header's brackets and its final ``:``)."""
    out, quote, i = [], None, 0
    while i < len(line):
        c = line[i]
        if quote is not None:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
                out.append(c)
        elif c in "'\"":
            quote = c
            out.append(c)
        elif c == "#":
            break
        else:
            out.append(c)
        i += 1
    return "".join(out).rstrip()


def _end_position(text: str):
    lines = text.rstrip("\n").split("\n")
    return len(lines), len(lines[-1]) + 1
