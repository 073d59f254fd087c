"""Send and Recv: how a value crosses devices (2015 paper, section 3.2.2).

The partition step puts a Send on the producer's device and a Recv on the consumer's; they meet in
the step's rendezvous under a key that names both devices and the tensor (and, inside a loop, the
frame and iteration), so neither needs to know when the other runs. The Recv converts the value to
its device's arrays (NumPy <-> CuPy); with lossy compression on, the Send keeps only the top 16 bits
of each float32 (the paper's section 5.5).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from tfnb.runtime.devices import LocalDevice


def rendezvous_key(source: str, destination: str, what: str) -> str:
    """`source;destination;tensor` (or `^op` for a control edge), as TF keys its rendezvous."""
    return f"{source};{destination};{what}"


class StepAborted(Exception):
    """Raised in a Recv whose step failed on another device: the device stops, the first error is reported."""


class Rendezvous:
    """One step's table of values sent and not yet received; a Recv waits until its Send has run.

    `abort()` ends the step: every waiting and later Recv raises StepAborted.
    """

    def __init__(self) -> None:
        self._values: dict[str, object] = {}
        self._arrived = threading.Condition()
        self._aborted = False
        self._on_abort: list[Callable[[], None]] = []

    def send(self, key: str, value) -> None:
        with self._arrived:
            self._values[key] = value
            self._arrived.notify_all()

    def recv(self, key: str):
        with self._arrived:
            self._arrived.wait_for(lambda: key in self._values or self._aborted)
            if key not in self._values:
                raise StepAborted(f"the step was aborted while {key} was awaited")
            return self._values.pop(key)

    def has(self, key: str) -> bool:
        """Whether the value under `key` has been sent and not yet received."""
        with self._arrived:
            return key in self._values

    def on_abort(self, callback: Callable[[], None]) -> None:
        """Calls `callback` when the step is aborted (an executor waiting elsewhere than here must stop too)."""
        self._on_abort.append(callback)

    def abort(self) -> None:
        with self._arrived:
            self._aborted = True
            self._arrived.notify_all()
        for callback in self._on_abort:
            callback()


def to_host(value):
    """A device array as a NumPy array (NumPy values, scalars and None pass through)."""
    if value is None or isinstance(value, np.ndarray | np.generic) or not hasattr(value, "get"):
        return value
    return value.get()


def transfer(source: LocalDevice, destination: LocalDevice) -> Callable:
    """The function a Recv applies to make a value sent from `source` an array of `destination`."""
    if source.xp is destination.xp:
        return _same
    if destination.xp is np:
        return to_host
    return lambda value: None if value is None else destination.xp.asarray(value)


def truncate_to_16_bits(value):
    """Lossy transfer compression from the paper: keep a float32's top 16 bits, zero the rest."""
    if getattr(value, "dtype", None) != np.float32:
        return value
    bits = value.view(np.uint32) & np.uint32(0xFFFF0000)
    return bits.view(np.float32)


def send_kernel(key: str, compress: bool) -> Callable:
    """What a Send line calls: `send(step, value)` leaves the value in the step's rendezvous."""
    if compress:
        return lambda step, value: step.rendezvous.send(key, truncate_to_16_bits(value))
    return lambda step, value: step.rendezvous.send(key, value)


def recv_kernel(key: str, move: Callable) -> Callable:
    """What a Recv line calls: `recv(step)` waits for the value under `key` and makes it its device's."""
    return lambda step: move(step.rendezvous.recv(key))


def _same(value):
    return value
