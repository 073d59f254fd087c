"""Send and Recv: how a value crosses devices (2015 paper, section 3.2.2).

The partition step puts a Send on the producer's device and a Recv on the consumer's; they meet in
the step's rendezvous under a key that names both devices and the tensor (and, inside a loop, the
frame and iteration), so neither needs to know when the other runs. The Recv converts the value to
its device's arrays (NumPy <-> CuPy). With lossy compression on (`GraphOptions.enable_bfloat16_sendrecv`),
a float32 array travels as bfloat16: the Send keeps the top 16 bits of each value, half the bytes, and
the Recv widens them back (the paper's section 5.5: the low bits are zero, not rounded).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tfnb.kernels.host import to_host
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

    def recv(self, key: str, timeout: float | None = None):
        """The value sent under `key`, once it is: StepAborted if the step is aborted first, TimeoutError if
        nothing came within `timeout` seconds (None: wait as long as the step lasts)."""
        with self._arrived:
            if not self._arrived.wait_for(lambda: key in self._values or self._aborted, timeout):
                raise TimeoutError(f"nothing was sent under {key} within {timeout:g} s")
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


def transfer(source: LocalDevice, destination: LocalDevice) -> Callable:
    """The function a Recv applies to make a value sent from `source` an array of `destination`.

    Only numeric arrays move; anything else (a resource's handle, a string array, a dead value) is passed as it is.
    Between two devices of different array namespaces (a GPU and a STRICT test device), a value goes through the host.
    """
    if source.xp is destination.xp:
        return _same
    if destination.xp is np:
        return to_host
    to_device = destination.xp.asarray

    def move(value):
        value = to_host(value)
        return to_device(value) if isinstance(value, np.ndarray) and value.dtype.kind in "biufc" else value
    return move


@dataclass(frozen=True)
class Bfloat16:
    """A float32 array as it crosses devices compressed: the top 16 bits of each value (a uint16 array)."""

    bits: object

    @property
    def nbytes(self) -> int:
        return int(self.bits.nbytes)


def to_bfloat16(value):
    """A float32 array as Bfloat16 (half the bytes); any other value as it is."""
    if getattr(value, "dtype", None) != np.float32 or not hasattr(value, "view"):
        return value
    return Bfloat16((value.view(np.uint32) >> np.uint32(16)).astype(np.uint16))


def from_bfloat16(value):
    """A Bfloat16 widened back to float32 (its low 16 bits zero); any other value as it is."""
    if not isinstance(value, Bfloat16):
        return value
    return (value.bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def send_kernel(key: str, compress: bool) -> Callable:
    """What a Send line calls: `send(step, value)` leaves the value in the step's rendezvous."""
    if compress:
        return lambda step, value: step.rendezvous.send(key, to_bfloat16(value))
    return lambda step, value: step.rendezvous.send(key, value)


def recv_kernel(key: str, move: Callable) -> Callable:
    """What a Recv line calls: `recv(step)` waits for the value under `key` and makes it its device's."""
    return lambda step: move(step.rendezvous.recv(key))


def _same(value):
    return value
