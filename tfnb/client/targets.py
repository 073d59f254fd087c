"""Session targets: where a Session's plans run.

A target that no opener claims runs in this process: '' (the default) and any other name, which then only names
the resource containers that sessions on it share (tfnb/runtime/resources.py). A package above the client
registers an opener for the targets it runs elsewhere: tfnb/distributed claims the targets of its servers and
the addresses of Dask schedulers, and compiles plans for the tasks of a cluster.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from tfnb.framework.graph import Graph
from tfnb.framework.tensor import Tensor
from tfnb.runtime.binding import KernelCache
from tfnb.runtime.devices import LocalDevice
from tfnb.runtime.pipeline import CompileOptions


class RemoteTarget(Protocol):
    """What a Session needs from a target whose plans run elsewhere."""

    devices: list[LocalDevice]

    def compile(self, graph: Graph, fetches: list, feeds: list[Tensor], kernels: KernelCache,
                options: CompileOptions):
        """An executable (as tfnb/runtime/pipeline.py's Executable) running the request on the target."""

    def reset(self, containers: list[str] | None) -> None:
        """Clears the target's resource containers (all of them when `containers` is None)."""

    def close(self) -> None:
        """Releases what the session registered on the target."""


_OPENERS: list[Callable[[str, object], RemoteTarget | None]] = []


def register_target_opener(opener: Callable[[str, object], RemoteTarget | None]) -> None:
    """Adds `opener(target, config)`, which returns a RemoteTarget for the targets it claims and None for others."""
    if opener not in _OPENERS:
        _OPENERS.append(opener)


def open_target(target: str, config) -> RemoteTarget | None:
    """The RemoteTarget that runs a session on `target`, or None when it runs in this process."""
    for opener in _OPENERS:
        remote = opener(target, config)
        if remote is not None:
            return remote
    return None
