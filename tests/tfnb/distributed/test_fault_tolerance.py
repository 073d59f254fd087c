"""Fault tolerance (OSDI paper, section 4.3): a lost task fails the step with UnavailableError naming it, its
nanny starts it again, and MonitoredTrainingSession goes on from the latest checkpoint, within seconds of each kill.

Each test starts its own cluster, whose tasks it kills; the one that waits for Dask's heartbeats takes seconds and
runs when TFNB_TEST_SLOW=1 (`make test` sets it).
"""

import os
import signal
import time

import dask
import numpy as np
import pytest

import tfnb as tf

PS0 = "/job:ps/replica:0/task:0"
WORKER0 = "/job:worker/replica:0/task:0"
WORKER_TTL_S = 2   # Dask counts a task lost after this long without a heartbeat (at least 10 heartbeats: ~5 s)


@pytest.fixture
def cluster():
    """A cluster of its own: one ps and one worker task."""
    spec = tf.train.ClusterSpec({"ps": ["localhost:0"], "worker": ["localhost:0"]})
    with tf.train.Server(spec, worker_ttl_s=WORKER_TTL_S) as server:
        yield server


def kill(server, task: str, signal_number: int = signal.SIGKILL) -> None:
    os.kill(server.cluster.worker_pids()[task], signal_number)


def two_task_step():
    with tf.device("/job:ps/task:0"):
        w = tf.Variable([1.0, 2.0], name="w")
    with tf.device("/job:worker/task:0"):
        total = tf.reduce_sum(w * 3.0)
    return w, total


def linear_regression(spec):
    """A model to train on `spec`'s cluster: its input, global step, loss and train op."""
    with tf.device(tf.train.replica_device_setter(cluster=spec)):
        x = tf.placeholder(tf.float32, [None, 2])
        w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - tf.matmul(x, [[2.0], [-1.0]])))
        step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return x, w, step, loss, train


