"""tf.train.SessionManager: makes a session whose model is ready, from a checkpoint or by initializing it.

The chief prepares the session: it restores the variables from the latest checkpoint in `checkpoint_dir` when
there is one, else runs the init op; then the local init op. Another worker waits until the chief has made the
model ready (its ready op reports no uninitialized variable), checking again every `recovery_wait_secs`.
"""

from __future__ import annotations

import time

import numpy as np

from tfnb.client.session import Session
from tfnb.framework import errors
from tfnb.framework.graph import get_default_graph
from tfnb.io.checkpoints import latest_checkpoint

__all__ = ["SessionManager"]


def ready_or_why(ready_op, session) -> tuple[bool, str | None]:
    """(True, None) when `ready_op` (a tensor of uninitialized variables' names) is empty, else (False, why)."""
    if ready_op is None:
        return True, None
    try:
        names = session.run(ready_op)
    except errors.FailedPreconditionError as error:
        return False, str(error)
    names = np.asarray(names)
    if names.size == 0 or names.dtype == np.int32:
        return True, None
    return False, "Variables not initialized: " + ", ".join(
        n.decode() if isinstance(n, bytes) else str(n) for n in names.ravel())


class SessionManager:
    """Makes sessions on `master` for `graph` whose model is ready (see the module docstring)."""

    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None, graph=None,
                 recovery_wait_secs: float = 30, local_init_run_options=None, local_init_feed_dict=None) -> None:
        self._local_init_op, self._ready_op = local_init_op, ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_feed_dict = local_init_feed_dict

    def prepare_session(self, master: str, init_op=None, saver=None, checkpoint_dir: str | None = None,
                        checkpoint_filename_with_path: str | None = None, wait_for_checkpoint: bool = False,
                        max_wait_secs: float = 7200, config=None, init_feed_dict=None, init_fn=None) -> Session:
        """A session whose variables are restored from the latest checkpoint, or initialized when there is none."""
        session = Session(master, graph=self._graph, config=config)
        path = checkpoint_filename_with_path or (latest_checkpoint(checkpoint_dir) if checkpoint_dir else None)
        if saver is not None and path is not None:
            saver.restore(session, path)
        else:
            if init_op is None and init_fn is None and self._local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or local_init_op was given")
            if init_op is not None:
                session.run(init_op, feed_dict=init_feed_dict)
            if init_fn is not None:
                init_fn(session)
        ready, why = self._local_init(session)
        if not ready:
            raise RuntimeError(f"Init operations did not make model ready for local_init. Init op: {_name(init_op)}, "
                               f"init fn: {init_fn}, error: {why}")
        ready, why = ready_or_why(self._ready_op, session)
        if not ready:
            raise RuntimeError(f"Init operations did not make model ready. Init op: {_name(init_op)}, init fn: "
                               f"{init_fn}, local_init_op: {_name(self._local_init_op)}, error: {why}")
        return session

    def wait_for_session(self, master: str, config=None, max_wait_secs: float = float("inf")) -> Session:
        """A session once another task (the chief) has made the model ready; DeadlineExceededError after
        `max_wait_secs`."""
        deadline = time.monotonic() + max_wait_secs
        while True:
            session = Session(master, graph=self._graph, config=config)
            ready, why = self._local_init(session)
            if ready:
                ready, why = ready_or_why(self._ready_op, session)
                if ready:
                    return session
            session.close()
            if time.monotonic() + self._recovery_wait_secs > deadline:
                raise errors.DeadlineExceededError(None, None, f"Session was not ready after waiting "
                                                   f"{max_wait_secs} secs: {why}")
            time.sleep(self._recovery_wait_secs)

    def _local_init(self, session: Session) -> tuple[bool, str | None]:
        """Runs the local init op once the model is ready for it."""
        ready, why = ready_or_why(self._ready_for_local_init_op, session)
        if ready and self._local_init_op is not None:
            session.run(self._local_init_op, feed_dict=self._local_init_feed_dict)
        return ready, why


def _name(op) -> str | None:
    return getattr(op, "name", None)
