"""TensorFlow's error classes; each names the op, its type, its device and where it was created."""

from __future__ import annotations


class OpError(Exception):
    """An error raised while building or running a graph, attributed to an op when one is known.

    `op` is the Operation (or None), `message` the bare message; `str(err)` adds the op's name,
    type, device and the file:line of the user's code that created it.
    """

    error_code = 2

    def __init__(self, node_def=None, op=None, message: str = "", device: str | None = None) -> None:
        self.op = op
        self.message = message
        self.device = device
        super().__init__(self._describe())

    @property
    def node_def(self):
        return self.op.node_def if self.op is not None else None

    def _describe(self) -> str:
        if self.op is None:
            return self.message
        device = self.device or self.op.assigned_device or self.op.device or "(unplaced)"
        return (f"{self.message}\n  [[op '{self.op.name}' (type {self.op.type}) on {device}, "
                f"created at {self.op.creation_site}]]")

    def __str__(self) -> str:
        return self._describe()


class CancelledError(OpError):
    error_code = 1


class UnknownError(OpError):
    error_code = 2


class InvalidArgumentError(OpError):
    """Bad input to an op at run time. As in TF, not a ValueError: bad feeds and static shapes raise ValueError."""

    error_code = 3


class DeadlineExceededError(OpError):
    error_code = 4


class NotFoundError(OpError):
    """A file, checkpoint key, op type or resource that does not exist (a missing graph name is a KeyError, as in TF)."""

    error_code = 5


class AlreadyExistsError(OpError):
    error_code = 6


class PermissionDeniedError(OpError):
    error_code = 7


class ResourceExhaustedError(OpError):
    error_code = 8


class FailedPreconditionError(OpError):
    error_code = 9


class AbortedError(OpError):
    error_code = 10


class OutOfRangeError(OpError):
    error_code = 11


class UnimplementedError(OpError):
    error_code = 12


class InternalError(OpError):
    error_code = 13


class UnavailableError(OpError):
    error_code = 14


class DataLossError(OpError):
    error_code = 15
