"""Loading the Lark grammar (``grammars/gradcli.lark``) and parsing text: into a Lark tree (:func:`parse`), or
straight into a program, the builder's methods called as the parser reduces each rule (:func:`parse_into`).

The grammar ships inside the wheel as ``gradcli/grammars/gradcli.lark`` (hatchling force-include); in a source
checkout or an editable install it is read from the repository's top-level ``grammars/``. The LALR parser is
built once per process and cached on disk by Lark, so start-up does not rebuild the tables (about 350 ms).

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

from ..errors import GradcliError, GradcliSyntaxError, InputLimitError

GRAMMAR_NAME = "gradcli.lark"


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


@lru_cache(maxsize=1)
def parser():
    """The LALR parser for both start symbols (``file_input``, ``spec_input``), built once."""
    from lark import Lark
    from lark.indenter import Indenter

    class _Indenter(Indenter):
        NL_type = "_NEWLINE"
        OPEN_PAREN_types = ["LPAR", "LSQB", "LBRACE"]
        CLOSE_PAREN_types = ["RPAR", "RSQB", "RBRACE"]
        INDENT_type = "_INDENT"
        DEDENT_type = "_DEDENT"
        tab_len = 8

        def _process(self, stream):
            # Brackets nested past the nesting limit are refused as they are read: ((((1)))) builds no tree
            # nodes, but is still input nobody writes by hand.
            from .. import limits

            limit = limits.current.nesting
            for token in super()._process(stream):
                if self.paren_level >= limit and token.type in self.OPEN_PAREN_types:
                    raise _brackets_too_deep(token)
                yield token

    return Lark(grammar_path().read_text(encoding="utf-8"), parser="lalr", postlex=_Indenter(),
                start=["file_input", "spec_input"], propagate_positions=True, maybe_placeholders=True,
                cache=cache_path() or False)


def _brackets_too_deep(token) -> InputLimitError:
    from .. import limits

    err = limits.exceeded("nesting", "brackets nest too deeply here")
    err.line, err.column = token.line, token.column
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

# Python statements the language does not have, by their first word: said so at the keyword (issue 13 item 4),
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
    from .. import limits

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
    Lark's tables and Lark's lexer and Indenter, with the tree building left out: most reductions of an
    expression are the precedence levels an atom passes through (``?test: or_test``, ...), and here they only
    change the parser's state.

    The first error a handler raises (a :class:`GradcliError`) is kept until the whole text has parsed, so that
    a syntax error further on is reported first, as when the tree was built before it was transformed.

    Raises:
        GradcliSyntaxError: for text that does not parse (the same messages as :func:`parse`), or the first
            error raised by a handler.
        InputLimitError: for text longer than the ``chars`` limit, or brackets nested too deeply.
    """
    from .. import limits

    limits.check_source(text, filename)
    if not text.endswith("\n"):
        text += "\n"
    with _syntax_errors(text, filename):
        value, failed = _Driver.get(handlers).run(text, start, context)
    if failed is not None:  # raised as the handler raised it, outside the translation of Lark's errors
        raise failed
    return value


