"""What the TF1 program files share: registering programs, and the helpers programs build their results with."""

from __future__ import annotations

import pytest


class Programs(list):
    """One file's programs, as pytest parameters in the order they are registered."""

    def register(self, fn=None, *, differs: str | None = None):
        """Decorator registering a program; `differs` says why tfnb's outcome is expected to differ (a strict xfail)."""
        def add(fn):
            marks = [pytest.mark.xfail(strict=True, reason=differs)] if differs else []
            self.append(pytest.param(fn, id=fn.__name__, marks=marks))
            return fn
        return add(fn) if fn is not None else add


def run(tf, fetches, feed_dict=None, init: bool = False):
    """`fetches` run in a new Session, after the global variables' initializer if `init`."""
    with tf.Session() as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict)


def shapes(*tensors) -> list:
    """The static shapes of tensors as lists (None for an unknown rank)."""
    return [None if t.shape.ndims is None else t.shape.as_list() for t in tensors]


def described(*tensors) -> list:
    """What a user sees of tensors without running them: name, dtype name and static shape."""
    return [(t.name, t.dtype.name, shape) for t, shape in zip(tensors, shapes(*tensors))]
