"""Concurrent steps fill a device's idle time (paper section 7.3): steps waiting on a queue overlap with compute.

Each step asks a slow store for its data (an enqueue on a request queue), waits for the answer on
a response queue, the time a device would sit idle, then computes with it (a chain of matmuls).
The store answers each request `latency` seconds after it arrives, several requests at once, as a
remote disk would. One thread runs N steps one after another; two or eight threads run the same N
steps between them, so some compute while others wait. Run: `python -m benchmarks.bench_concurrent_steps`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np

import tfnb

SIZE = 384
DEPTH = 6
THREADS = (1, 2, 8)  # 24 steps share evenly among each


@dataclass
class Demo:
    """A session running steps that each wait for data from a slow store, then compute."""

    sess: tfnb.Session
    step: tfnb.Tensor
    data: tfnb.Tensor
    take_request: tfnb.Tensor
    answer: tfnb.Operation
    close: tfnb.Operation


def build(size: int = SIZE, depth: int = DEPTH) -> Demo:
    """The graph: request -> wait for a response -> `depth` matmuls of size x size."""
    graph = tfnb.Graph()
    with graph.as_default():
        requests = tfnb.FIFOQueue(64, tfnb.int32, shapes=[[]], name="requests")
        responses = tfnb.FIFOQueue(64, tfnb.float32, shapes=[[size, size]], name="responses")
        with tfnb.control_dependencies([requests.enqueue(1)]):
            data = responses.dequeue()
        weights = tfnb.constant(np.random.default_rng(0).standard_normal((size, size)).astype(np.float32) / size ** 0.5)
        out = data
        for _ in range(depth):
            out = tfnb.tanh(tfnb.matmul(out, weights))
        step = tfnb.reduce_sum(out)
        answer = responses.enqueue(tfnb.ones([size, size]))
        close = requests.close(cancel_pending_enqueues=True)
        return Demo(tfnb.Session(graph=graph), step, data, requests.dequeue(), answer, close)


def compute_seconds(demo: Demo, repeats: int = 5) -> float:
    """The median time of a step's compute alone (its data fed, so nothing waits)."""
    value = np.ones(demo.data.shape.as_list(), np.float32)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        demo.sess.run(demo.step, {demo.data: value})
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _serve(demo: Demo, latency: float) -> threading.Thread:
    """The slow store: answers each request `latency` seconds after it arrives, until the request queue closes."""
    def answer():
        demo.sess.run(demo.answer)

    def serve():
        try:
            while True:
                demo.sess.run(demo.take_request)
                threading.Timer(latency, answer).start()
        except tfnb.framework.errors.OutOfRangeError:
            pass
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def run_steps(demo: Demo, steps: int, threads: int, latency: float) -> float:
    """Seconds for `threads` threads to run `steps` steps in all (each thread an equal share)."""
    server = _serve(demo, latency)
    workers = [threading.Thread(target=lambda: [demo.sess.run(demo.step) for _ in range(steps // threads)])
               for _ in range(threads)]
    start = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - start
    demo.sess.run(demo.close)
    server.join()
    return elapsed


def main(steps: int = 24, rounds: int = 5) -> None:
    compute = compute_seconds(build())
    latency = compute  # a wait as long as the compute: the most there is to gain
    times: dict[int, list[float]] = {threads: [] for threads in THREADS}
    for _ in range(rounds):  # interleaved, so load from elsewhere hits all alike
        for threads in times:
            times[threads].append(run_steps(build(), steps, threads, latency))
    medians = {threads: float(np.median(runs)) for threads, runs in times.items()}
    print(f"\nconcurrent steps: {steps} steps, each waiting {latency * 1e3:.1f} ms for data, then computing "
          f"{compute * 1e3:.1f} ms (median of {rounds})  [ideal with 2 or more threads: 0.5x]")
    for threads, seconds in medians.items():
        label = f"{threads} thread{'s' if threads > 1 else ''}"
        print(f"  {label:<10} {seconds:8.3f} s   {seconds / medians[1]:5.2f}x 1 thread")

if __name__ == "__main__":
    main()
