"""The default session: what `Tensor.eval()`, `Operation.run()` and `Variable.load()` run in.

The stack lives in the framework so that graph objects can reach the innermost session without
importing the client; a Session pushes itself here in `as_default()`.
"""

from __future__ import annotations

from tfnb.framework.default_stack import DefaultStack

_sessions = DefaultStack()


def get_default_session():
    """The innermost session made default by `with sess:` / `as_default()`, or None."""
    return _sessions.top()


def session_scope(session):
    """A context manager making `session` the default inside a `with`."""
    return _sessions.scope(session)


def default_session_for(graph, session=None):
    """The session to evaluate with: `session`, else the default one; checks it runs `graph`."""
    session = session or get_default_session()
    if session is None:
        raise ValueError("Cannot evaluate tensor using `eval()`: No default session is registered. Use "
                         "`with sess.as_default()` or pass an explicit session to `eval(session=sess)`")
    if session.graph is not graph:
        raise ValueError("Cannot use the given session to evaluate tensor: the tensor's graph is different "
                         "from the session's graph.")
    return session
