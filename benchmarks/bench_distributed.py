"""Distributed execution on a local Dask cluster (one worker process per task, on 127.0.0.1).

- a 4 MiB tensor made on one task and read on another: tfnb's Send/Recv against Dask moving the same array
  between two tasks pinned to the same workers by their resources (the target: tfnb ≤ 1.2x Dask);
- a parameter-server round: two workers push the gradient of a 1M-float parameter to the ps task, which applies
  both, and pull the parameter back; against the same exchange written as Dask tasks;
- backup workers (OSDI paper, figure 8 in miniature): synchronous steps per second with replicas of which one at
  random is slow in each round, aggregating every replica (no backup) or all but one (one backup);
- recovery: from killing the ps task's process to the next step done, restored from the checkpoint.

Run: `python -m benchmarks.bench_distributed` (needs the distributed extra).
"""

from __future__ import annotations

import importlib.util
import os
import random
import signal
import statistics
import tempfile
import threading
import time

import numpy as np

import tfnb
from benchmarks.harness import interleaved_medians, report

FLOATS = 1 << 20                 # 4 MiB of float32
SLOW_S = 0.05                    # how long the slow replica of a round takes longer
SYNC_STEPS = 30
RECOVERIES = 3


def cluster_spec(workers: int) -> tfnb.train.ClusterSpec:
    return tfnb.train.ClusterSpec({"ps": ["localhost:0"], "worker": ["localhost:0"] * workers})


# -- a tensor from one task to another -----------------------------------------------------------------


def make_array(size: int, value: float) -> np.ndarray:
    return np.full(size, value, np.float32)


def first(array: np.ndarray) -> np.ndarray:
    return array[:1]


def send_recv(server) -> tuple:
    """A session whose step makes a 4 MiB tensor on worker 1 and reads its first element on worker 0."""
    graph = tfnb.Graph()
    with graph.as_default():
        value = tfnb.placeholder(tfnb.float32, [], name="value")
        with tfnb.device("/job:worker/task:1"):
            made = tfnb.fill([FLOATS], value)
        with tfnb.device("/job:worker/task:0"):
            head = made[:1]
    return tfnb.Session(server.target, graph=graph), head, value


def dask_transfer(client):
    """The same with Dask: a task on worker 1 makes the array, one on worker 0 reads it (Dask moves it between them)."""
    def run():
        made = client.submit(make_array, FLOATS, 1.0, resources={"/job:worker/task:1": 1}, pure=False)
        return client.submit(first, made, resources={"/job:worker/task:0": 1}, pure=False).result()
    return run


# -- a parameter-server round ----------------------------------------------------------------------------


def ps_round(server) -> tuple:
    """Two workers each push a gradient of a 1M-float parameter to the ps, which applies both; both read it back."""
    graph = tfnb.Graph()
    with graph.as_default():
        rate = tfnb.placeholder(tfnb.float32, [], name="rate")
        with tfnb.device("/job:ps/task:0"):
            parameter = tfnb.Variable(tfnb.zeros([FLOATS]), name="parameter")
        updates = []
        for task in range(2):
            with tfnb.device(f"/job:worker/task:{task}"):
                gradient = tfnb.fill([FLOATS], rate)
            updates.append(parameter.assign_sub(gradient, read_value=False))
        pulled = []
        with tfnb.control_dependencies(updates):
            for task in range(2):
                with tfnb.device(f"/job:worker/task:{task}"):
                    pulled.append(tfnb.identity(parameter.read_value())[:1])
    sess = tfnb.Session(server.target, graph=graph)
    sess.run(parameter.initializer)
    return sess, pulled, rate


def subtract(parameter: np.ndarray, *gradients: np.ndarray) -> np.ndarray:
    return parameter - sum(gradients)


def dask_round(client):
    """The same round as Dask tasks: gradients made on the workers, applied on the ps, read back on the workers."""
    workers = [{f"/job:worker/task:{task}": 1} for task in range(2)]
    parameter = [client.submit(make_array, FLOATS, 0.0, resources={"/job:ps/task:0": 1}, pure=False)]

    def run():
        gradients = [client.submit(make_array, FLOATS, 0.001, resources=where, pure=False) for where in workers]
        parameter[0] = client.submit(subtract, parameter[0], *gradients, resources={"/job:ps/task:0": 1}, pure=False)
        return client.gather([client.submit(first, parameter[0], resources=where, pure=False) for where in workers])
    return run


# -- backup workers ----------------------------------------------------------------------------------------


