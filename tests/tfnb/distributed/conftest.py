"""A local cluster shared by the distributed tests: one Dask scheduler and a worker process per task, on 127.0.0.1.

Every test starts with the tasks' resource containers cleared (`tf.Session.reset`), so no variable outlives it.
"""

import pytest

pytest.importorskip("distributed", reason="needs Dask distributed (pip install 'tfnb[distributed]')")

import tfnb as tf

CLUSTER = {"ps": ["localhost:0"] * 2, "worker": ["localhost:0"] * 3}


@pytest.fixture(scope="module")
def server():
    """A local cluster of two ps and three worker tasks, stopped when the tests end."""
    with tf.train.Server(tf.train.ClusterSpec(CLUSTER)) as started:
        yield started


@pytest.fixture
def target(server):
    """The shared cluster's session target, its tasks' containers cleared before and after the test."""
    tf.Session.reset(server.target)
    yield server.target
    tf.Session.reset(server.target)
