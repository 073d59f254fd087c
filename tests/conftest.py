"""Shared fixtures and the skipping rules for GPU, browser and slow tests."""

import os
import shutil

import pytest

import tfnb as tf
from tfnb.runtime.devices import gpu_count


def pytest_collection_modifyitems(config, items):
    """Skips `gpu` tests without a CUDA device, `browser` tests without Chromium and `slow` tests unless
    TFNB_TEST_SLOW=1 (`make test` sets it), saying why."""
    no_gpu = pytest.mark.skip(reason="no CUDA device visible to CuPy (install the gpu extra on a GPU machine)")
    no_browser = pytest.mark.skip(reason="Chromium not found (.ci/run installs Debian's chromium)")
    not_slow = pytest.mark.skip(reason="slow (waits for Dask's heartbeats, trains in several processes, builds a "
                                       "package): `make test` runs it (TFNB_TEST_SLOW=1)")
    has_gpu = gpu_count() > 0
    has_browser = shutil.which("chromium") is not None
    runs_slow = os.environ.get("TFNB_TEST_SLOW") == "1"
    for item in items:
        if "gpu" in item.keywords and not has_gpu:
            item.add_marker(no_gpu)
        if "browser" in item.keywords and not has_browser:
            item.add_marker(no_browser)
        if "slow" in item.keywords and not runs_slow:
            item.add_marker(not_slow)


@pytest.fixture(autouse=True)
def fresh_graph():
    """Each test starts from an empty default graph."""
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()
