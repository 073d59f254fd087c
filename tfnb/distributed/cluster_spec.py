"""ClusterSpec: the jobs of a cluster and their tasks (OSDI paper, section 3.3), with TF1's names.

A task is one process of a job (`/job:ps/task:0`, `/job:worker/task:1`); its devices are named after it
(`/job:ps/replica:0/task:0/device:CPU:0`). tfnb runs each task on a Dask worker, which holds a Dask resource
named after the task (`task_resource`): that name, not the worker's address, is how a task is found again,
since a restarted worker listens on a new port.
"""

from __future__ import annotations

from collections.abc import Mapping

from tfnb.framework.device_spec import DeviceSpec

__all__ = ["ClusterSpec"]


class ClusterSpec:
    """The jobs of a cluster: job name -> list of task addresses (or {task index: address} when sparse).

    tfnb differs from TF: the addresses are where a task's own process listens when it starts its server
    (`tf.train.Server(cluster, job_name, task_index)`); a local cluster puts every task on 127.0.0.1 instead.
    """

    def __init__(self, cluster) -> None:
        if isinstance(cluster, ClusterSpec):
            cluster = cluster.as_dict()
        elif isinstance(cluster, Mapping) and "job" in cluster and isinstance(cluster["job"], list):
            cluster = {job["name"]: dict(job["tasks"]) for job in cluster["job"]}  # an as_cluster_def() dict
        if not isinstance(cluster, Mapping):
            raise TypeError("`cluster` must be a dictionary mapping one or more job names to lists of network "
                            "addresses, or a `ClusterDef` protocol buffer")
        self._jobs: dict[str, dict[int, str]] = {}
        for job, tasks in cluster.items():
            if isinstance(tasks, (list, tuple)):
                self._jobs[job] = dict(enumerate(tasks))
            elif isinstance(tasks, Mapping):
                self._jobs[job] = {int(index): address for index, address in sorted(tasks.items())}
            else:
                raise TypeError(f"The tasks for job {job!r} must be a list or a dictionary from integers to "
                                f"strings.")

    def __bool__(self) -> bool:
        return bool(self._jobs)

    def __eq__(self, other) -> bool:
        return isinstance(other, ClusterSpec) and self.as_dict() == other.as_dict()

    def __repr__(self) -> str:
        return f"ClusterSpec({dict(sorted(self.as_dict().items()))!r})"

    @property
    def jobs(self) -> list[str]:
        """The job names, in the order given."""
        return list(self._jobs)

    def as_dict(self) -> dict:
        """job -> list of addresses, or {task index: address} for a job whose indices have gaps."""
        return {job: list(tasks.values()) if list(tasks) == list(range(len(tasks))) else dict(tasks)
                for job, tasks in self._jobs.items()}

    def as_cluster_def(self) -> dict:
        """The ClusterDef: {"job": [{"name": job, "tasks": {index: address}}]} (tfnb's is a dict, not a proto)."""
        return {"job": [{"name": job, "tasks": dict(tasks)} for job, tasks in sorted(self._jobs.items())]}

    def num_tasks(self, job_name: str) -> int:
        return len(self._tasks_of(job_name))

    def task_indices(self, job_name: str) -> list[int]:
        return list(self._tasks_of(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        tasks = self._tasks_of(job_name)
        if task_index not in tasks:
            raise ValueError(f"No task with index {task_index} in job {job_name!r}")
        return tasks[task_index]

    def job_tasks(self, job_name: str) -> list[str | None]:
        """The addresses of a job's tasks by index, None where an index has no task."""
        tasks = self._tasks_of(job_name)
        return [tasks.get(index) for index in range(max(tasks, default=-1) + 1)]

    def task_names(self) -> list[str]:
        """Every task's full name, `/job:ps/replica:0/task:0`, job by job (tfnb's)."""
        return [task_name(job, index) for job, tasks in self._jobs.items() for index in tasks]

    def _tasks_of(self, job_name: str) -> dict[int, str]:
        if job_name not in self._jobs:
            raise ValueError(f"No such job in cluster: {job_name!r}")
        return self._jobs[job_name]


def task_name(job: str, index: int) -> str:
    """`/job:<job>/replica:0/task:<index>`: the prefix of the task's device names."""
    return DeviceSpec(job, 0, index).to_string()


def task_resource(task: str) -> str:
    """The Dask resource a task's worker holds: `/job:ps/task:0` for the task `/job:ps/replica:0/task:0`."""
    spec = DeviceSpec.from_string(task)
    return f"/job:{spec.job}/task:{spec.task}"


def task_of_resource(resource: str) -> str | None:
    """The task a Dask resource names (see `task_resource`), or None for a resource of something else."""
    if not resource.startswith("/job:"):
        return None
    try:
        spec = DeviceSpec.from_string(resource)
    except ValueError:
        return None
    if spec.job is None or spec.task is None or spec.device_type is not None:
        return None
    return task_name(spec.job, spec.task)
