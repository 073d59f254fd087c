"""The hooks a training loop usually needs: stop at a step, save checkpoints every so many steps or seconds, with
listeners that act around each save (keeping the best checkpoint by a metric is one)."""

from __future__ import annotations

import os
import time

from tfnb.framework.errors import NotFoundError
from tfnb.framework.graph import GraphKeys, get_default_graph
from tfnb.io.checkpoints import Saver
from tfnb.training.session_run_hook import SessionRunArgs, SessionRunHook
from tfnb.training.training_util import get_global_step

__all__ = ["CheckpointSaverHook", "CheckpointSaverListener", "KeepBestCheckpointListener", "SecondOrStepTimer",
           "StopAtStepHook"]


class SecondOrStepTimer:
    """Says when something every `every_secs` seconds or every `every_steps` steps (exactly one of them) is due."""

    def __init__(self, every_secs: float | None = None, every_steps: int | None = None) -> None:
        if (every_secs is None) == (every_steps is None):
            raise ValueError("exactly one of every_secs and every_steps should be provided.")
        self._every_secs, self._every_steps = every_secs, every_steps
        self._last_step: int | None = None
        self._last_time: float | None = None

    def should_trigger_for_step(self, step: int) -> bool:
        if self._last_step is None:
            return True
        if step == self._last_step:
            return False
        if self._every_secs is not None:
            return time.monotonic() >= self._last_time + self._every_secs
        return step >= self._last_step + self._every_steps

    def update_last_triggered_step(self, step: int) -> None:
        self._last_step, self._last_time = step, time.monotonic()

    def last_triggered_step(self) -> int | None:
        return self._last_step


def _global_step_read():
    step = get_global_step()
    if step is None:
        return None
    with get_default_graph().name_scope(None):
        return step.value()


class StopAtStepHook(SessionRunHook):
    """Asks the loop to stop once the global step reaches `last_step` (or `num_steps` after the first session)."""

    def __init__(self, num_steps: int | None = None, last_step: int | None = None) -> None:
        if (num_steps is None) == (last_step is None):
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and num_steps < 0:
            raise ValueError("num_steps cannot be negative.")
        self._num_steps, self._last_step = num_steps, last_step

    def begin(self) -> None:
        self._global_step = _global_step_read()
        if self._global_step is None:
            raise RuntimeError("Global step should be created to use StopAtStepHook.")

    def after_create_session(self, session, coord) -> None:
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step)) + self._num_steps

    def before_run(self, run_context) -> SessionRunArgs:
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values) -> None:
        # The step read before the run may be stale (other replicas advance it too): it is read again to be sure.
        if int(run_values.results) + 1 >= self._last_step and \
                int(run_context.session.run(self._global_step)) >= self._last_step:
            run_context.request_stop()


class CheckpointSaverListener:
    """Acts around the saves of a CheckpointSaverHook, as in TF: `after_save` returning True asks the loop to stop."""

    def begin(self) -> None:
        """Called once, before the graph is finalized (a listener may add ops here)."""

    def before_save(self, session, global_step_value: int) -> None:
        """Called before each save."""

    def after_save(self, session, global_step_value: int) -> bool | None:
        """Called after each save; True requests a stop."""

    def end(self, session, global_step_value: int) -> None:
        """Called once, after the last save."""


class KeepBestCheckpointListener(CheckpointSaverListener):
    """Keeps, in `best_dir`, a checkpoint of the variables at the save with the best value of `metric` so far.

    `metric` is a scalar tensor (run in the training session at each save) or a function of the session;
    `mode` is "min" (a loss) or "max" (an accuracy). The best checkpoint is saved again by a Saver of its own
    (`max_to_keep=1`), so `tf.train.latest_checkpoint(best_dir)` names it and `best_value`/`best_step` say
    which it is. A tfnb addition: TF1 programs write such a listener themselves.
    """

    def __init__(self, metric, best_dir: str, mode: str = "min", feed_dict=None) -> None:
        if mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
        self._metric, self._feed_dict = metric, feed_dict
        self._path = os.path.join(best_dir, "best.ckpt")
        self._better = (lambda new, old: new < old) if mode == "min" else (lambda new, old: new > old)
        self._saver: Saver | None = None
        self.best_value: float | None = None
        self.best_step: int | None = None

    def begin(self) -> None:
        self._saver = Saver(max_to_keep=1)

    def after_save(self, session, global_step_value: int) -> None:
        value = float(self._metric(session) if callable(self._metric) else session.run(self._metric, self._feed_dict))
        if self.best_value is None or self._better(value, self.best_value):
            self.best_value, self.best_step = value, global_step_value
            self._saver.save(session, self._path, global_step=global_step_value, latest_filename="checkpoint")


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint (`<checkpoint_dir>/model.ckpt-<global step>`) when the session is made, every
    `save_steps` steps or `save_secs` seconds, and at the end, telling its `listeners` (CheckpointSaverListener)."""

    def __init__(self, checkpoint_dir: str, save_secs: float | None = None, save_steps: int | None = None,
                 saver: Saver | None = None, checkpoint_basename: str = "model.ckpt", scaffold=None,
                 listeners=None) -> None:
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver, self._scaffold = saver, scaffold
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners: list[CheckpointSaverListener] = list(listeners or [])

    def begin(self) -> None:
        self._global_step = _global_step_read()
        if self._global_step is None:
            raise RuntimeError("Global step should be created to use CheckpointSaverHook.")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord) -> None:
        step = int(session.run(self._global_step))
        self._save(session, step)
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context) -> SessionRunArgs:
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values) -> None:
        if self._timer.should_trigger_for_step(int(run_values.results) + 1):
            step = int(run_context.session.run(self._global_step))
            if self._timer.should_trigger_for_step(step):
                self._timer.update_last_triggered_step(step)
                if self._save(run_context.session, step):
                    run_context.request_stop()

    def end(self, session) -> None:
        step = int(session.run(self._global_step))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _save(self, session, step: int) -> bool:
        """Saves at `step` between the listeners' before_save and after_save; whether one of them asked to stop."""
        for listener in self._listeners:
            listener.before_save(session, step)
        self._get_saver().save(session, self._save_path, global_step=step)
        return any([bool(listener.after_save(session, step)) for listener in self._listeners])

    def _get_saver(self) -> Saver:
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = get_default_graph().get_collection(GraphKeys.SAVERS)
        if len(savers) != 1:
            raise NotFoundError(None, None, "CheckpointSaverHook needs one Saver in the SAVERS collection, or a "
                                "saver or scaffold")
        return savers[0]
