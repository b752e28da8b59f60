"""The session in a real pseudo-terminal (pexpect): the prompt, continuation lines, completion, history (in a
temporary XDG_STATE_HOME), Ctrl-R, Ctrl-C and Ctrl-D, as a user at a terminal types them."""

import os
import signal
import sys
import time

import pytest

pexpect = pytest.importorskip("pexpect")
pytest.importorskip("prompt_toolkit")

TIMEOUT = 600  # a hang guard, not a speed check: a loaded machine is many times slower


def _as_a_shell_starts_it():
    # A shell runs a command typed at its prompt with Ctrl-C's signal at its default; the test run itself may have
    # been started with SIGINT ignored (a background job of a script), which the session would inherit, and then
    # Python, as its own REPL does, leaves Ctrl-C ignored.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spawn(tmp_path, *args):
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state"), NO_COLOR="1", TERM="xterm",
               PROMPT_TOOLKIT_NO_CPR="1", COLUMNS="100", LINES="40")
    child = pexpect.spawn(sys.executable, ["-m", "gradcli", *args], env=env, encoding="utf-8",
                          timeout=TIMEOUT, dimensions=(40, 100), preexec_fn=_as_a_shell_starts_it)
    child.expect_exact(">>>")
    return child


def sync(child):
    """Wait until the session has run everything sent so far ("42" is never in the echo of the line)."""
    child.sendline("print(6 * 7)")
    child.expect_exact("42")
    child.expect_exact(">>>")


def test_gradcli_without_a_command_opens_the_session(tmp_path):
    child = spawn(tmp_path)
    child.sendline("x = tensor([1., 2.], requires_grad=True)")
    child.expect_exact(">>>")
    child.sendline("(x * 3).sum()")
    child.expect_exact("tensor(9., grad_fn=<SumBackward0>)")
    child.expect_exact(">>>")
    child.sendeof()  # Ctrl-D exits
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_continuation_completion_history_and_keys(tmp_path):
    child = spawn(tmp_path, "repl")
    child.sendline("weights = tensor([0., 1.], requires_grad=True)")
    child.expect_exact(">>>")
    # a block: the parser asks for more, with the continuation prompt
    child.sendline("for i in range(2):")
    child.expect_exact("...")
    child.sendline("print(i + 40)")
    child.expect_exact("...")
    child.sendline("")
    child.expect_exact("40")
    child.expect_exact("41")
    child.expect_exact(">>>")
    # completion: a variable, then a method after the dot
    sync(child)
    child.send("weig\t")
    time.sleep(0.5)  # prompt_toolkit completes in the background: let it finish before typing on
    child.send(".sigmoi\t")
    time.sleep(0.5)
    child.sendline("()")  # "weights.sigmoid()" only if both completions happened
    child.expect_exact("tensor([0.5000, 0.7311], grad_fn=<SigmoidBackward0>)")
    child.expect_exact(">>>")
    # Ctrl-C interrupts a running computation and keeps the session (sent once the loop says it runs: a Ctrl-C
    # that arrives while the session still reads the block is a key for the prompt, not an interrupt)
    child.sendline("n = 0")
    child.expect_exact(">>>")
    child.sendline("while True:")
    child.expect_exact("...")
    child.sendline("n += 1")
    child.expect_exact("...")
    child.sendline("if n == 100: print('loop' + 'ing')")
    child.expect_exact("...")
    child.sendline("")
    child.expect_exact("looping")
    child.sendintr()
    child.expect_exact("KeyboardInterrupt")
    child.expect_exact(">>>")
    # Ctrl-C cancels the line being typed
    child.send("this line is cancelled")
    child.sendintr()
    child.expect_exact(">>>")
    child.sendline("weights.sum()")
    child.expect_exact("tensor(1., grad_fn=<SumBackward0>)")
    child.expect_exact(">>>")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    history = (tmp_path / "state" / "gradcli" / "history").read_text()
    assert "weights.sum()" in history and "print(i + 40)" in history

    # a new session: the up arrow recalls the last line, Ctrl-R searches the history
    child = spawn(tmp_path, "repl")
    child.sendline("weights = tensor([0., 1.], requires_grad=True)")
    child.expect_exact(">>>")
    sync(child)
    child.send("\x12")  # Ctrl-R
    child.send("sigmoid")
    child.expect_exact("sigmoid")
    time.sleep(0.3)
    child.send("\r")  # accepts the found line, Enter runs it
    time.sleep(0.3)
    child.send("\r")
    child.expect_exact("tensor([0.5000, 0.7311], grad_fn=<SigmoidBackward0>)")
    child.expect_exact(">>>")
    child.send("\x1b[A")  # up arrow: the line just run
    time.sleep(0.3)
    child.send("\r")
    child.expect_exact("tensor([0.5000, 0.7311], grad_fn=<SigmoidBackward0>)")
    child.expect_exact(">>>")
    child.sendline(":quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
