"""tf.train.Server and the session targets of a cluster.

A Server makes a cluster reachable from this process, in one of three ways:

- `Server(cluster)`: starts a local cluster, a Dask scheduler and one worker process per task, on 127.0.0.1
  (a notebook's way; tfnb's, since TF needs one server per task);
- `Server(cluster, scheduler="tcp://10.0.0.5:8786")`: connects to a Dask cluster whose workers host the
  tasks (started by `dask worker --resources "/job:ps/task:0=1"`, dask-jobqueue or dask-kubernetes);
- `Server(cluster, job_name="ps", task_index=0, scheduler=...)`: this process becomes that task, a Dask
  worker listening at the task's address in `cluster` (TF1's between-graph replication: one process per
  task). The scheduler's address may come from the environment variable TFNB_DASK_SCHEDULER instead.

`server.target` is the session target: `tf.Session(server.target)`. A target is the scheduler's address,
optionally followed by the task that ops naming no job go to (`tcp://127.0.0.1:8786/job:worker/task:0`);
`grpc://<a task's address in a cluster this process knows>` also names that task, as TF1 programs write it.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

from tfnb.distributed.cluster_spec import ClusterSpec, task_name
from tfnb.distributed.master import Master
from tfnb.framework.device_spec import DeviceSpec

__all__ = ["Server"]

SCHEDULER_VARIABLE = "TFNB_DASK_SCHEDULER"
DASK_SCHEMES = ("tcp://", "tls://")
TASK_WAIT_S = 60.0   # how long a new session waits for every task to have a worker (a restarted one included)


@dataclass
class _Reachable:
    """A Dask cluster this process reaches: its scheduler, its security, its spec (None: every task it hosts)."""

    address: str
    security: object
    spec: ClusterSpec | None
    device_count: dict | None
    connection: object = None

    def connect(self):
        """The connection to the scheduler (a DaskCluster), opened on first use and then shared by sessions."""
        if self.connection is None:
            from tfnb.distributed.dask_backend import DaskCluster
            self.connection = DaskCluster(self.address, self.security, self.device_count)
        return self.connection

    def tasks(self) -> list[str]:
        return self.spec.task_names() if self.spec is not None else sorted(self.connect().tasks())

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


_REACHABLE: dict[str, _Reachable] = {}
_LOCK = threading.Lock()


class Server:
    """An in-process server of a cluster (TF1's tf.train.Server), on Dask: see the module docstring.

    tfnb differs from TF: without `job_name` it starts (or, with `scheduler`, connects to) the whole cluster;
    `stop()` ends what it started; `protocol` is ignored (Dask's comms carry everything, TLS with `security`).
    """

    def __init__(self, server_or_cluster_def, job_name: str | None = None, task_index: int | None = None,
                 protocol: str | None = None, config=None, start: bool = True, *, scheduler: str | None = None,
                 security=None, worker_ttl_s: float | None = None) -> None:
        self.cluster_spec = ClusterSpec(server_or_cluster_def)
        self.job_name, self.task_index = job_name, task_index or 0
        self._scheduler = scheduler or (os.environ.get(SCHEDULER_VARIABLE) if job_name is not None else None)
        if job_name is not None and self._scheduler is None:
            raise ValueError(f"A server for one task joins a cluster's Dask scheduler: pass scheduler= or set "
                             f"{SCHEDULER_VARIABLE}")
        self._security, self._worker_ttl_s = security, worker_ttl_s
        self._device_count = dict(config.device_count) if config is not None and config.device_count else None
        self._local_cluster = None
        self._task_worker = None
        self._stopped = threading.Event()
        self._started = False
        if start:
            self.start()

    @property
    def task(self) -> str:
        """The task this server is, or (without a job name) the task its sessions place unplaced ops on."""
        if self.job_name is not None:
            return task_name(self.job_name, self.task_index)
        return _default_task(self.cluster_spec.task_names())

    @property
    def target(self) -> str:
        """The session target: `tf.Session(server.target)` runs on this cluster, unplaced ops on `task`."""
        spec = DeviceSpec.from_string(self.task)
        return f"{self.scheduler_address}/job:{spec.job}/task:{spec.task}"

    @property
    def scheduler_address(self) -> str:
        if self._local_cluster is not None:
            return self._local_cluster.scheduler_address
        return self._scheduler

    @property
    def server_def(self) -> dict:
        return {"cluster": self.cluster_spec.as_cluster_def(), "job_name": self.job_name,
                "task_index": self.task_index, "protocol": "dask"}

    @property
    def cluster(self):
        """The connection to the cluster (tfnb's DaskCluster: `.client` is a Dask Client, `.tasks()`, ...)."""
        return _REACHABLE[self.scheduler_address].connect()

    def start(self) -> None:
        """Starts the server (done by the constructor unless start=False)."""
        if self._started:
            return
        from tfnb.distributed import dask_backend
        if self.job_name is not None:
            address = self.cluster_spec.task_address(self.job_name, self.task_index)
            self._task_worker = dask_backend.TaskWorker(self._scheduler, self.task, address, self._security)
        elif self._scheduler is None:
            self._local_cluster = dask_backend.start_local_cluster(self.cluster_spec.task_names(), self._security,
                                                                   self._worker_ttl_s)
        with _LOCK:
            _REACHABLE[self.scheduler_address] = _Reachable(self.scheduler_address, self._security, self.cluster_spec,
                                                            self._device_count)
        self._started = True

    def join(self) -> None:
        """Blocks until the server stops (a ps task's process serves until then)."""
        if self._task_worker is not None:
            self._task_worker.wait()
        else:
            self._stopped.wait()

    def stop(self) -> None:
        """Ends what this server started: its worker, or its local cluster (tfnb's; TF servers never stop)."""
        if not self._started:
            return
        self._started = False
        with _LOCK:
            reachable = _REACHABLE.pop(self.scheduler_address, None)
        if reachable is not None:
            reachable.close()
        if self._task_worker is not None:
            self._task_worker.stop()
        if self._local_cluster is not None:
            self._local_cluster.close()
        self._stopped.set()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    @staticmethod
    def create_local_server(config=None, start: bool = True) -> Server:
        """A local cluster of one task, `/job:local/task:0` (TF names its job `localhost`)."""
        return Server(ClusterSpec({"local": ["localhost:0"]}), config=config, start=start)


def open_cluster_target(target: str, config) -> Master | None:
    """The master of a session on `target` when it names a cluster (see the module docstring), else None."""
    reachable, task = _resolve(target)
    if reachable is None:
        return None
    tasks = reachable.tasks()
    default = task or _default_task(tasks)
    return Master(reachable.connect(), tasks, default, config, TASK_WAIT_S)


def _resolve(target: str) -> tuple[_Reachable | None, str | None]:
    if target.startswith("grpc://"):
        return _task_at(target[len("grpc://"):])
    if not target.startswith(DASK_SCHEMES):
        return None, None
    address, _, job_and_task = target.partition("/job:")
    with _LOCK:
        reachable = _REACHABLE.get(address)
        if reachable is None:
            reachable = _REACHABLE[address] = _Reachable(address, None, None, None)
    if not job_and_task:
        return reachable, None
    spec = DeviceSpec.from_string("/job:" + job_and_task)
    return reachable, task_name(spec.job, spec.task or 0)


def _task_at(address: str) -> tuple[_Reachable | None, str | None]:
    """The cluster and task whose address in a known ClusterSpec is `address` (TF1's `grpc://host:port` targets)."""
    with _LOCK:
        for reachable in _REACHABLE.values():
            spec = reachable.spec
            for job in spec.jobs if spec is not None else ():
                for index in spec.task_indices(job):
                    if spec.task_address(job, index) == address:
                        return reachable, task_name(job, index)
    return None, None


def _default_task(tasks: list[str]) -> str:
    """The task where ops that name no job go: the first worker's, else the first task's."""
    workers = [task for task in tasks if DeviceSpec.from_string(task).job == "worker"]
    return (workers or tasks)[0]
