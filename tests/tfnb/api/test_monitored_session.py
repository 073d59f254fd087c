"""MonitoredTrainingSession and its hooks: stop at a step, checkpoints, and a new session after a lost task."""

import os

import numpy as np
import pytest

import tfnb as tf


def counting_model():
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(0.0, name="w")
    train = tf.group(w.assign_add(1.0), step.assign_add(1))
    return step, w, train


def checkpoint_steps(directory: str) -> list[int]:
    return sorted(int(name.split("-")[1].split(".")[0]) for name in os.listdir(directory)
                  if name.endswith(".index.json"))


def test_stop_at_step_ends_the_loop_at_the_last_step():
    _, _, train = counting_model()
    with tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(last_step=5)]) as sess:
        runs = 0
        while not sess.should_stop():
            sess.run(train)
            runs += 1
    assert runs == 5


def test_num_steps_counts_from_the_step_the_session_starts_at(tmp_path):
    for stop in (tf.train.StopAtStepHook(last_step=3), tf.train.StopAtStepHook(num_steps=2)):
        with tf.Graph().as_default():
            step, _, train = counting_model()
            with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_checkpoint_steps=100,
                                                   hooks=[stop]) as sess:
                while not sess.should_stop():
                    sess.run(train)
                last = sess.run(step)
    assert last == 5     # restored at 3, then two more


def test_checkpoints_are_saved_when_the_session_starts_every_n_steps_and_at_the_end(tmp_path):
    _, _, train = counting_model()
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_checkpoint_steps=3,
                                           hooks=[tf.train.StopAtStepHook(last_step=7)]) as sess:
        while not sess.should_stop():
            sess.run(train)
    assert checkpoint_steps(str(tmp_path)) == [0, 3, 6, 7]
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-7")


def test_hooks_add_fetches_and_feeds_and_see_their_values():
    x = tf.placeholder(tf.float32, [], name="x")
    doubled, plus_one = x * 2.0, x + 1.0
    seen = []

    class Doubler(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(doubled, feed_dict={x: 21.0})

        def after_run(self, run_context, run_values):
            seen.append(run_values.results)
            run_context.request_stop()

    with tf.train.MonitoredSession(hooks=[Doubler()]) as sess:
        assert sess.run(plus_one) == 22.0
        assert sess.should_stop()
    assert seen == [42.0]


def test_a_lost_task_makes_a_new_session_that_restores_the_latest_checkpoint(tmp_path):
    step, w, train = counting_model()

    class LoseATaskAtStep(tf.train.SessionRunHook):
        """Raises what a step on a cluster raises when a task is lost, once, before step 5 runs."""

        def __init__(self):
            self.lost, self.sessions = False, 0

        def after_create_session(self, session, coord):
            self.sessions += 1

        def before_run(self, run_context):
            if not self.lost and run_context.session.run(step) == 5:
                self.lost = True
                raise tf.errors.UnavailableError(None, None, "Task /job:ps/replica:0/task:0 is unavailable")

    lose = LoseATaskAtStep()
    hooks = [lose, tf.train.StopAtStepHook(last_step=8)]
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_checkpoint_steps=4,
                                           hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(train)
        # Restored at step 4, after the lost step 5: w counts the runs since the checkpoint, as the step does.
        assert sess.run([step, w]) == [8, 8.0]
    assert lose.sessions == 2


def test_out_of_range_ends_the_loop_quietly():
    dataset = tf.data.Dataset.from_tensor_slices(np.arange(3.0))
    value = dataset.make_one_shot_iterator().get_next()
    seen = []
    with tf.train.MonitoredSession() as sess:
        while not sess.should_stop():
            seen.append(sess.run(value))
    assert seen == [0.0, 1.0, 2.0]


def test_hooks_need_a_global_step():
    tf.Variable(1.0)
    with pytest.raises(RuntimeError, match="Global step should be created"):
        tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(last_step=1)])


def test_listeners_hear_each_save_and_can_stop_the_loop(tmp_path):
    step, _, train = counting_model()

    class Recorder(tf.train.CheckpointSaverListener):
        def __init__(self):
            self.calls = []

        def begin(self):
            self.calls.append("begin")

        def before_save(self, session, global_step_value):
            self.calls.append(("before", global_step_value))

        def after_save(self, session, global_step_value):
            self.calls.append(("after", global_step_value))
            return global_step_value >= 6   # asks the loop to stop

        def end(self, session, global_step_value):
            self.calls.append(("end", global_step_value))

    recorder = Recorder()
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=3, listeners=[recorder])
    with tf.train.MonitoredTrainingSession(hooks=[hook], save_checkpoint_secs=None) as sess:
        while not sess.should_stop():
            sess.run(train)
        final = sess.run(step)
    assert final == 6
    assert recorder.calls == ["begin", ("before", 0), ("after", 0), ("before", 3), ("after", 3),
                              ("before", 6), ("after", 6), ("end", 6)]


def test_the_best_checkpoint_by_a_metric_is_kept_apart_from_the_latest(tmp_path):
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(0.0, name="w")
    loss = tf.square(w - 3.0)                       # w counts 0, 1, 2, ...: best at w == 3
    train = tf.group(w.assign_add(1.0), step.assign_add(1))
    best = tf.train.KeepBestCheckpointListener(loss, str(tmp_path / "best"), mode="min")
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1, listeners=[best])
    with tf.train.MonitoredTrainingSession(hooks=[hook, tf.train.StopAtStepHook(last_step=8)],
                                           save_checkpoint_secs=None) as sess:
        while not sess.should_stop():
            sess.run(train)
    assert (best.best_step, best.best_value) == (3, 0.0)
    kept = tf.train.latest_checkpoint(str(tmp_path / "best"))
    assert kept.endswith("best.ckpt-3") and tf.train.load_variable(kept, "w") == 3.0
    assert tf.train.load_variable(tf.train.latest_checkpoint(str(tmp_path)), "w") == 8.0
    assert len([name for name in os.listdir(tmp_path / "best") if name.endswith(".index.json")]) == 1
    with pytest.raises(ValueError, match="mode must be"):
        tf.train.KeepBestCheckpointListener(loss, str(tmp_path), mode="lowest")
