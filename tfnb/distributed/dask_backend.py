"""Everything tfnb does with Dask distributed, in one module (tested with the versions pyproject.toml pins).

- A task is a Dask worker holding the resource named after the task (`/job:ps/task:0`); `TaskRuntimePlugin`, a
  worker plugin registered once through the scheduler (which installs it again on a restarted worker), hosts the
  task's runtime (tfnb/distributed/task_runtime.py) and adds `tfnb_*` handlers to the worker's server.
- The master (`DaskCluster`, in the client's process) calls those handlers over Dask's comms, straight to each
  worker; a Send pushes its value from one worker to another the same way. Values travel as Dask serializes
  them (NumPy arrays as raw frames); nothing goes through the scheduler but the question of who holds a task.
- `start_local_cluster` starts a scheduler and one worker process (under a nanny, which restarts it if it dies)
  per task, all listening on 127.0.0.1; `TaskWorker` makes this process one task's worker.
- A worker is lost when its connection breaks or the scheduler stops seeing its heartbeats (`worker_ttl_s`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import threading
import time
from collections.abc import Iterator

from distributed import Client, Nanny, Scheduler, SpecCluster, Worker
from distributed.comm.core import CommClosedError
from distributed.diagnostics.plugin import WorkerPlugin
from distributed.protocol import to_serialize

from tfnb.distributed.cluster_spec import task_of_resource, task_resource
from tfnb.distributed.task_runtime import ErrorReport, TaskRuntime, Transport

PLUGIN_NAME = "tfnb-task-runtime"
LIVENESS_CHECK_S = 1.0   # while a step runs, how often the master asks the scheduler which workers it still sees
CALL_TIMEOUT_S = 60.0    # a call that is not a step (describe, extend, register, abort) fails after this
# Dask retries connecting to an address until the call's timeout, so a call to a worker that just died (while the
# scheduler still lists it) waits that long: calls that may reach one (asking whether a task is up, telling a
# task to forget a closed session) give up sooner; a new session asks again, a closing one has nothing to lose.
QUICK_CALL_TIMEOUT_S = 2.0
TASK_POLL_S = 0.2        # how often a new session looks again for tasks that no worker hosts yet
QUIET = logging.WARNING  # Dask's INFO lines (workers joining, plugins starting) are not shown


class TaskRuntimePlugin(WorkerPlugin):
    """Hosts a TaskRuntime on the worker holding a task's resource (other workers are left alone)."""

    idempotent = True  # registering it again (another master) keeps the runtime, its variables and partitions
    name = PLUGIN_NAME

    def __init__(self, device_count: dict | None = None) -> None:
        self.device_count = device_count
        self.runtime: TaskRuntime | None = None

    def setup(self, worker: Worker) -> None:
        tasks = [task for task in map(task_of_resource, worker.state.total_resources) if task is not None]
        if len(tasks) != 1:
            return
        self.runtime = TaskRuntime(tasks[0], _WorkerTransport(worker), self.device_count)
        worker.handlers.update(_handlers(self.runtime))

    def teardown(self, worker: Worker) -> None:
        if self.runtime is not None:
            self.runtime.close()


def _handlers(runtime: TaskRuntime) -> dict:
    """The worker's `tfnb_*` handlers: what masters and other tasks call."""

    async def run_step(**request):
        loop = asyncio.get_running_loop()
        try:
            values, trace = await loop.run_in_executor(runtime.threads,
                                                       functools.partial(runtime.run_step, **request))
        except Exception as error:  # noqa: BLE001 (the master raises it again, naming the op in its own graph)
            return {"error": ErrorReport.of(error).__dict__}
        return {"values": to_serialize(values), "trace": to_serialize(trace)}

    async def register(master: str, definition):
        return await asyncio.get_running_loop().run_in_executor(runtime.threads, runtime.register, master,
                                                                definition)

    return {
        "tfnb_describe": lambda: {**runtime.describe(), "pid": os.getpid(), "bytes_pushed": runtime.bytes_pushed},
        "tfnb_extend": runtime.extend,
        "tfnb_register": register,
        "tfnb_run_step": run_step,
        "tfnb_deliver": runtime.deliver,
        "tfnb_abort": runtime.abort,
        "tfnb_forget": runtime.forget,
        "tfnb_reset": runtime.reset,
    }


