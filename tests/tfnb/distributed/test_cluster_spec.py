"""ClusterSpec as TF1 has it (the facts checked against tensorflow.compat.v1), and task names."""

import pytest

import tfnb as tf
from tfnb.distributed.cluster_spec import task_name, task_of_resource, task_resource


def test_a_cluster_spec_lists_jobs_and_tasks_as_tf_does():
    cluster = tf.train.ClusterSpec({"worker": ["a:1", "b:2"], "ps": ["c:3"]})
    assert cluster.jobs == ["worker", "ps"]
    assert cluster.as_dict() == {"worker": ["a:1", "b:2"], "ps": ["c:3"]}
    assert cluster.num_tasks("worker") == 2 and cluster.task_indices("ps") == [0]
    assert cluster.task_address("worker", 1) == "b:2" and cluster.job_tasks("worker") == ["a:1", "b:2"]
    assert repr(cluster) == "ClusterSpec({'ps': ['c:3'], 'worker': ['a:1', 'b:2']})"
    assert cluster.task_names() == ["/job:worker/replica:0/task:0", "/job:worker/replica:0/task:1",
                                    "/job:ps/replica:0/task:0"]


def test_a_sparse_job_keeps_its_task_indices():
    cluster = tf.train.ClusterSpec({"worker": {1: "b:2", 3: "d:4"}})
    assert cluster.as_dict() == {"worker": {1: "b:2", 3: "d:4"}}
    assert cluster.job_tasks("worker") == [None, "b:2", None, "d:4"] and cluster.task_indices("worker") == [1, 3]


def test_a_cluster_spec_round_trips_through_its_cluster_def():
    cluster = tf.train.ClusterSpec({"worker": ["a:1", "b:2"], "ps": ["c:3"]})
    assert tf.train.ClusterSpec(cluster.as_cluster_def()) == cluster
    assert tf.train.ClusterSpec(cluster) == cluster
    assert not tf.train.ClusterSpec({})


def test_unknown_jobs_and_tasks_raise_value_errors_as_in_tf():
    cluster = tf.train.ClusterSpec({"ps": ["c:3"]})
    with pytest.raises(ValueError, match="No task with index 5 in job 'ps'"):
        cluster.task_address("ps", 5)
    with pytest.raises(ValueError, match="No such job in cluster: 'nope'"):
        cluster.num_tasks("nope")
    with pytest.raises(TypeError):
        tf.train.ClusterSpec(["a:1"])


def test_a_task_is_found_by_the_dask_resource_named_after_it():
    task = task_name("ps", 1)
    assert task == "/job:ps/replica:0/task:1"
    assert task_resource(task) == "/job:ps/task:1"
    assert task_of_resource(task_resource(task)) == task
    assert task_of_resource("GPU") is None and task_of_resource("/job:ps/task:0/device:CPU:0") is None
