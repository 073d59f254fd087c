"""Algorithm choice: every algorithm that claims a key is timed on first sight; the fastest is kept.

A key is (direction, shapes, geometry, dtype, array module); the choice is process-wide. How a convolution's two
gradients share the threads is chosen the same way (run_gradients).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from tfnb.framework.common_shapes import Geometry
from tfnb.kernels.conv.banded import banded_backprop_filter, banded_claims, banded_forward
from tfnb.kernels.conv.fft import fft_backprop_filter, fft_backprop_input, fft_forward
from tfnb.kernels.conv.gemm import gemm_backprop_filter, gemm_forward, via_forward
from tfnb.kernels.conv.rows import rows_backprop_filter, rows_claims, rows_forward
from tfnb.kernels.conv.scratch import Scratch, release_unused
from tfnb.kernels.conv.winograd import WINOGRAD_3X3, WINOGRAD_4X4_3X3, WINOGRAD_5X5
from tfnb.kernels.host import synchronize


def _always(geo: Geometry, channels: int, filters: int) -> bool:
    return True


def _wide(geo: Geometry, channels: int, filters: int) -> bool:
    """Windows more than one column wide (see rows_claims)."""
    return geo.w.taps > 1


_WINOGRADS = {"winograd": WINOGRAD_3X3, "winograd 4x4": WINOGRAD_4X4_3X3, "winograd 5x5": WINOGRAD_5X5}

ALGORITHMS = {
    "forward": {"gemm": (_always, gemm_forward), "fft": (_always, fft_forward), "rows": (rows_claims, rows_forward),
                "banded": (banded_claims, banded_forward),
                **{name: (w.claims, w.forward) for name, w in _WINOGRADS.items()}},
    "backprop_input": {"gemm": (_always, via_forward(gemm_forward)), "fft": (_always, fft_backprop_input),
                       "rows": (_wide, via_forward(rows_forward)),  # the spread input has stride 1
                       **{name: (w.claims, via_forward(w.forward)) for name, w in _WINOGRADS.items()}},
    "backprop_filter": {"gemm": (_always, gemm_backprop_filter), "fft": (_always, fft_backprop_filter),
                        "rows": (rows_claims, rows_backprop_filter), "banded": (banded_claims, banded_backprop_filter),
                        **{name: (w.claims, w.backprop_filter) for name, w in _WINOGRADS.items()}},
}
"""direction -> algorithm name -> (claims(geometry, channels, filters) -> bool, fn(scratch, a, b, geometry) -> result).

`channels` and `filters` are those of the direction's correlation (claim_arguments): for the input gradient, dy's
channels and the input's.
"""

_CHOSEN: dict[tuple, str] = {}


def chosen_algorithms() -> dict[tuple, str]:
    """The algorithm picked so far per key (direction, shape a, shape b, geometry, dtype, array module)."""
    return dict(_CHOSEN)


def clear_algorithm_cache() -> None:
    """Forgets every choice, so the next call of each key measures again."""
    _CHOSEN.clear()


def chosen(direction: str, a, b, geo: Geometry, xp) -> str | None:
    """The algorithm already picked for this call's key, or None if it has not been measured."""
    return _CHOSEN.get(_key(direction, a, b, geo, xp))


def _seconds(scratch: Scratch, fn, args) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn(scratch, *args)
    synchronize(scratch.xp)
    return time.perf_counter() - start, result


def _measure(scratch: Scratch, candidates: dict, args, rounds: int = 3) -> tuple[str, object]:
    """The fastest candidate and its result: each runs once to build its plans, then in alternating rounds.

    The minimum over rounds is the time kept: other load on the machine only ever adds to it.
    """
    results = {name: fn(scratch, *args) for name, fn in candidates.items()}
    if len(candidates) == 1:
        return next(iter(results.items()))
    best = dict.fromkeys(candidates, math.inf)
    for _ in range(rounds):
        for name, fn in candidates.items():
            elapsed, results[name] = _seconds(scratch, fn, args)
            best[name] = min(best[name], elapsed)
    name = min(best, key=best.get)
    return name, results[name]


def claim_arguments(direction: str, a, b, geo: Geometry) -> tuple:
    """The arguments of an algorithm's claim for a call of `direction` with arrays a and b."""
    return geo, a.shape[3], b.shape[2] if direction == "backprop_input" else b.shape[3]


def _key(direction: str, a, b, geo: Geometry, xp) -> tuple:
    return direction, a.shape, b.shape, geo, a.dtype.str, xp.__name__


def run_gradients(scratch: Scratch, dy, w, geo: Geometry, ways: dict[str, Callable[[], tuple]]) -> tuple:
    """A convolution's (input gradient, filter gradient) by the way of running them chosen for this key, measured on
    first sight as the algorithms are (key direction "gradients", shapes of dy and the filter): `ways` maps each
    name to a function that computes both. The first way's first run also picks each direction's algorithm.

    Side by side, one direction per thread, suits small layers, whose directions split across threads poorly; one
    after the other, each split across the threads, suits large ones, where two directions at once contend for
    memory: GoogLeNet at batch 2, 0.83x the time at its 56x56 layer and 1.32x at a 7x7 one.
    """
    key = _key("gradients", dy, w, geo, scratch.xp)
    name = _CHOSEN.get(key)
    if name is not None:
        return ways[name]()
    name, result = _measure(scratch, {name: (lambda _, way=way: way()) for name, way in ways.items()}, ())
    _CHOSEN[key] = name
    release_unused()  # the other way's arrays
    return result


def run_convolution(scratch: Scratch, direction: str, a, b, geo: Geometry, epilogue=None):
    """One direction of a convolution by the algorithm chosen for this key (measured on first sight).

    `epilogue` (forward only) runs on each chunk of outputs as soon as they are written.
    """
    key, args = _key(direction, a, b, geo, scratch.xp), (a, b, geo) + ((epilogue,) if epilogue is not None else ())
    name = _CHOSEN.get(key)
    if name is not None:
        return ALGORITHMS[direction][name][1](scratch, *args)
    candidates = {n: fn for n, (claims, fn) in ALGORITHMS[direction].items()
                  if claims(*claim_arguments(direction, a, b, geo))}
    name, result = _measure(scratch, candidates, args)
    _CHOSEN[key] = name
    release_unused()  # the other candidates' arrays
    return result

