"""The session at a terminal, on prompt_toolkit (imported only here, when a session starts).

The prompt is ``>>> `` and ``... `` for the lines of an entry the parser finds incomplete (the next line starts
with the previous one's indentation, four more after a ``:``). History is kept in
``$XDG_STATE_HOME/gradcli/history`` (default ``~/.local/state/gradcli/history``; Ctrl-R searches it). Tab
completes session commands, variables, builtins and op names, and after a dot the attributes and methods the
language lets a program read on that object (:func:`attribute_names`). Colours come from the grammar's own
terminals (:class:`GrammarLexer`); ``NO_COLOR`` turns them off. Ctrl-C cancels the line being typed, or
interrupts a running computation (the variables stay as they were left); Ctrl-D (or ``:quit``) exits.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.history import FileHistory
from prompt_toolkit.lexers import Lexer
from prompt_toolkit.styles import Style

from ...engine import dtypes, graph
from ...engine.tensor import Tensor
from ...language import attributes, torch_names
from ...language.grammar import parser
from .core import COMMANDS, Session

PROMPT = ">>> "
CONTINUATION = "... "

STYLE = Style.from_dict({
    "keyword": "ansimagenta bold",
    "number": "ansicyan",
    "string": "ansigreen",
    "comment": "ansibrightblack italic",
    "builtin": "ansiblue",
    "operator": "ansiyellow",
    "command": "ansimagenta",
    "error": "ansired underline",
})


def history_path() -> Path:
    """``$XDG_STATE_HOME/gradcli/history`` (XDG base directory spec; ``~/.local/state`` when unset or relative)."""
    base = os.environ.get("XDG_STATE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "gradcli" / "history"


# ------------------------------------------------------------------------------------------------ lexer
def _keywords() -> dict:
    return {t.name for t in parser().terminals if t.pattern.type == "str" and t.pattern.value.isalpha()}


class GrammarLexer(Lexer):
    """Syntax highlighting from the grammar's terminals: each line is split by Lark's lexer of
    ``grammars/gradcli.lark`` (the parser's own, with ignored tokens kept), so what is coloured as a keyword, a
    number or a string is what the parser reads as one. Names of builtins and ops are coloured too; text the
    lexer cannot read is marked as an error from there on."""

    def __init__(self, names=()):
        self._parser = parser()
        try:  # the parser's lexer, keeping the ignored tokens (spaces) for exact offsets (Lark's own Lark.lex way)
            self._lexer = self._parser._build_lexer(True)
        except (AttributeError, TypeError):  # another Lark: no colours rather than no session
            self._lexer = None
        self._keywords = _keywords()
        self.names = set(names)

    def tokens(self, line: str) -> list:
        """``(style, text)`` fragments covering ``line`` exactly."""
        from lark.exceptions import UnexpectedInput
        from lark.lexer import LexerThread

        if line.lstrip().startswith(":"):
            head, _, rest = line.partition(" ")
            return [("class:command", head)] + ([("", " " + rest)] if _ else [])
        if self._lexer is None:
            return [("", line)]
        out, pos = [], 0
        try:
            for tok in LexerThread.from_text(self._lexer, line).lex(None):
                start = tok.start_pos
                if start > pos:
                    out.append(("", line[pos:start]))
                out.append((self._style(tok), str(tok)))
                pos = start + len(str(tok))
        except UnexpectedInput:
            pass
        if pos < len(line):
            out.append(("class:error", line[pos:]))
        return out

    def _style(self, tok) -> str:
        kind = tok.type
        if kind in self._keywords:
            return "class:keyword"
        if kind in ("INT", "FLOAT", "IMAG"):
            return "class:number"
        if kind in ("STRING", "FSTRING"):
            return "class:string"
        if kind == "_NEWLINE" and "#" in tok:
            return "class:comment"
        if kind == "NAME":
            return "class:builtin" if str(tok) in self.names else ""
        if kind.startswith("__") or kind.startswith("_"):
            return ""
        return "class:operator"

    def lex_document(self, document):
        lines = document.lines

        def get_line(lineno: int):
            return self.tokens(lines[lineno]) if lineno < len(lines) else []

        return get_line


# ----------------------------------------------------------------------------------------------- completer
_DOTTED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\.([A-Za-z0-9_]*)$")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


def attribute_names(obj) -> list[str]:
    """The names a program may read after ``obj.`` (the tables of :func:`gradcli.language.attributes.
    read_attribute`: a tensor's attributes and op-table methods, a module's members, ...), sorted. For a tensor
    and PyTorch's modules, only those PyTorch has too (:data:`gradcli.language.torch_names.MEMBERS`): the language
    accepts some names PyTorch lacks (``F.sort``), which a completion would teach as PyTorch's."""
    if isinstance(obj, Tensor):
        names = (set(attributes.TENSOR_ATTRS) | {"grad"} | set(attributes.METHODS)) & torch_names.MEMBERS["Tensor"]
    elif isinstance(obj, attributes.Namespace):
        names = set(obj.members)
        if obj.name in torch_names.MEMBERS:
            names &= torch_names.MEMBERS[obj.name]
    elif isinstance(obj, (graph.Node, graph.AccumulateGrad)):
        names = set(attributes.NODE_ATTRS)
    elif isinstance(obj, dtypes.DType):
        names = set(attributes.DTYPE_ATTRS)
    elif isinstance(obj, attributes.Size):
        names = set(attributes.SIZE_ATTRS)
    elif isinstance(obj, str):
        names = set(attributes.STR_METHODS)
    elif isinstance(obj, list):
        names = set(attributes.LIST_METHODS)
    elif isinstance(obj, dict):
        names = set(attributes.DICT_METHODS)
    elif isinstance(obj, set):
        names = set(attributes.SET_METHODS)
    else:
        names = set(getattr(type(obj), "_fields", ()) if isinstance(obj, tuple) else ())
    return sorted(n for n in names if not n.startswith("_"))


class SessionCompleter(Completer):
    """Tab completion: ``:commands`` at the start of a line, a file name after ``:save``/``:load``; after ``a.b.`` the attributes of that object
    (looked up name by name, as the program would read them: nothing is called); else the session's variables,
    the builtins (functions, ops, modules) and keywords."""

    def __init__(self, session: Session):
        self.session = session

    def get_completions(self, document, complete_event):
        text = document.text_before_cursor
        m = re.match(r"\s*:(save|load) +", text)
        if m:  # a file name
            from prompt_toolkit.completion import PathCompleter
            from prompt_toolkit.document import Document

            rest = text[m.end():]
            yield from PathCompleter(expanduser=True).get_completions(Document(rest, len(rest)), complete_event)
            return
        if text.lstrip().startswith(":") and " " not in text.strip():
            word = text.strip()
            for name in sorted(COMMANDS):
                if name.startswith(word):
                    yield Completion(name, start_position=-len(word))
            return
        m = _DOTTED.search(text)
        if m:
            obj = self._resolve(m.group(1))
            if obj is None:
                return
            prefix = m.group(2)
            for name in attribute_names(obj):
                if name.startswith(prefix):
                    yield Completion(name, start_position=-len(prefix))
            return
        m = _WORD.search(text)
        if not m:
            return
        prefix = m.group(0)
        interp = self.session.interp
        names = set(interp.globals) | set(interp.builtins) | {k for k in interp.modules if "." not in k}
        names |= {"True", "False", "None", "for", "while", "def", "return", "lambda", "import", "if", "else"}
        for name in sorted(names):
            if name.startswith(prefix) and not name.startswith("_"):
                yield Completion(name, start_position=-len(prefix))

    def _resolve(self, dotted: str):
        interp = self.session.interp
        first, *rest = dotted.split(".")
        if first in interp.globals:
            obj = interp.globals[first]
        elif first in interp.builtins:
            obj = interp.builtins[first]
        elif first in interp.modules:
            obj = interp.modules[first]
        else:
            return None
        for name in rest:
            try:
                obj = attributes.read_attribute(obj, name)
            except Exception:
                return None
        return obj


# ---------------------------------------------------------------------------------------------- the loop
def _indent_after(line: str) -> str:
    indent = line[: len(line) - len(line.lstrip())]
    return indent + "    " if line.rstrip().endswith(":") else indent


def interact(*, dtype: str = "float32", format: str = "table", input=None, output=None,
             history=None) -> int:
    """Run the session at the terminal until Ctrl-D or ``:quit``; returns 0.

    ``input``/``output`` (prompt_toolkit's) and ``history`` replace the terminal and the history file (tests).
    """
    color = not os.environ.get("NO_COLOR")
    # the answers are drawn for the terminal (its width); rich itself leaves colours out under NO_COLOR
    session = Session(write=_write, error=_error, dtype=dtype, format=format, color=output is None)
    if history is None:
        path = history_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            history = FileHistory(str(path))
        except OSError:
            history = None
    lexer = GrammarLexer(session.interp.builtins) if color else None
    prompt = PromptSession(history=history, completer=SessionCompleter(session), lexer=lexer,
                           style=STYLE if color else None, input=input, output=output,
                           complete_while_typing=False, enable_history_search=False,
                           prompt_continuation=CONTINUATION)  # the lines of a pasted block
    if output is None:
        sys.stdout.write("gradcli session: the language of gradcli grad/run; :help for the commands, "
                         "Ctrl-D exits.\n")
    buffer: list[str] = []
    while True:
        try:
            default = _indent_after(buffer[-1]) if buffer else ""
            line = prompt.prompt(CONTINUATION if buffer else PROMPT, default=default)
        except KeyboardInterrupt:
            buffer.clear()  # Ctrl-C cancels the entry being typed
            continue
        except EOFError:
            if buffer:
                buffer.clear()
                continue
            break
        buffer.append(line)
        text = "\n".join(buffer)
        if not session.is_complete(text):
            continue
        buffer.clear()
        try:
            outcome = session.execute(text)
        except KeyboardInterrupt:
            sys.stdout.flush()
            sys.stderr.write("KeyboardInterrupt\n")
            continue
        finally:
            sys.stdout.flush()
        if outcome.exit:
            break
    return 0


def _write(text: str) -> None:
    sys.stdout.write(text)


def _error(text: str) -> None:
    sys.stdout.flush()
    sys.stderr.write(text)
    sys.stderr.flush()
