"""tf.train.MonitoredTrainingSession: a training loop's session, with hooks, checkpoints and recovery (OSDI, 4.3).

The chief's session restores the latest checkpoint or initializes the model; other workers wait until it is
ready. Hooks run around each step (tfnb/training/session_run_hook.py); queue runners run under a coordinator.
When a step fails because a task was lost (UnavailableError, or AbortedError), the session is closed and made
again, as TF does after a preemption: the chief restores the variables from the latest checkpoint, so training
goes on from there once the cluster has restarted the task.
"""

from __future__ import annotations

import logging

from tfnb.client.session import Session
from tfnb.framework import errors
from tfnb.framework.graph import GraphKeys, get_default_graph
from tfnb.input.queue_runner import Coordinator, start_queue_runners
from tfnb.io.checkpoints import Saver
from tfnb.ops.control_flow.dependencies import group
from tfnb.ops.variables import (
    global_variables,
    global_variables_initializer,
    local_variables_initializer,
    report_uninitialized_variables,
)
from tfnb.training.basic_session_run_hooks import CheckpointSaverHook
from tfnb.training.session_manager import SessionManager
from tfnb.training.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues

__all__ = ["ChiefSessionCreator", "MonitoredSession", "MonitoredTrainingSession", "Scaffold", "SessionCreator",
           "WorkerSessionCreator"]

_LOG = logging.getLogger(__name__)
# The errors after which a session is made again: a task of the cluster was lost or restarted.
RECOVERABLE_ERRORS = (errors.AbortedError, errors.UnavailableError)
WORKER_RECOVERY_WAIT_S = 1.0
USE_DEFAULT = object()


