"""Shared test fixtures: every test starts with float32 as the default dtype and numpy's warnings off (as the
CLI runs)."""

import numpy as np
import pytest

import gradcli as G


@pytest.fixture
def torch():
    """The torch module (the test is skipped where torch is not installed; CI installs it)."""
    return pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _default_dtype():
    G.set_default_dtype(G.float32)
    old = np.seterr(all="ignore")
    yield
    np.seterr(**old)
    G.set_default_dtype(G.float32)


@pytest.fixture(autouse=True)
def _default_limits():
    """Every test starts and ends with the default limits (a CLI test may have changed them)."""
    from gradcli import limits

    limits.current = limits.Limits()
    yield
    limits.current = limits.Limits()
    limits.end_run()
