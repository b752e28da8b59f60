"""Shared test fixtures: every test runs in a fresh run context (float32 default dtype, default limits, grad
mode on, anomaly mode off, its own random generator) with numpy's warnings off (as the CLI runs), so that
nothing a test sets reaches the next one."""

import os

import numpy as np
import pytest

from gradcli.engine import limits
from gradcli.engine.context import RunContext
from helpers import TORCH_REASON


#: Variables that a pytest-xdist worker process finds set to a terminal's size (80x24) although pytest's own process
#: has none (GNU readline exports them when it starts); the CLI reads COLUMNS for its tables' width.
_TERMINAL_SIZE = ("COLUMNS", "LINES")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist (in pytest's process, for each worker): the worker gets this process's COLUMNS and LINES."""
    node.workerinput["terminal_size_env"] = {name: os.environ.get(name) for name in _TERMINAL_SIZE}


def pytest_configure(config):
    """In a pytest-xdist worker: COLUMNS and LINES as in pytest's own process, so that a test sees the same
    environment with and without workers."""
    wanted = getattr(config, "workerinput", {}).get("terminal_size_env")
    for name, value in (wanted or {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture
def torch():
    """The torch module (the test is skipped where torch is not installed; CI installs it)."""
    return pytest.importorskip("torch", reason=TORCH_REASON)


@pytest.fixture(autouse=True)
def _fresh_context():
    old = np.seterr(all="ignore")
    try:
        with RunContext(limits=limits.Limits()):
            yield
    finally:
        np.seterr(**old)