def sync_steps_per_second(server, replicas: int, aggregated: int) -> float:
    """Global steps per second of synchronous training with `replicas` workers aggregating `aggregated` gradients,
    one replica at random slower by SLOW_S in each round."""
    tfnb.Session.reset(server.target)
    started, finished = threading.Barrier(replicas), {}
    slow_in_round = random.Random(0)
    slow_of = [slow_in_round.randrange(replicas) for _ in range(10 * SYNC_STEPS)]

    def replica(task: int) -> None:
        graph = tfnb.Graph()
        with graph.as_default():
            setter = tfnb.train.replica_device_setter(cluster=server.cluster_spec,
                                                      worker_device=f"/job:worker/task:{task}")
            with tfnb.device(setter):
                w = tfnb.Variable(tfnb.zeros([256, 256]), name="w")
                loss = tfnb.reduce_sum(tfnb.square(w - 1.0))
                step = tfnb.train.get_or_create_global_step()
                optimizer = tfnb.train.SyncReplicasOptimizer(tfnb.train.GradientDescentOptimizer(0.01), aggregated,
                                                             replicas)
                train = optimizer.minimize(loss, global_step=step)
            hooks = [optimizer.make_session_run_hook(task == 0), tfnb.train.StopAtStepHook(last_step=SYNC_STEPS)]
            # When the chief stops, so does its sync thread: a token each lets the replicas still waiting end.
            release = optimizer.get_init_tokens_op(replicas) if task == 0 else None
            target = f"{server.scheduler_address}/job:worker/task:{task}"
            with tfnb.train.MonitoredTrainingSession(target, is_chief=task == 0, hooks=hooks) as sess:
                started.wait()
                begin = time.perf_counter()
                local_step = 0
                while not sess.should_stop():
                    if slow_of[local_step % len(slow_of)] == task:
                        time.sleep(SLOW_S)
                    sess.run(train)
                    local_step += 1
                finished[task] = time.perf_counter() - begin
                if release is not None:
                    sess.run(release)

    threads = [threading.Thread(target=replica, args=(task,)) for task in range(replicas)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return SYNC_STEPS / finished[0]


# -- recovery --------------------------------------------------------------------------------------------


def recovery_seconds(server) -> list[float]:
    """From killing the ps task's process to the next step done by MonitoredTrainingSession, RECOVERIES times."""
    tfnb.Session.reset(server.target)
    durations, killed_at = [], []
    graph = tfnb.Graph()
    with graph.as_default():
        with tfnb.device(tfnb.train.replica_device_setter(cluster=server.cluster_spec)):
            w = tfnb.Variable(tfnb.zeros([1000]), name="w")
            step = tfnb.train.get_or_create_global_step()
            train = tfnb.train.GradientDescentOptimizer(0.1).minimize(tfnb.reduce_sum(tfnb.square(w)), global_step=step)

        class KillEveryTenSteps(tfnb.train.SessionRunHook):
            def after_run(self, run_context, run_values):
                if killed_at:
                    durations.append(time.perf_counter() - killed_at.pop())
                if len(durations) < RECOVERIES and int(run_context.session.run(step)) % 10 == 9:
                    pid = server.cluster.worker_pids()["/job:ps/replica:0/task:0"]
                    killed_at.append(time.perf_counter())
                    os.kill(pid, signal.SIGKILL)

        with tempfile.TemporaryDirectory() as directory:
            hooks = [KillEveryTenSteps()]
            with tfnb.train.MonitoredTrainingSession(server.target, checkpoint_dir=directory, hooks=hooks,
                                                     save_checkpoint_steps=5) as sess:
                while len(durations) < RECOVERIES:
                    sess.run(train)
    return durations


def main() -> None:
    if importlib.util.find_spec("distributed") is None:
        print("\ndistributed: skipped (pip install 'tfnb[distributed]')")
        return
    with tfnb.train.Server(cluster_spec(workers=3)) as server:
        client = server.cluster.client
        sess, head, value = send_recv(server)
        medians = interleaved_medians({"Dask task to task": dask_transfer(client),
                                       "tfnb Send/Recv": lambda: sess.run(head, {value: 1.0})}, rounds=9, number=5)
        report("a 4 MiB tensor from one task to another (per step)", medians, "Dask task to task", 1e-3, "ms",
               "tfnb ≤ 1.2x Dask")
        sess.close()
        sess, pulled, rate = ps_round(server)
        medians = interleaved_medians({"Dask tasks": dask_round(client),
                                       "tfnb": lambda: sess.run(pulled, {rate: 0.001})}, rounds=9, number=3)
        report("a ps round: 2 workers push a 1M-float gradient, pull the parameter (per round)", medians,
               "Dask tasks", 1e-3, "ms")
        sess.close()
        print("\nbackup workers: synchronous steps per second, one replica at random "
              f"{SLOW_S * 1000:.0f} ms slower in each round")
        for replicas, aggregated, label in ((2, 2, "no backup (2 of 2)"), (3, 2, "one backup (2 of 3)")):
            print(f"  {label:<28} {sync_steps_per_second(server, replicas, aggregated):8.1f} steps/s")
        durations = recovery_seconds(server)
        print(f"\nrecovery after the ps task's process is killed: median {statistics.median(durations):.2f} s "
              f"(of {', '.join(f'{d:.2f}' for d in durations)}): restart, restore the checkpoint, next step")


if __name__ == "__main__":
    main()
