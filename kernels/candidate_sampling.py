"""Candidate sampler kernels: classes drawn on the host with one NumPy generator per op per session, and the
expected count of each class in a draw (TF's formulas: p * num_sampled, or with unique draws
1 - (1 - p) ** num_tries, num_tries being how many draws it took to find num_sampled distinct classes)."""

from __future__ import annotations

import numpy as np

from tfnb.kernels.registry import kernel


def _log_uniform(range_max: int):
    log_range = np.log(range_max + 1.0)

    def draw(rng: np.random.Generator, count: int) -> np.ndarray:
        # exp(u * log(range_max + 1)) - 1 has the log-uniform law once floored.
        values = np.floor(np.exp(rng.random(count) * log_range)).astype(np.int64) - 1
        return np.minimum(values, range_max - 1)

    def probability(classes: np.ndarray) -> np.ndarray:
        classes = classes.astype(np.float64)
        return np.log((classes + 2.0) / (classes + 1.0)) / log_range

    return draw, probability


def _uniform(range_max: int):
    def draw(rng: np.random.Generator, count: int) -> np.ndarray:
        return rng.integers(0, range_max, count, dtype=np.int64)

    return draw, lambda classes: np.full(np.shape(classes), 1.0 / range_max)


def _sampler_kernel(distribution):
    def factory(node):
        attrs = node.attrs
        num_sampled, unique, range_max = attrs["num_sampled"], attrs["unique"], attrs["range_max"]
        seeds = (attrs["seed"], attrs["seed2"])
        rng = np.random.default_rng(list(seeds) if any(seeds) else None)
        draw, probability = distribution(range_max)
        to_device = (lambda a: a) if node.xp is np else node.xp.asarray

        def expected(classes: np.ndarray, tries: int) -> np.ndarray:
            p = probability(classes)
            counts = -np.expm1(tries * np.log1p(-p)) if unique else p * num_sampled
            return counts.astype(np.float32)

        def run(true_classes):
            host = true_classes if isinstance(true_classes, np.ndarray) else true_classes.get()
            if unique:
                chosen, tries = [], 0
                seen = set()
                while len(chosen) < num_sampled:
                    tries += 1
                    value = int(draw(rng, 1)[0])
                    if value not in seen:
                        seen.add(value)
                        chosen.append(value)
                sampled = np.array(chosen, np.int64)
            else:
                sampled, tries = draw(rng, num_sampled), num_sampled
            return (to_device(sampled), to_device(expected(host, tries)), to_device(expected(sampled, tries)))

        return run
    return factory


kernel("LogUniformCandidateSampler")(_sampler_kernel(_log_uniform))
kernel("UniformCandidateSampler")(_sampler_kernel(_uniform))


@kernel("ComputeAccidentalHits")
def compute_accidental_hits(node):
    to_device = (lambda a: a) if node.xp is np else node.xp.asarray

    def run(true_classes, sampled):
        true_classes = true_classes if isinstance(true_classes, np.ndarray) else true_classes.get()
        sampled = sampled if isinstance(sampled, np.ndarray) else sampled.get()
        positions: dict[int, list[int]] = {}
        for position, candidate in enumerate(sampled.tolist()):
            positions.setdefault(candidate, []).append(position)
        rows, ids = [], []
        for row, labels in enumerate(true_classes.tolist()):
            for label in labels:
                for position in positions.get(label, ()):
                    rows.append(row)
                    ids.append(position)
        weights = np.full(len(rows), np.finfo(np.float32).min, np.float32)
        return to_device(np.array(rows, np.int32)), to_device(np.array(ids, np.int64)), to_device(weights)

    return run
