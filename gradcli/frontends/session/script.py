"""The session reading standard input that is not a terminal (``printf 'x = 1\nx + 1\n' | gradcli repl``).

Lines are read one by one and gathered into entries exactly as at the prompt (the parser decides when an entry
is complete; a block ends at an empty line or at the next line that is not indented); values print as at the
prompt, without prompts or colours. The first error stops the run, as in ``python`` reading a script from a
pipe, and its exit code is the process's (1 evaluation error, 2 bad input); 0 otherwise.
"""

from __future__ import annotations

import re

from .core import Session, exit_code

# the clauses that go on with the compound statement above them (not a new statement)
_CLAUSE = re.compile(r"(else|elif|except|finally)\b")


def run_script(stdin, stdout, stderr, *, dtype: str = "float32", format: str = "table") -> int:
    """Run ``stdin``'s lines in a session writing to ``stdout``/``stderr``; returns the exit code."""

    def write(text):
        stdout.write(text)

    def error(text):
        stdout.flush()
        stderr.write(text)
        stderr.flush()

    session = Session(write=write, error=error, dtype=dtype, format=format, color=False)
    buffer: list[str] = []

    def flush_entry() -> int | None:
        text = "\n".join(buffer)
        buffer.clear()
        outcome = session.execute(text)
        if outcome.exit:
            return 0
        if outcome.code:
            return exit_code(outcome)
        return None

    for raw in stdin:
        line = raw.rstrip("\n").rstrip("\r")
        if (buffer and line and not line[0].isspace() and not _CLAUSE.match(line)
                and session.is_complete("\n".join(buffer) + "\n")):
            # a block followed by an unindented line: the block is complete (a script has no empty line to end it)
            code = flush_entry()
            if code is not None:
                return code
        buffer.append(line)
        if session.is_complete("\n".join(buffer)):
            code = flush_entry()
            if code is not None:
                return code
    if any(b.strip() for b in buffer):
        code = flush_entry()
        if code is not None:
            return code
    return 0
