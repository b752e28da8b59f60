"""Shared test fixtures: every test runs in a fresh run context (float32 default dtype, default limits, grad
mode on, anomaly mode off, its own random generator) with numpy's warnings off (as the CLI runs), so that
nothing a test sets reaches the next one."""

import numpy as np
import pytest

from gradcli.engine import limits
from gradcli.engine.context import RunContext
from helpers import TORCH_REASON


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
