"""A TF1 distributed program, one process per task (distributed_digits.py, after TF1's distributed MNIST example):
replica_device_setter, SyncReplicasOptimizer, a chief that initializes and checkpoints. It trains the bundled
digits as well as the same model does in one process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tfnb as tf

distributed = pytest.importorskip("distributed")

PROGRAM = Path(__file__).with_name("distributed_digits.py")
RUN_S = 300   # how long the processes may take at most: a failure ends the test instead of hanging it
HOSTS = ["--ps_hosts=127.0.0.1:0", "--worker_hosts=127.0.0.1:0,127.0.0.1:0", "--train_steps=150"]


def start(arguments: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(PROGRAM), *HOSTS, *arguments], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def result_of(process: subprocess.Popen) -> dict:
    out, err = process.communicate(timeout=RUN_S)
    assert process.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.slow
def test_tf1_between_graph_replication_trains_the_digits_as_one_process_does(tmp_path):
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp", host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0") as scheduler:
        env = {**os.environ, "TFNB_DASK_SCHEDULER": scheduler.scheduler_address}
        ps = start(["--job_name=ps", "--task_index=0"], env)
        try:
            workers = [start(["--job_name=worker", f"--task_index={task}", f"--checkpoint_dir={tmp_path}"], env)
                       for task in range(2)]
            replicas = [result_of(worker) for worker in workers]
        finally:
            ps.terminate()
            ps.wait(timeout=RUN_S)
    alone = result_of(start([], dict(os.environ)))
    assert [r["task"] for r in replicas] == [0, 1]
    assert all(r["global_step"] >= 150 for r in replicas)
    assert all(r["local_steps"] > 0 for r in replicas)       # both replicas contributed gradients
    assert alone["accuracy"] > 0.9
    for replica in replicas:
        assert abs(replica["accuracy"] - alone["accuracy"]) < 0.03
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-150")   # the chief's last checkpoint