class _WorkerTransport(Transport):
    """Pushes a Send's value to another task's worker over the worker's own connection pool."""

    def __init__(self, worker: Worker, timeout_s: float = CALL_TIMEOUT_S) -> None:
        self.worker, self.timeout_s = worker, timeout_s

    def push(self, address: str, step_id: str, key: str, value):
        call = self.worker.rpc(address).tfnb_deliver(step_id=step_id, key=key, value=to_serialize(value))
        return asyncio.run_coroutine_threadsafe(asyncio.wait_for(call, self.timeout_s),
                                                self.worker.loop.asyncio_loop)


class DaskCluster:
    """The master's connection to a Dask cluster whose workers host tasks (one per task, found by resource).

    `address` is the scheduler's (`tcp://10.0.0.5:8786`, `tls://...` with `security`, a `distributed.Security`).
    """

    def __init__(self, address: str, security=None, device_count: dict | None = None) -> None:
        self.address = address
        self.client = Client(address, security=security, set_as_default=False, timeout=CALL_TIMEOUT_S)
        self.client.register_plugin(TaskRuntimePlugin(device_count), name=PLUGIN_NAME)
        self._running: dict[str, tuple[asyncio.Task, dict[str, str]]] = {}  # step id -> its wait, its tasks

    def tasks(self) -> dict[str, str]:
        """task name -> the address of the worker holding it, now."""
        return _tasks_of(self.client.scheduler_info(n_workers=-1)["workers"])

    def describe(self, tasks: list[str], timeout_s: float) -> dict[str, dict]:
        """Each task's description (its address, devices), waiting up to `timeout_s` for the tasks no worker holds."""
        deadline = time.monotonic() + timeout_s
        while True:
            found = self.tasks()
            ready = {task: self._describe(found[task]) for task in tasks if task in found}
            missing = [task for task in tasks if ready.get(task) is None]
            if not missing:
                return {task: {**ready[task], "address": found[task]} for task in tasks}
            if time.monotonic() > deadline:
                raise TimeoutError(f"no Dask worker hosts {', '.join(missing)} (each task is a worker holding the "
                                   f"resource named after it, e.g. `dask worker --resources "
                                   f"'{task_resource(missing[0])}=1'`)")
            time.sleep(TASK_POLL_S)

    def _describe(self, address: str) -> dict | None:
        """A worker's task description, None while its runtime is not set up (a worker that just started)."""
        try:
            return self.call(address, "tfnb_describe", quick=True)
        except (TimeoutError, KeyError, OSError, CommClosedError):
            return None

    def call(self, address: str, op: str, quick: bool = False, **arguments):
        """Calls handler `op` of the worker at `address` and returns its reply (`quick`: see QUICK_CALL_TIMEOUT_S)."""
        return self.client.sync(_call, self.client, address, op, arguments, _timeout(quick))

    def call_all(self, calls: dict[str, tuple[str, str, dict]], quick: bool = False) -> dict[str, object]:
        """Several calls at once: name -> (address, op, arguments); name -> reply, or the exception raised."""
        return self.client.sync(_call_all, self.client, calls, _timeout(quick))

    def run_step(self, requests: dict[str, tuple[str, dict]], step_id: str) -> dict[str, dict]:
        """Runs a step's partitions: task -> (address, request); task -> reply ({"values"} or {"error"}).

        When one task fails or is lost, the step is aborted on the others, so none waits for it, and the replies
        (those that came) are returned at once.
        """
        return self.client.sync(self._run_step, requests, step_id)

    async def _run_step(self, requests: dict[str, tuple[str, dict]], step_id: str) -> dict[str, dict]:
        self._running[step_id] = (asyncio.current_task(), {task: address for task, (address, _) in requests.items()})
        try:
            return await _run_step(self.client, requests, step_id)
        except asyncio.CancelledError:
            why = "the session was closed while the step ran"
            return {task: {"error": {"kind": "CancelledError", "op": None, "message": why}} for task in requests}
        finally:
            self._running.pop(step_id, None)

    def cancel_steps(self, prefix: str) -> None:
        """Ends the running steps whose ids start with `prefix` (a closing session's): they raise CancelledError."""
        self.client.sync(self._cancel_steps, prefix)

    async def _cancel_steps(self, prefix: str) -> None:
        for step_id, (waiting, addresses) in list(self._running.items()):
            if step_id.startswith(prefix):
                waiting.cancel()
                _in_background(_abort(self.client, addresses, step_id))

    def worker_pids(self) -> dict[str, int]:
        """task -> the process id of the worker holding it (what a test kills)."""
        return {task: self.call(address, "tfnb_describe")["pid"] for task, address in self.tasks().items()}

    def close(self) -> None:
        self.client.close()


