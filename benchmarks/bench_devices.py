"""Devices working at the same time: two towers on two logical CPUs against one, and the cost of a Send/Recv."""

from __future__ import annotations

import numpy as np

import tfnb
from benchmarks.harness import interleaved_medians, report

SIZE, DEPTH = 384, 6


def towers(devices: int):
    """Two independent towers of DEPTH matmul+tanh layers, each on its own device when `devices` is 2."""
    graph = tfnb.Graph()
    rng = np.random.default_rng(0)
    with graph.as_default():
        x = tfnb.placeholder(tfnb.float32, [SIZE, SIZE])
        sums = []
        for tower in range(2):
            with tfnb.device(f"/cpu:{tower % devices}"):
                h = x
                for _ in range(DEPTH):
                    h = tfnb.tanh(tfnb.matmul(h, tfnb.constant(rng.normal(size=(SIZE, SIZE)).astype(np.float32)
                                                               * 0.05)))
                sums.append(tfnb.reduce_sum(h))
        with tfnb.device("/cpu:0"):
            total = sums[0] + sums[1]
    # One intra-op thread each: what two devices gain is the second core, not BLAS threads.
    config = tfnb.ConfigProto(device_count={"CPU": 2}, intra_op_parallelism_threads=1)
    return tfnb.Session(graph=graph, config=config), x, total


def transfers(count: int, devices: int):
    """`count` small tensors made on CPU:0 and read on CPU:`devices - 1` (CPU:0 itself when devices is 1)."""
    graph = tfnb.Graph()
    with graph.as_default():
        x = tfnb.placeholder(tfnb.float32, [16])
        with tfnb.device("/cpu:0"):
            made = [x + float(k) for k in range(count)]
        with tfnb.device(f"/cpu:{devices - 1}"):
            total = tfnb.add_n([m * 2.0 for m in made])
    config = tfnb.ConfigProto(device_count={"CPU": 2}, inter_op_parallelism_threads=1)
    return tfnb.Session(graph=graph, config=config), x, total


def main() -> None:
    value = np.random.default_rng(1).normal(size=(SIZE, SIZE)).astype(np.float32)
    one, one_x, one_total = towers(1)
    two, two_x, two_total = towers(2)
    medians = interleaved_medians({"one device": lambda: one.run(one_total, {one_x: value}),
                                   "two devices": lambda: two.run(two_total, {two_x: value})}, rounds=15, number=5)
    report(f"two towers of {DEPTH} {SIZE}x{SIZE} matmul+tanh layers (per step)", medians, "one device", 1e-3, "ms",
           "two devices ≤ 0.6x one device")
    count, small = 200, np.zeros(16, np.float32)
    local, local_x, local_total = transfers(count, 1)
    remote, remote_x, remote_total = transfers(count, 2)
    medians = interleaved_medians({"same device": lambda: local.run(local_total, {local_x: small}),
                                   "across devices": lambda: remote.run(remote_total, {remote_x: small})},
                                  rounds=15, number=20)
    report(f"{count} tensors read on their own device or on another (per step)", medians, "same device", 1e-3, "ms")
    per_transfer = (medians["across devices"] - medians["same device"]) / count * 1e6
    print(f"  one Send/Recv between two logical CPUs: {per_transfer:.2f} µs (no copy: one process, one address space)")


if __name__ == "__main__":
    main()
