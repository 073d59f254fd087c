"""Resources (variable values, queues, readers), grouped in named containers (paper section 4.7).

The default container '' belongs to one session and goes with it. A named container belongs to
the session's target: every session on that target sees it, it outlives them, and
`Session.reset(target, containers)` clears it.
"""

from __future__ import annotations

import threading

# target -> container name -> resources; the dicts are created once and cleared in place.
_SHARED: dict[str, dict[str, dict[str, object]]] = {}
_SHARED_LOCK = threading.Lock()


class ResourceManager:
    """A session's view of resources: its own default container '' and its target's named containers.

    A container's dict is created once and cleared in place on reset, so kernels may hold it.
    """

    def __init__(self, target: str = "") -> None:
        self._default: dict[str, object] = {}
        self._shared = _shared_containers(target)

    def container(self, name: str = "") -> dict[str, object]:
        """The dict of resources in container `name` (created on first use)."""
        if not name:
            return self._default
        found = self._shared.get(name)
        if found is None:
            with _SHARED_LOCK:
                found = self._shared.setdefault(name, {})
        return found

    def reset(self) -> None:
        """Drops the session's own resources (the default container); named containers stay."""
        _clear(self._default)

    def names(self, container: str = "") -> list[str]:
        return sorted(self.container(container))


def _shared_containers(target: str) -> dict[str, dict[str, object]]:
    with _SHARED_LOCK:
        return _SHARED.setdefault(target, {})


def _clear(resources: dict[str, object]) -> None:
    """Empties a container; resources with a `cancel` method (queues) first end the ops waiting on them."""
    for resource in list(resources.values()):
        cancel = getattr(resource, "cancel", None)
        if callable(cancel):
            cancel()
    resources.clear()


def reset_containers(target: str, containers=None) -> None:
    """Clears the named containers of `target` (all of them when `containers` is None)."""
    shared = _shared_containers(target)
    for name in list(shared) if containers is None else containers:
        if name and name in shared:
            _clear(shared[name])
