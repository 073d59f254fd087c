"""Candidate samplers (a few classes drawn for sampled losses) and the accidental hits among them.

log_uniform_candidate_sampler draws class c with probability (log(c + 2) - log(c + 1)) / log(range_max + 1),
Zipf-like, for vocabularies sorted by frequency; uniform_candidate_sampler draws every class alike. Each also
gives the expected count of each true and sampled class in the draw, which sampled losses subtract as
log(Q). compute_accidental_hits finds the sampled classes that are a row's true class.
"""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, not_differentiable, register_op
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape
from tfnb.ops import math_ops
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.random_ops import get_seed

__all__ = ["log_uniform_candidate_sampler", "uniform_candidate_sampler", "compute_accidental_hits"]


def _check_true_classes(op) -> TensorShape:
    true_classes = op.inputs[0]
    if true_classes.dtype is not dtypes.int64:
        raise TypeError(f"true_classes must be int64, got {true_classes.dtype.name}")
    if true_classes.shape.ndims not in (None, 2):
        raise ValueError(f"true_classes must be a matrix [batch, num_true], got shape {true_classes.shape}")
    return true_classes.shape


def _infer_sampler(op):
    shape = _check_true_classes(op)
    if op.attrs["unique"] and op.attrs["num_sampled"] > op.attrs["range_max"]:
        raise ValueError(f"num_sampled ({op.attrs['num_sampled']}) cannot exceed range_max "
                         f"({op.attrs['range_max']}) when unique is True")
    batch = shape[0].value if shape.ndims else None
    sampled = TensorShape([op.attrs["num_sampled"]])
    return [(dtypes.int64, sampled), (dtypes.float32, TensorShape([batch, op.attrs["num_true"]])),
            (dtypes.float32, sampled)]


def _infer_accidental_hits(op):
    _check_true_classes(op)
    if op.inputs[1].dtype is not dtypes.int64:
        raise TypeError(f"sampled_candidates must be int64, got {op.inputs[1].dtype.name}")
    vector = TensorShape([None])
    return [(dtypes.int32, vector), (dtypes.int64, vector), (dtypes.float32, vector)]


# -- examples: with repeats allowed (unique=False), an expected count is probability * num_sampled ------------

_TRUE = np.array([[1, 4], [0, 2]], np.int64)


def _log_uniform_probability(classes, range_max: int):
    return (math_ops.log(classes + 2.0) - math_ops.log(classes + 1.0)) / np.log(range_max + 1.0)


def _counts_check(sampler, probability):
    """[true expected counts, whether each sampled class is in range and has the count its probability gives]."""
    def build(true_classes):
        sampled, true_count, sampled_count = sampler(true_classes, 2, 6, False, 9, seed=5)
        expected = 6.0 * probability(math_ops.cast(sampled, dtypes.float32), 9)
        in_range = math_ops.logical_and(sampled >= 0, sampled < 9)
        return [true_count, math_ops.logical_and(in_range, math_ops.abs(sampled_count - expected) < 1e-5)]
    return build


def _np_log_uniform_counts(true_classes):
    return [6 * np.log((true_classes + 2.0) / (true_classes + 1.0)) / np.log(10.0), np.ones(6, bool)]


_LOG_UNIFORM = Example(_counts_check(lambda *a, **k: log_uniform_candidate_sampler(*a, **k), _log_uniform_probability),
                       _np_log_uniform_counts, inputs=(_TRUE,), differentiable=False)
_UNIFORM = Example(_counts_check(lambda *a, **k: uniform_candidate_sampler(*a, **k), lambda c, r: c * 0 + 1.0 / r),
                   lambda t: [np.full((2, 2), 6 / 9), np.ones(6, bool)], inputs=(_TRUE,), differentiable=False)
_HITS = Example(lambda t, s: list(compute_accidental_hits(t, s, num_true=2)),
                lambda t, s: [np.array([0, 0, 1], np.int32), np.array([1, 3, 2], np.int64),
                              np.full(3, np.finfo(np.float32).min, np.float32)],
                inputs=(_TRUE, np.array([3, 1, 2, 4], np.int64)), differentiable=False)

_SAMPLER_ATTRS = {"num_true": "int", "num_sampled": "int", "unique": "bool", "range_max": "int", "seed": "int",
                  "seed2": "int"}
register_op("LogUniformCandidateSampler", _infer_sampler, dtypes=(dtypes.int64,), stateful=True,
            examples=[_LOG_UNIFORM], attrs=_SAMPLER_ATTRS)
register_op("UniformCandidateSampler", _infer_sampler, dtypes=(dtypes.int64,), stateful=True, examples=[_UNIFORM],
            attrs=_SAMPLER_ATTRS)
register_op("ComputeAccidentalHits", _infer_accidental_hits, dtypes=(dtypes.int64,), examples=[_HITS],
            attrs={"num_true": "int", "seed": "int", "seed2": "int"})
not_differentiable("LogUniformCandidateSampler", "UniformCandidateSampler", "ComputeAccidentalHits")


def _sampler(op_type: str, true_classes, num_true: int, num_sampled: int, unique: bool, range_max: int, seed,
             name: str | None) -> tuple[Tensor, Tensor, Tensor]:
    seed1, seed2 = get_seed(seed)
    attrs = {"num_true": int(num_true), "num_sampled": int(num_sampled), "unique": bool(unique),
             "range_max": int(range_max), "seed": seed1 or 0, "seed2": seed2 or 0}
    true_classes = convert_to_tensor(true_classes, dtype=dtypes.int64, name="true_classes")
    return tuple(get_default_graph().create_op(op_type, (true_classes,), attrs, name).outputs)


def log_uniform_candidate_sampler(true_classes, num_true: int, num_sampled: int, unique: bool, range_max: int,
                                  seed: int | None = None, name: str | None = None) -> tuple:
    """(sampled classes, expected counts of the true classes, of the sampled ones), drawing from a log-uniform
    (Zipfian) distribution over [0, range_max); without repeats if `unique`.

    tfnb draws with NumPy's generator, so the classes drawn differ from TF's for the same seed.
    """
    return _sampler("LogUniformCandidateSampler", true_classes, num_true, num_sampled, unique, range_max, seed, name)


def uniform_candidate_sampler(true_classes, num_true: int, num_sampled: int, unique: bool, range_max: int,
                              seed: int | None = None, name: str | None = None) -> tuple:
    """(sampled classes, expected counts of the true classes, of the sampled ones), drawing uniformly from
    [0, range_max); without repeats if `unique`.

    tfnb draws with NumPy's generator, so the classes drawn differ from TF's for the same seed.
    """
    return _sampler("UniformCandidateSampler", true_classes, num_true, num_sampled, unique, range_max, seed, name)


def compute_accidental_hits(true_classes, sampled_candidates, num_true: int, seed: int | None = None,
                            name: str | None = None) -> tuple:
    """(rows, positions in sampled_candidates, weights -FLT_MAX) for each sampled class that is one of a row's
    true classes, so a sampled loss can remove it."""
    inputs = (convert_to_tensor(true_classes, dtype=dtypes.int64, name="true_classes"),
              convert_to_tensor(sampled_candidates, dtype=dtypes.int64, name="sampled_candidates"))
    seed1, seed2 = get_seed(seed)
    attrs = {"num_true": int(num_true), "seed": seed1 or 0, "seed2": seed2 or 0}
    return tuple(get_default_graph().create_op("ComputeAccidentalHits", inputs, attrs, name).outputs)
