"""The devices of this process and the array namespace each one's kernels use (2015 paper, section 3.1).

A process has one or more logical CPU devices (`ConfigProto(device_count={"CPU": 4})`), all running
NumPy kernels, and one GPU device per CUDA device that CuPy sees. Nothing imports CuPy until a GPU
is looked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np

from tfnb.framework import device_spec as _device


@dataclass(frozen=True)
class LocalDevice:
    """A device of this process and the array namespace its kernels use."""

    name: str
    device_type: str
    index: int
    xp: ModuleType

    @property
    def spec(self) -> _device.DeviceSpec:
        return _device.DeviceSpec.from_string(self.name)

    @property
    def short_name(self) -> str:
        """'cpu1' for /job:localhost/replica:0/task:0/device:CPU:1, as generated code names values there."""
        return f"{self.device_type.lower()}{self.index}"


def gpu_count() -> int:
    """How many CUDA devices CuPy sees (0 without CuPy or CUDA)."""
    try:
        import cupy
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # no CuPy, no driver, or no device: run on CPU only
        return 0


def local_devices(device_count: dict | None = None) -> list[LocalDevice]:
    """This process's devices: `device_count['CPU']` logical CPUs (1 by default) and the visible GPUs."""
    device_count = device_count or {}
    devices = [LocalDevice(_device.local_device("CPU", i), "CPU", i, np)
               for i in range(max(1, int(device_count.get("CPU", 1))))]
    gpus = min(gpu_count(), int(device_count.get("GPU", 1 << 30)))
    if gpus:
        import cupy
        devices += [LocalDevice(_device.local_device("GPU", i), "GPU", i, cupy) for i in range(gpus)]
    return devices
