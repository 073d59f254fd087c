"""Shared fixtures and the skipping rules for GPU and browser tests."""

import shutil

import pytest

import tfnb as tf
from tfnb.runtime.devices import gpu_count


def pytest_collection_modifyitems(config, items):
    """Skips `gpu` tests without a CUDA device and `browser` tests without Chromium, saying why."""
    no_gpu = pytest.mark.skip(reason="no CUDA device visible to CuPy (install the gpu extra on a GPU machine)")
    no_browser = pytest.mark.skip(reason="Chromium not found (.ci/run installs Debian's chromium)")
    has_gpu = gpu_count() > 0
    has_browser = shutil.which("chromium") is not None
    for item in items:
        if "gpu" in item.keywords and not has_gpu:
            item.add_marker(no_gpu)
        if "browser" in item.keywords and not has_browser:
            item.add_marker(no_browser)


@pytest.fixture(autouse=True)
def fresh_graph():
    """Each test starts from an empty default graph."""
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()
