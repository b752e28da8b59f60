"""The interactive session (``gradcli repl``, and ``gradcli`` with no command on a terminal).

:mod:`.core` holds the logic (variables, session commands, completeness; ``:grad``, ``:graph``, ``:jacobian`` and
``:hessian`` are jobs of the application pipeline, :mod:`gradcli.app.jobs`), :mod:`.app` the prompt_toolkit front
end (imported only when a session starts on a terminal), :mod:`.script` the line-by-line run of standard input that
is not a terminal.
"""

from __future__ import annotations

import sys

from ...engine.lazy import lazy

limits = lazy("gradcli.engine.limits")
prompt_app = lazy("gradcli.frontends.session.app")  # prompt_toolkit: only on a terminal
script = lazy("gradcli.frontends.session.script")


def start(*, dtype: str = "float32", format: str = "table", stdin=None, stdout=None, stderr=None) -> int:
    """Run a session on the given streams (default: the process's); returns the exit code.

    On a terminal: prompt_toolkit's session (:func:`gradcli.frontends.session.app.interact`), exit code 0 at Ctrl-D or
    ``:quit``. Otherwise: the lines of standard input, without prompts or colours; the run stops at the first
    error, as ``python`` reading a script from a pipe does, with that error's exit code (1 evaluation, 2 bad
    input); 0 if none.
    """
    limits.disarm_time()  # the process's time limit (gradcli's guard) would end a session: it bounds each entry
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    if stdin.isatty() and stdout.isatty():
        return prompt_app.interact(dtype=dtype, format=format)
    return script.run_script(stdin, stdout, stderr, dtype=dtype, format=format)
