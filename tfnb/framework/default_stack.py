"""Thread-local stacks behind `get_default_graph()` and `get_default_session()`."""

from __future__ import annotations

import contextlib
import threading


class DefaultStack(threading.local):
    """A per-thread stack of defaults; `scope(item)` pushes `item` for the duration of a `with`."""

    def __init__(self) -> None:
        self.items: list = []

    def top(self):
        """The innermost default, or None."""
        return self.items[-1] if self.items else None

    @contextlib.contextmanager
    def scope(self, item):
        self.items.append(item)
        try:
            yield item
        finally:
            self.items.remove(item)
