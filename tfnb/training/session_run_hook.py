"""Session run hooks (tf.train.SessionRunHook): code that a MonitoredSession runs around each step.

A hook is told when the session is being made (`begin`, when the graph may still grow), made
(`after_create_session`, again after each recovery), before and after each `run` (it may add fetches, feeds and
options, and read their values), and when the session ends (`end`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues"]


class SessionRunHook:
    """A hook doing nothing: subclasses define the methods they need."""

    def begin(self) -> None:
        """Called once before the session is made; the graph may still change."""

    def after_create_session(self, session, coord) -> None:
        """Called when a session is made, and again when it is made anew after an error."""

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        """What to add to the coming run: fetches, feeds, options (or None)."""
        return None

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        """Called after each run with the values of what before_run asked for."""

    def end(self, session) -> None:
        """Called when the session is closed, unless an error ended it."""


@dataclass
class SessionRunArgs:
    """What a hook adds to a run: fetches (any nest), feeds, run options."""

    fetches: object
    feed_dict: dict | None = None
    options: object = None


@dataclass
class SessionRunContext:
    """The run a hook sees: the arguments of `run`, the session, and `request_stop()` to end the loop."""

    original_args: SessionRunArgs
    session: object
    stop_requested: bool = False

    def request_stop(self) -> None:
        self.stop_requested = True


@dataclass
class SessionRunValues:
    """What a hook gets back after a run: the values of its fetches, the options and the run metadata."""

    results: object
    options: object = None
    run_metadata: object = field(default=None)