class _Driver:
    """Lark's LALR loop with the handlers of one builder (see :func:`parse_into`), built once per handler table
    from the rules of the loaded grammar. The lexer is Lark's contextual lexer, and errors are raised by Lark's
    own code; what is left out is Lark's work per token and per reduction (its wrappers around each step)."""

    _cache: dict = {}

    @classmethod
    def get(cls, handlers: dict) -> "_Driver":
        driver = cls._cache.get(id(handlers))
        if driver is None or driver.handlers is not handlers:
            driver = cls._cache[id(handlers)] = cls(handlers)
        return driver

    def __init__(self, handlers: dict):
        from lark.parsers.lalr_analysis import Shift

        lark = parser()
        frontend = lark.parser
        table = frontend.parser.parser.parse_table
        self.handlers = handlers
        contextual = frontend.lexer.lexer
        self.contextual = contextual
        self.root = contextual.root_lexer  # every terminal
        self.scanners: dict = {}  # parser state -> (its lexer's expressions, ignored terminals, callbacks)
        self.indenter = frontend.lexer.postlexer  # its settings (terminal names, tab length)
        rules = {rule: self._compile(rule, handlers) for rule in lark.rules}
        # state -> {symbol: next state (shift or goto) | the compiled rule to reduce by}
        self.table = {state: {sym: (arg if action is Shift else rules[arg]) for sym, (action, arg) in acts.items()}
                      for state, acts in table.states.items()}
        self.start_states = table.start_states
        self.end_states = table.end_states
        self.retyped: dict = {}  # (callback, text) -> the terminal Lark's callback makes it (NAME "if" -> IF)
        self.units: dict = {}  # start -> {(state below, state, lookahead): the state after the unit reductions}

    def _units(self, key, end_state):
        """The state the parser reaches from ``key`` (the state below the top, the top, the lookahead) by the
        unit reductions (``?a: b``) it makes in a row there: an atom passes up through every precedence level
        (``?test: or_test``, ``?or_test: and_test``, ...) with the same lookahead, and those steps change only
        the top state, so they are taken once and remembered."""
        below, state, kind = key
        table = self.table
        action = table[state][kind]
        while action.__class__ is tuple and action[3] is None:
            state = table[below][action[1]]
            if state == end_state:
                break
            action = table[state].get(kind)
            if action is None:
                break
        return state

    @staticmethod
    def _compile(rule, handlers: dict):
        """(size, origin, handler, which children to keep, Nones at the end, whether a lone child stands for
        the rule) -- Lark's ``maybe_create_child_filter`` and ``ExpandSingleChild`` for ``maybe_placeholders``."""
        expansion, options = rule.expansion, rule.options
        flags = options.empty_indices
        if flags:
            nones = [len(ones) for ones in "".join(str(int(b)) for b in flags).split("0")]
        else:
            nones = [0] * (len(expansion) + 1)
        keep, pending = [], 0
        for i, sym in enumerate(expansion):
            pending += nones[i]
            if options.keep_all_tokens or not (sym.is_term and sym.filter_out):
                keep.append((i, not sym.is_term and sym.name.startswith("_"), pending))
                pending = 0
        trailing = pending + nones[len(expansion)]
        lone = bool(options.expand1 and not rule.alias)
        name = rule.alias or options.template_source or rule.origin.name
        internal = rule.origin.name.startswith("_") and not rule.alias
        handler = None if internal else handlers.get(name)
        always_lone = lone and trailing == 0 and len(keep) == 1 and keep[0][2] == 0 and not keep[0][1]
        if handler is None and not internal and not always_lone:
            raise LookupError(f"the builder has no method for the grammar rule {name!r}")
        if always_lone and len(expansion) == 1:  # ?a: b -- only the parser's state changes
            return (1, rule.origin.name, None, None, 0, True)
        return (len(expansion), rule.origin.name, handler, tuple(keep), trailing, lone)

    def _lex(self, text: str, state_stack: list):
        """The tokens of ``text`` as Lark's contextual lexer and the grammar's Indenter give them to the parser:
        each read with the regular expression of the terminals the parser's state takes when it is read (Lark's
        ``BasicLexer.next_token`` without its per-token calls; errors are left to Lark's own lexer, so that they
        are Lark's), then indentation turned into _INDENT/_DEDENT outside brackets (Lark's ``Indenter._process``
        and gradcli's limit on nested brackets, in one loop)."""
        from lark.indenter import DedentError
        from lark.lexer import LexerThread, Token

        from .. import limits

        scanners, retyped = self.scanners, self.retyped
        new, borrow = str.__new__, Token.new_borrow_pos
        ind = self.indenter
        nl_type, indent_type, dedent_type, tab_len = ind.NL_type, ind.INDENT_type, ind.DEDENT_type, ind.tab_len
        opening, closing = frozenset(ind.OPEN_PAREN_types), frozenset(ind.CLOSE_PAREN_types)
        paren_level, indent_level, limit = 0, [0], limits.current.nesting
        pos, line, line_start, end = 0, 1, 0, len(text)
        while pos < end:
            state = state_stack[-1]
            scanner = scanners.get(state)
            if scanner is None:
                scanner = self._scanner(state)
            mres, ignore, callback = scanner
            for mre in mres:
                m = mre.match(text, pos)
                if m:
                    break
            else:  # nothing matches: Lark's lexer raises its error
                lexer_state = LexerThread.from_text(self.contextual, text).state
                ctr = lexer_state.line_ctr
                ctr.char_pos, ctr.line, ctr.column, ctr.line_start_pos = pos, line, pos - line_start + 1, line_start
                self._state_token(lexer_state, state_stack)
                raise AssertionError("Lark's lexer read a token where its expression matched none")
            value, kind = m.group(), m.lastgroup
            if kind in ignore:
                if "\n" in value:
                    line += value.count("\n")
                    line_start = pos + value.rindex("\n") + 1
                pos += len(value)
                continue
            if kind in callback:  # NAME -> a keyword this state takes (Lark's UnlessCallback)
                key = (callback[kind], value)
                if key not in retyped:
                    retyped[key] = callback[kind](Token(kind, value, pos, line, pos - line_start + 1)).type
                kind = retyped[key]
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
                    while indent < indent_level[-1]:
                        indent_level.pop()
                        yield borrow(dedent_type, indent_str, token)
                    if indent != indent_level[-1]:
                        raise DedentError(f"Unexpected dedent to column {indent}. Expected dedent to "
                                          f"{indent_level[-1]}")
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
        lexer = self.contextual.lexers[state]
        scanner = lexer.scanner  # built (its expressions compiled) on first use, as Lark does
        self.scanners[state] = (tuple(scanner._mres), lexer.ignore_types, lexer.callback)
        return self.scanners[state]

    def _state_token(self, lexer_state, state_stack):
        """One token read by Lark's lexer for the parser's state, or Lark's error (ContextualLexer.lex)."""
        from lark.exceptions import UnexpectedCharacters, UnexpectedToken

        try:
            return self.contextual.lexers[state_stack[-1]].next_token(lexer_state, state_stack)
        except UnexpectedCharacters as e:
            try:
                token = self.root.next_token(lexer_state, state_stack)
                raise UnexpectedToken(token, e.allowed, state=state_stack, terminals_by_name=self.root.terminals_by_name)
            except UnexpectedCharacters:
                raise e from None

    def run(self, text: str, start: str, context):
        """(the value of ``text`` from ``start``, the first error a handler raised or None)."""
        from lark.exceptions import UnexpectedToken
        from lark.lexer import Token

        table = self.table
        units = self.units.setdefault(start, {})
        end_state = self.end_states[start]
        state_stack = [self.start_states[start]]
        value_stack: list = []
        meta_stack: list = []  # the first token of each value's text (None: matched nothing)
        failed = None
        token = None
        tokens = self._lex(text, state_stack)
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
                    expected = {s for s in table[state_stack[-1]] if s.isupper()}
                    raise UnexpectedToken(token, expected, state=state_stack, interactive_parser=None) from None
                if action.__class__ is int:  # shift
                    state_stack.append(action)
                    value_stack.append(token)
                    meta_stack.append(token)
                    break
                size, origin, handler, keep, trailing, lone = action
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
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
    from lark.indenter import DedentError

    try:
        yield
    except UnexpectedCharacters as e:
        raise GradcliSyntaxError(f"unexpected character {text[e.pos_in_stream]!r}" if e.pos_in_stream is not None
                                 and e.pos_in_stream < len(text) else "unexpected character",
                                 line=e.line, column=e.column, source=text, filename=filename) from None
    except UnexpectedToken as e:
        tok = e.token
        if tok.type == "$END" or tok.type == "_DEDENT" and not str(tok).strip():
            line, col = _end_position(text)
            what = "unexpected end of input"
        elif tok.type == "_NEWLINE":
            line, col = tok.line, tok.column
            what = "unexpected end of line"
        elif tok.type == "_INDENT":
            line, col = tok.line, tok.column
            what = "unexpected indent"
        else:
            line, col = tok.line, tok.column
            what = f"invalid syntax: unexpected {str(tok)!r}"
        unsupported = _unsupported_statement(text, tok.line)
        if unsupported is not None:
            raise GradcliSyntaxError(unsupported[0], line=tok.line, column=unsupported[1], source=text,
                                     filename=filename) from None
        raise GradcliSyntaxError(what, line=line, column=col, source=text, filename=filename,
                                 hint=_expected_hint(e.expected)) from None
    except UnexpectedEOF as e:
        line, col = _end_position(text)
        raise GradcliSyntaxError("unexpected end of input", line=line, column=col, source=text, filename=filename,
                                 hint=_expected_hint(e.expected)) from None
    except InputLimitError as e:  # raised while lexing (brackets nested too deeply)
        e.source, e.filename = text, filename
        raise
    except DedentError as e:
        raise GradcliSyntaxError(f"unindent does not match any outer indentation level ({e})", source=text,
                                 filename=filename) from None
    except UnexpectedInput as e:  # any other Lark parse failure
        raise GradcliSyntaxError("invalid syntax", line=getattr(e, "line", None), column=getattr(e, "column", None),
                                 source=text, filename=filename) from None


def _end_position(text: str):
    lines = text.rstrip("\n").split("\n")
    return len(lines), len(lines[-1]) + 1
