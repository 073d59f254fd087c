"""Device names as TensorFlow writes them, with partial specs merged as TF merges them."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class DeviceSpec:
    """A possibly partial device name: `/job:worker/replica:0/task:1/device:GPU:0`.

    Unset fields are None; `device_index` None also stands for `*` (any index).
    """

    job: str | None = None
    replica: int | None = None
    task: int | None = None
    device_type: str | None = None
    device_index: int | None = None

    @staticmethod
    def from_string(spec: str | None) -> DeviceSpec:
        """Parses a full or partial device name, including the legacy forms `/cpu:0` and `GPU:1`."""
        fields: dict = {}
        for part in (spec or "").split("/"):
            if not part:
                continue
            pieces = part.split(":")
            key = pieces[0].lower()
            if key == "job" and len(pieces) == 2:
                fields["job"] = pieces[1]
            elif key in ("replica", "task") and len(pieces) == 2:
                fields[key] = int(pieces[1])
            elif key == "device" and len(pieces) in (2, 3):
                fields["device_type"] = pieces[1].upper()
                fields["device_index"] = _index(pieces[2]) if len(pieces) == 3 else None
            elif key in ("cpu", "gpu") and len(pieces) == 2:
                fields["device_type"] = key.upper()
                fields["device_index"] = _index(pieces[1])
            elif len(pieces) == 2 and pieces[0].isupper():
                fields["device_type"] = pieces[0]
                fields["device_index"] = _index(pieces[1])
            else:
                raise ValueError(f"Invalid device specification {spec!r}: cannot parse {part!r}")
        return DeviceSpec(**fields)

    def merge_from(self, other: DeviceSpec) -> DeviceSpec:
        """This spec with every field that `other` sets replaced by other's value."""
        changes = {k: v for k, v in vars(other).items() if v is not None}
        if other.device_type is not None and other.device_index is None:
            changes["device_index"] = None
        return replace(self, **changes)

    def matches(self, full: DeviceSpec) -> bool:
        """Whether a fully specified device satisfies this (partial) spec."""
        return all(mine is None or mine == theirs for mine, theirs in zip(vars(self).values(), vars(full).values()))

    def to_string(self) -> str:
        parts = []
        if self.job is not None:
            parts.append(f"/job:{self.job}")
        if self.replica is not None:
            parts.append(f"/replica:{self.replica}")
        if self.task is not None:
            parts.append(f"/task:{self.task}")
        if self.device_type is not None:
            index = "*" if self.device_index is None else self.device_index
            parts.append(f"/device:{self.device_type}:{index}")
        return "".join(parts)

    def __str__(self) -> str:
        return self.to_string()


def _index(text: str) -> int | None:
    return None if text == "*" else int(text)


def canonical(spec: str | DeviceSpec | None) -> str:
    """The canonical string of a device name ('' for no constraint)."""
    if spec is None:
        return ""
    if isinstance(spec, DeviceSpec):
        return spec.to_string()
    return DeviceSpec.from_string(spec).to_string()


def merge(outer: str, inner: str) -> str:
    """The device string an op gets inside `with device(outer): with device(inner):`."""
    return DeviceSpec.from_string(outer).merge_from(DeviceSpec.from_string(inner)).to_string()


LOCAL_TASK = "/job:localhost/replica:0/task:0"


def local_device(device_type: str, index: int, task: str = LOCAL_TASK) -> str:
    """A device of `task` (this process by default): `/job:localhost/replica:0/task:0/device:CPU:0`."""
    return f"{task}/device:{device_type}:{index}"


def task_of(name: str) -> str:
    """The task part of a full device name: `/job:ps/replica:0/task:1` for `/job:ps/replica:0/task:1/device:CPU:0`."""
    spec = DeviceSpec.from_string(name)
    return DeviceSpec(spec.job, spec.replica, spec.task).to_string()


def short_device(name: str) -> str:
    """'CPU:0' for a local device, 'worker:1 CPU:0' for another task's; '' stays ''."""
    if not name:
        return ""
    spec = DeviceSpec.from_string(name)
    device = f"{spec.device_type}:{'*' if spec.device_index is None else spec.device_index}" if spec.device_type else ""
    if spec.job in (None, "localhost"):
        return device or name
    return f"{spec.job}:{spec.task if spec.task is not None else '*'} {device}".strip()