def train_to(cluster, model, killer, last_step: int, directory, save_steps: int) -> tuple:
    """Trains `model` (linear_regression's) to `last_step` in a MonitoredTrainingSession with `killer` among its
    hooks, checkpointing every `save_steps` steps to `directory`; the final (step, loss)."""
    x, _, step, loss, train = model
    features = np.random.RandomState(0).randn(16, 2).astype(np.float32)
    hooks = [killer, tf.train.StopAtStepHook(last_step=last_step)]
    with tf.train.MonitoredTrainingSession(cluster.target, checkpoint_dir=str(directory),
                                           save_checkpoint_steps=save_steps, hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(train, {x: features})
        return tuple(sess.run([step, loss], {x: features}))


def checkpoint_step(path: str | None) -> int:
    return int(path.rpartition("-")[2]) if path else 0


def test_a_killed_task_fails_the_step_with_unavailable_naming_it(cluster):
    w, total = two_task_step()
    with tf.Session(cluster.target) as sess:
        sess.run(w.initializer)
        assert sess.run(total) == 9.0
        kill(cluster, PS0)
        with pytest.raises(tf.errors.UnavailableError, match=f"Task {PS0} is unavailable"):
            sess.run(total)
    with tf.Session(cluster.target) as sess:   # waits for the nanny to start the task again: its state is gone
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value w"):
            sess.run(total)


def _environment_of(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/environ", "rb") as environ:
        return dict(entry.decode().partition("=")[::2] for entry in environ.read().split(b"\0") if entry)


@pytest.mark.skipif(not os.path.exists("/proc/self/environ"), reason="reads a worker's environment from /proc")
def test_the_cluster_leaves_this_process_environment_as_it_found_it(monkeypatch):
    """Dask's nannies set OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1, MALLOC_TRIM_THRESHOLD_ and more in the process
    that starts them, before each worker they spawn: processes started from it afterwards must not inherit them (a
    benchmark after a cluster ran PyTorch on one thread). The workers get them, also when started again."""
    names = [*dask.config.get("distributed.nanny.pre-spawn-environ"), "PYTHONHASHSEED"]
    for name in names:
        monkeypatch.delenv(name, raising=False)
    spec = tf.train.ClusterSpec({"ps": ["localhost:0"], "worker": ["localhost:0"]})
    with tf.train.Server(spec) as server:
        assert [name for name in names if name in os.environ] == []
        worker = _environment_of(server.cluster.worker_pids()[PS0])
        assert worker["OMP_NUM_THREADS"] == "1"
        assert "MALLOC_TRIM_THRESHOLD_" not in worker   # kernels' fresh arrays would fault their pages in each step
        w, total = two_task_step()
        kill(server, PS0)
        with tf.Session(server.target) as sess:   # waits for the nanny to start the task again
            with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value w"):
                sess.run(total)
        # The task answers before its nanny's start has ended, and only then are the variables put back.
        deadline = time.monotonic() + 10
        while any(name in os.environ for name in names) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [name for name in names if name in os.environ] == []
        assert _environment_of(server.cluster.worker_pids()[PS0])["OMP_NUM_THREADS"] == "1"


def test_a_task_that_just_died_but_is_still_listed_costs_seconds_not_a_timeout(cluster, monkeypatch):
    from tfnb.distributed.dask_backend import DaskCluster
    w, total = two_task_step()
    sess = tf.Session(cluster.target)
    sess.run(w.initializer)
    listed = cluster.cluster.tasks()
    kill(cluster, PS0)
    with pytest.raises(tf.errors.UnavailableError):
        sess.run(total)
    stale = [listed] * 3   # the scheduler has not heard of the death yet: closing and the next session's first look
    monkeypatch.setattr(DaskCluster, "tasks", lambda self, tasks=DaskCluster.tasks: stale.pop() if stale else
                        tasks(self))
    started = time.monotonic()
    sess.close()                                     # tells the tasks to forget it, the dead one included
    with tf.Session(cluster.target) as again:        # finds the dead address, then the restarted task
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value w"):
            again.run(total)
    assert not stale and time.monotonic() - started < 10


@pytest.mark.slow
def test_a_task_that_stops_answering_is_lost_once_its_heartbeats_stop(cluster):
    w, total = two_task_step()
    with tf.Session(cluster.target) as sess:
        sess.run(w.initializer)
        assert sess.run(total) == 9.0
        kill(cluster, PS0, signal.SIGSTOP)   # alive, connected, silent: only the missing heartbeats tell
        with pytest.raises(tf.errors.UnavailableError, match=f"Task {PS0} is unavailable"):
            sess.run(total)


def test_training_goes_on_from_the_latest_checkpoint_after_a_task_is_killed(cluster, tmp_path):
    last_step, kill_at = 30, 12

    class KillThePsAt(tf.train.SessionRunHook):
        """Kills the ps task's process once, right after step `kill_at`; counts the sessions made."""

        def __init__(self):
            self.killed, self.sessions, self.restored_at = False, 0, []

        def after_create_session(self, session, coord):
            self.sessions += 1
            self.restored_at.append(int(session.run(step)))

        def after_run(self, run_context, run_values):
            if not self.killed and int(run_context.session.run(step)) >= kill_at:
                self.killed = True
                kill(cluster, PS0)

    model = linear_regression(cluster.cluster_spec)
    step = model[2]
    killer = KillThePsAt()
    final_step, _ = train_to(cluster, model, killer, last_step, tmp_path, save_steps=5)
    assert killer.sessions == 2 and killer.restored_at == [0, 10]   # the second session began at checkpoint 10
    assert final_step == last_step
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path.endswith(f"model.ckpt-{last_step}")
    for path in state.all_model_checkpoint_paths:   # every checkpoint kept is whole and readable
        assert tf.train.load_variable(path, "w").shape == (2, 1)
    assert np.abs(tf.train.load_variable(state.model_checkpoint_path, "w").ravel() - [2, -1]).max() < 0.2


@pytest.mark.slow
def test_training_survives_five_killed_workers_each_recovered_within_seconds(cluster, tmp_path):
    kills, kill_every, last_step, bound_s = 5, 6, 40, 10.0

    class KillTheWorker(tf.train.SessionRunHook):
        """Kills the worker task's process with SIGKILL every `kill_every` steps, `kills` times; notes the latest
        checkpoint at each kill, the step and variables each new session began with beside the latest checkpoint's,
        and the seconds from each kill to the next step completed."""

        def __init__(self):
            self.killed_at, self.latest_at_kill, self.recovery_s = [], [], []
            self.restored_at, self.latest_at_restore, self.restored_w, self.checkpoint_w = [], [], [], []
            self.next_kill, self.pending = kill_every, None

        def after_create_session(self, session, coord):   # runs before the saver hook writes its first checkpoint
            latest = tf.train.latest_checkpoint(str(tmp_path))
            self.latest_at_restore.append(checkpoint_step(latest))
            self.checkpoint_w.append(tf.train.load_variable(latest, "w") if latest else np.zeros((2, 1)))
            self.restored_at.append(int(session.run(step)))
            self.restored_w.append(session.run(w))

        def after_run(self, run_context, run_values):
            if self.pending is not None:
                self.recovery_s.append(time.monotonic() - self.pending)
                self.pending = None
            now = int(run_context.session.run(step))
            if len(self.killed_at) < kills and now >= self.next_kill:
                self.latest_at_kill.append(checkpoint_step(tf.train.latest_checkpoint(str(tmp_path))))
                self.killed_at.append(now)
                kill(cluster, WORKER0)
                self.pending, self.next_kill = time.monotonic(), now + kill_every

    model = linear_regression(cluster.cluster_spec)
    _, w, step, _, _ = model
    killer = KillTheWorker()
    final_step, final_loss = train_to(cluster, model, killer, last_step, tmp_path, save_steps=4)
    assert len(killer.killed_at) == kills and len(killer.recovery_s) == kills
    assert max(killer.recovery_s) < bound_s, killer.recovery_s
    # each new session began at the latest checkpoint, with its variables; none written before a kill was lost
    assert len(killer.restored_at) == kills + 1 and killer.restored_at == killer.latest_at_restore
    assert all(0 < at_kill <= restored for at_kill, restored in zip(killer.latest_at_kill, killer.restored_at[1:]))
    for restored, saved in zip(killer.restored_w, killer.checkpoint_w):
        np.testing.assert_array_equal(restored, saved)
    assert final_step == last_step and final_loss < 0.05
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path.endswith(f"model.ckpt-{last_step}")
    for path in state.all_model_checkpoint_paths:   # every checkpoint kept is whole: its step is the one it names
        assert tf.train.load_variable(path, "global_step") == checkpoint_step(path)
        assert tf.train.load_variable(path, "w").shape == (2, 1)
