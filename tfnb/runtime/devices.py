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
from tfnb.kernels.host import queues_work, synchronize
from tfnb.kernels.host_memory import raise_malloc_thresholds
from tfnb.runtime.strict_numpy import STRICT_XP


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
    def queues_work(self) -> bool:
        """Whether a kernel's call returns before its work has run (a GPU's stream), as a host kernel's does not."""
        return queues_work(self.xp)

    def finish(self) -> None:
        """Returns once the work this thread queued on the device has run (kernels/host.py's synchronize)."""
        synchronize(self.xp)

    @property
    def short_name(self) -> str:
        """'cpu1' for /job:localhost/replica:0/task:0/device:CPU:1 and 'ps0_cpu1' for /job:ps/replica:0/task:0/...,
        as generated code names values there."""
        spec = self.spec
        task = "" if spec.job in (None, "localhost") else f"{spec.job}{spec.task}_"
        return f"{task}{self.device_type.lower()}{self.index}"


def gpu_count() -> int:
    """How many CUDA devices CuPy sees (0 without CuPy or CUDA)."""
    try:
        import cupy
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # no CuPy, no driver, or no device: run on CPU only
        return 0


def local_devices(device_count: dict | None = None, task: str = _device.LOCAL_TASK) -> list[LocalDevice]:
    """This process's devices: `device_count['CPU']` logical CPUs (1 by default), the visible GPUs, and
    `device_count['STRICT']` test devices whose arrays behave as CuPy's (tfnb/runtime/strict_numpy.py).

    A process hosting a task of a cluster names them after that task (`/job:ps/replica:0/task:0/device:CPU:0`).
    Its host memory serves steps as a long-running process's would (kernels/host_memory.py).
    """
    raise_malloc_thresholds()
    device_count = device_count or {}
    devices = [LocalDevice(_device.local_device("CPU", i, task), "CPU", i, np)
               for i in range(max(1, int(device_count.get("CPU", 1))))]
    gpus = min(gpu_count(), int(device_count.get("GPU", 1 << 30)))
    if gpus:
        import cupy
        devices += [LocalDevice(_device.local_device("GPU", i, task), "GPU", i, cupy) for i in range(gpus)]
    devices += [LocalDevice(_device.local_device("STRICT", i, task), "STRICT", i, STRICT_XP)
                for i in range(int(device_count.get("STRICT", 0)))]
    return devices