def _timeout(quick: bool) -> float:
    return QUICK_CALL_TIMEOUT_S if quick else CALL_TIMEOUT_S


def _tasks_of(workers: dict) -> dict[str, str]:
    found = {}
    for address, info in workers.items():
        for resource in info.get("resources", {}):
            task = task_of_resource(resource)
            if task is not None:
                found[task] = address
    return found


async def _call(client: Client, address: str, op: str, arguments: dict, timeout_s: float | None):
    reply = getattr(client.rpc(address), op)(**_serializable(arguments))
    return await (asyncio.wait_for(reply, timeout_s) if timeout_s else reply)


def _serializable(arguments: dict) -> dict:
    """Arguments as Dask sends them: arrays and tfnb objects by Dask's serialization, plain values as they are."""
    return {name: value if isinstance(value, str | int | float | bool | type(None) | dict) else to_serialize(value)
            for name, value in arguments.items()}


async def _call_all(client: Client, calls: dict[str, tuple[str, str, dict]], timeout_s: float) -> dict[str, object]:
    names = list(calls)
    replies = await asyncio.gather(*(_call(client, *calls[name], timeout_s) for name in names),
                                   return_exceptions=True)
    return dict(zip(names, replies))


async def _run_step(client: Client, requests: dict[str, tuple[str, dict]], step_id: str) -> dict[str, dict]:
    running = {asyncio.ensure_future(_call(client, address, "tfnb_run_step", request, None)): task
               for task, (address, request) in requests.items()}
    replies: dict[str, dict] = {}
    try:
        while running:
            done, _ = await asyncio.wait(running, timeout=LIVENESS_CHECK_S, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                task = running.pop(future)
                replies[task] = _reply_of(future, task)
            if not done:
                live = await _live_workers(client)
                for future, task in list(running.items()):
                    if requests[task][0] not in live:
                        future.cancel()
                        running.pop(future)
                        replies[task] = _lost(task, "the scheduler lost its worker (no heartbeat)")
            if any("error" in reply for reply in replies.values()) and running:
                # The step failed: the others stop waiting for it (one blocked in a kernel is not waited for), and
                # the error is raised without waiting for them to hear it (a lost one never would).
                _in_background(_abort(client, {task: requests[task][0] for task in running.values()}, step_id))
                break
    finally:
        for future in running:
            future.cancel()
    return replies


def _reply_of(future: asyncio.Future, task: str) -> dict:
    error = future.exception()
    if error is None:
        return future.result()
    return _lost(task, f"{type(error).__name__}: {error}")


def _lost(task: str, why: str) -> dict:
    return {"error": {"kind": "UnavailableError", "op": None, "message": f"Task {task} is unavailable: {why}"}}


async def _live_workers(client: Client) -> set[str]:
    identity = await client.scheduler.identity(n_workers=-1)
    return set(identity["workers"])


_BACKGROUND: set[asyncio.Task] = set()


def _in_background(coroutine) -> None:
    """Runs `coroutine` on the loop without waiting for it (kept referenced until it ends)."""
    task = asyncio.ensure_future(coroutine)
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)


async def _abort(client: Client, addresses: dict[str, str], step_id: str) -> None:
    """Tells each task to abort the step (a task that cannot be reached has nothing left to abort)."""
    await asyncio.gather(*(_call(client, address, "tfnb_abort", {"step_id": step_id}, CALL_TIMEOUT_S)
                           for address in addresses.values()), return_exceptions=True)


