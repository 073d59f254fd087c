"""What the TF1 program files share: the registry, the test they all run, and helpers and inputs for programs.

Each `program(tf)` is written as a TF1 user writes it, against the module it is given (`tensorflow.compat.v1`
or `tfnb`), and returns what it fetched or described, or raises. A program registered with `differs=...`
documents a deliberate or accepted difference (a strict xfail, so it is noticed when the difference goes
away). Each test_tf1_<area>.py file imports `test_program_does_what_tensorflow_does`; conftest.py runs it
once per program in that file's `PROGRAMS` and holds the harness that compares the two outcomes.
"""

from __future__ import annotations

import numpy as np
import pytest

X23 = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
CUBE = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
LOGITS = [[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]]


class Programs(list):
    """One file's programs, as pytest parameters in the order they are registered."""

    def register(self, fn=None, *, differs: str | None = None):
        """Decorator registering a program; `differs` says why tfnb's outcome is expected to differ (a strict xfail)."""
        def add(fn):
            marks = [pytest.mark.xfail(strict=True, reason=differs)] if differs else []
            self.append(pytest.param(fn, id=fn.__name__, marks=marks))
            return fn
        return add(fn) if fn is not None else add


def test_program_does_what_tensorflow_does(program, same_as_tf) -> None:
    """The program's outcome under tfnb is its outcome under TensorFlow."""
    same_as_tf(program)


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
