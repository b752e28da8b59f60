"""Loading the Lark grammar (``grammars/gradcli.lark``) and parsing text into trees.

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
from functools import lru_cache
from pathlib import Path

from ..errors import GradcliSyntaxError, InputLimitError

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
                    err = limits.exceeded("nesting", "brackets nest too deeply here")
                    err.line, err.column = token.line, token.column
                    raise err
                yield token

    return Lark(grammar_path().read_text(encoding="utf-8"), parser="lalr", postlex=_Indenter(),
                start=["file_input", "spec_input"], propagate_positions=True, maybe_placeholders=True,
                cache=cache_path() or False)


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
    """Parse ``text`` into a Lark tree.

    Args:
        text: the program (or, with ``start="spec_input"``, one expression).
        start: "file_input" or "spec_input".
        filename: shown in error messages.

    Raises:
        GradcliSyntaxError: with line, column, the source line and what was expected.
        InputLimitError: for text longer than the ``chars`` limit (checked before parsing).
    """
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
    from lark.indenter import DedentError

    from .. import limits

    limits.check_source(text, filename)
    if not text.endswith("\n"):
        text += "\n"
    try:
        return parser().parse(text, start=start)
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