# -- starting workers ---------------------------------------------------------------------------------------------


class _EnvironmentKeeper:
    """This process's own values of the variables a nanny sets before it spawns a worker, put back once no nanny is
    spawning one (a cluster starts its nannies at once, each setting them; a restart sets them again)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spawning = 0
        self._values: dict[str, str | None] = {}

    @contextlib.contextmanager
    def around_spawn(self, names) -> Iterator[None]:
        with self._lock:
            if not self._spawning:
                self._values = {}
            for name in names:
                self._values.setdefault(name, os.environ.get(name))
            self._spawning += 1
        try:
            yield
        finally:
            with self._lock:
                self._spawning -= 1
                if not self._spawning:
                    for name, value in self._values.items():
                        if value is None:
                            os.environ.pop(name, None)
                        else:
                            os.environ[name] = value


_ENVIRONMENT = _EnvironmentKeeper()
_TRIM = "MALLOC_TRIM_THRESHOLD_"


class _Nanny(Nanny):
    """A Nanny that leaves this process's environment as it found it.

    Dask's Nanny sets `distributed.nanny.pre-spawn-environ` (OMP_NUM_THREADS, MKL_NUM_THREADS and
    OPENBLAS_NUM_THREADS of 1, MALLOC_TRIM_THRESHOLD_) and PYTHONHASHSEED in this process's os.environ before it
    spawns a worker, and leaves them there: every process started afterwards inherited them. `make bench` times the
    paper's models after its cluster benchmark: GoogLeNet's step took tfnb 603 ms, TF1 525 and PyTorch (on one
    thread) 1698 there, and 414, 411 and 570 once the variables were put back. The worker still gets them, but for
    MALLOC_TRIM_THRESHOLD_ unless this process has it set: with it glibc hands freed memory back to the system at
    once, and the arrays that kernels make fresh every step fault their pages in again (GoogLeNet's step in one
    process: 53,662 minor faults and 737 ms with it at 65536, against 109 and 421 ms without).
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if _TRIM not in os.environ:
            self.pre_spawn_env.pop(_TRIM, None)
            self.env.pop(_TRIM, None)

    async def instantiate(self):
        with _ENVIRONMENT.around_spawn(self.pre_spawn_env):
            return await super().instantiate()


def start_local_cluster(tasks: list[str], security=None, worker_ttl_s: float | None = None) -> SpecCluster:
    """A scheduler and one worker process per task, on 127.0.0.1 only (TLS with `security`); `close()` ends them."""
    protocol = "tls" if security is not None and security.require_encryption else "tcp"
    common = {"host": "127.0.0.1", "security": security, "protocol": protocol}
    scheduler = {"cls": Scheduler, "options": {**common, "dashboard": False, "dashboard_address": "127.0.0.1:0",
                                               "worker_ttl": worker_ttl_s}}
    workers = {task: {"cls": _Nanny, "options": {**common, "nthreads": 1, "name": task, "dashboard": False,
                                                "resources": {task_resource(task): 1}, "silence_logs": QUIET}}
               for task in tasks}
    return SpecCluster(workers=workers, scheduler=scheduler, security=security, silence_logs=QUIET,
                       name="tfnb")


class TaskWorker:
    """A Dask worker in this process, holding one task (what `tf.train.Server(cluster, job, task)` starts)."""

    def __init__(self, scheduler: str, task: str, listen: str, security=None) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"tfnb-worker {task}", daemon=True)
        self._thread.start()
        host, _, port = listen.rpartition(":")
        options = {"resources": {task_resource(task): 1}, "nthreads": 1, "name": task, "host": host or None,
                   "port": int(port) if port else 0, "security": security, "dashboard": False}
        self.worker = self._run(_started_worker(scheduler, options))

    def _run(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def wait(self) -> None:
        """Blocks until the worker stops (the scheduler closed, or `stop()` from another thread)."""
        self._run(self.worker.finished())

    def stop(self) -> None:
        if self._loop.is_running():
            self._run(self.worker.close())
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()


async def _started_worker(scheduler: str, options: dict) -> Worker:
    worker = Worker(scheduler, **options)
    await worker
    return worker