class Scaffold:
    """The ops that make a model ready: init, ready checks, local init, and the saver (built by `finalize`)."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None, ready_for_local_init_op=None,
                 local_init_op=None, summary_op=None, saver=None, copy_from_scaffold=None) -> None:
        if copy_from_scaffold is not None:
            init_op = init_op or copy_from_scaffold.init_op
            ready_op = ready_op or copy_from_scaffold.ready_op
            local_init_op = local_init_op or copy_from_scaffold.local_init_op
            saver = saver or copy_from_scaffold.saver
        self.init_op, self.init_feed_dict, self.init_fn = init_op, init_feed_dict, init_fn
        self.ready_op, self.ready_for_local_init_op = ready_op, ready_for_local_init_op
        self.local_init_op, self.summary_op, self.saver = local_init_op, summary_op, saver

    def finalize(self) -> None:
        """Builds what was not given (from the graph's collections when they hold it), then finalizes the graph."""
        graph = get_default_graph()
        if self.init_op is None:
            self.init_op = _one_of(GraphKeys.INIT_OP) or global_variables_initializer()
        if self.ready_op is None:
            self.ready_op = report_uninitialized_variables()
        if self.ready_for_local_init_op is None:
            self.ready_for_local_init_op = report_uninitialized_variables(global_variables())
        if self.local_init_op is None:
            self.local_init_op = _one_of(GraphKeys.LOCAL_INIT_OP) or group(local_variables_initializer())
        if self.saver is None:
            self.saver = _one_of(GraphKeys.SAVERS) or Saver(allow_empty=True)
            if not graph.get_collection(GraphKeys.SAVERS):
                graph.add_to_collection(GraphKeys.SAVERS, self.saver)
        graph.finalize()


def _one_of(key: str):
    found = get_default_graph().get_collection(key)
    if len(found) > 1:
        raise RuntimeError(f"More than one item in collection {key}. Please indicate which one to use by passing "
                           f"it to the constructor.")
    return found[0] if found else None


class SessionCreator:
    """Makes the raw Session a MonitoredSession runs."""

    def create_session(self) -> Session:
        raise NotImplementedError


class ChiefSessionCreator(SessionCreator):
    """The chief's: restore the latest checkpoint in `checkpoint_dir`, or initialize."""

    def __init__(self, scaffold: Scaffold | None = None, master: str = "", config=None,
                 checkpoint_dir: str | None = None, checkpoint_filename_with_path: str | None = None) -> None:
        self._scaffold = scaffold or Scaffold()
        self._master, self._config = master, config
        self._checkpoint_dir, self._checkpoint_path = checkpoint_dir, checkpoint_filename_with_path

    def create_session(self) -> Session:
        scaffold = self._scaffold
        scaffold.finalize()
        manager = SessionManager(scaffold.local_init_op, scaffold.ready_op, scaffold.ready_for_local_init_op)
        return manager.prepare_session(self._master, scaffold.init_op, scaffold.saver, self._checkpoint_dir,
                                       self._checkpoint_path, config=self._config,
                                       init_feed_dict=scaffold.init_feed_dict, init_fn=scaffold.init_fn)


class WorkerSessionCreator(SessionCreator):
    """Another worker's: wait until the chief has made the model ready.

    tfnb differs from TF: it checks again every second (TF: 30 s)."""

    def __init__(self, scaffold: Scaffold | None = None, master: str = "", config=None,
                 max_wait_secs: float = 30 * 60) -> None:
        self._scaffold = scaffold or Scaffold()
        self._master, self._config, self._max_wait_secs = master, config, max_wait_secs

    def create_session(self) -> Session:
        scaffold = self._scaffold
        scaffold.finalize()
        manager = SessionManager(scaffold.local_init_op, scaffold.ready_op, scaffold.ready_for_local_init_op,
                                 recovery_wait_secs=WORKER_RECOVERY_WAIT_S)
        return manager.wait_for_session(self._master, self._config, self._max_wait_secs)


class MonitoredSession:
    """A session for a training loop: hooks around each run, queue runners, and a new session after a lost task."""

    def __init__(self, session_creator: SessionCreator | None = None, hooks=None,
                 stop_grace_period_secs: float = 120) -> None:
        self._creator = session_creator or ChiefSessionCreator()
        self._hooks: list[SessionRunHook] = list(hooks or [])
        self._grace_s = stop_grace_period_secs
        self._graph = get_default_graph()
        for hook in self._hooks:
            hook.begin()
        self._session: Session | None = None
        self._coord: Coordinator | None = None
        self._stop = False
        self._create()

    @property
    def graph(self):
        return self._graph

    def _create(self) -> None:
        """Makes the session (again, after a lost task), starts the queue runners, tells the hooks."""
        while True:
            try:
                self._session = self._creator.create_session()
                break
            except RECOVERABLE_ERRORS as error:
                _LOG.info("A task of the cluster was unavailable while making the session (%s); trying again", error)
        self._coord = Coordinator()
        start_queue_runners(self._session, self._coord, daemon=True)
        for hook in self._hooks:
            hook.after_create_session(self._session, self._coord)

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs `fetches` with the hooks' additions; after a lost task, in a new session (see the module docstring)."""
        while True:
            try:
                return self._run_hooked(fetches, feed_dict, options, run_metadata)
            except RECOVERABLE_ERRORS as error:
                _LOG.warning("A task of the cluster was lost (%s): closing the session and making a new one", error)
                self._close_session()
                self._create()

    def _run_hooked(self, fetches, feed_dict, options, run_metadata):
        context = SessionRunContext(SessionRunArgs(fetches, feed_dict, options), self._session)
        requests = {f"hook{k}": hook.before_run(context) for k, hook in enumerate(self._hooks)}
        requests = {key: args for key, args in requests.items() if args is not None}
        feeds = dict(feed_dict or {})
        for args in requests.values():
            for tensor, value in (args.feed_dict or {}).items():
                if tensor in feeds:
                    raise RuntimeError(f"Same tensor is fed by two hooks (or a hook and the caller): {tensor}")
                feeds[tensor] = value
        outputs = self._session.run({"caller": fetches, **{k: a.fetches for k, a in requests.items()}}, feeds,
                                    options, run_metadata)
        self._coord.raise_requested_exception()
        for k, hook in enumerate(self._hooks):
            hook.after_run(context, SessionRunValues(outputs.get(f"hook{k}"), options, run_metadata))
        self._stop = self._stop or context.stop_requested
        return outputs["caller"]

    def should_stop(self) -> bool:
        """Whether a hook asked to stop, or the coordinator was told to."""
        return self._stop or (self._coord is not None and self._coord.should_stop())

    def close(self) -> None:
        self._close(ended_cleanly=True)

    def _close(self, ended_cleanly: bool) -> None:
        if self._session is None:
            return
        if ended_cleanly:
            for hook in self._hooks:
                hook.end(self._session)
        self._close_session()

    def _close_session(self) -> None:
        coord, session = self._coord, self._session
        self._session = None
        coord.request_stop()
        # Closed before the join: closing cancels the ops a queue runner's thread may be blocked in.
        session.close()
        coord.join(stop_grace_period_secs=self._grace_s, ignore_live_threads=True)

    def __enter__(self) -> MonitoredSession:
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self._close(ended_cleanly=exc_type is None or issubclass(exc_type, errors.OutOfRangeError | StopIteration))
        return exc_type is not None and issubclass(exc_type, errors.OutOfRangeError | StopIteration)


def MonitoredTrainingSession(master: str = "", is_chief: bool = True, checkpoint_dir: str | None = None,
                             scaffold: Scaffold | None = None, hooks=None, chief_only_hooks=None,
                             save_checkpoint_secs=USE_DEFAULT, save_summaries_steps=USE_DEFAULT,
                             save_summaries_secs=USE_DEFAULT, config=None, stop_grace_period_secs: float = 120,
                             log_step_count_steps: int = 100, max_wait_secs: float = 7200,
                             save_checkpoint_steps=USE_DEFAULT, summary_dir: str | None = None) -> MonitoredSession:
    """A MonitoredSession for training on `master`: the chief restores or initializes and saves checkpoints in
    `checkpoint_dir` (every 600 s unless `save_checkpoint_steps`); other workers wait for it.

    tfnb differs from TF: it writes no summaries and counts no steps per second (their arguments are ignored).
    """
    scaffold = scaffold or Scaffold()
    all_hooks = list(hooks or [])
    if not is_chief:
        creator = WorkerSessionCreator(scaffold, master, config, max_wait_secs)
        return MonitoredSession(creator, all_hooks, stop_grace_period_secs)
    creator = ChiefSessionCreator(scaffold, master, config, checkpoint_dir)
    all_hooks += list(chief_only_hooks or [])
    if checkpoint_dir:
        secs, steps = _checkpoint_schedule(save_checkpoint_secs, save_checkpoint_steps)
        if secs or steps:
            all_hooks.append(CheckpointSaverHook(checkpoint_dir, save_secs=secs, save_steps=steps, scaffold=scaffold))
    return MonitoredSession(creator, all_hooks, stop_grace_period_secs)


def _checkpoint_schedule(secs, steps) -> tuple:
    """TF's defaults: every 600 s, unless steps are given (then no seconds)."""
    if steps is USE_DEFAULT and secs is USE_DEFAULT:
        return 600, None
    return (None if secs is USE_DEFAULT else secs), (None if steps is USE_DEFAULT else steps)
