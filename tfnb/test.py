"""`tfnb.test`: helpers for testing ops, public so that users who add ops can use them too."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tfnb.autodiff.gradients import gradients
from tfnb.client.session import Session
from tfnb.framework import dtypes
from tfnb.framework.graph import Graph
from tfnb.framework.indexed_slices import IndexedSlices
from tfnb.ops.array_ops import placeholder
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.runtime.tracing import RunMetadata, RunOptions


def check_gradients(build: Callable, inputs: Sequence[np.ndarray], *, eps: float = 1e-6, rtol: float = 1e-4,
                    atol: float = 1e-6, directions: int = 2, seed: int = 0) -> None:
    """Checks tf.gradients of `build(*inputs)` against central finite differences along random directions.

    `build` receives one placeholder per input and returns a tensor or a list of tensors. The outputs
    are weighted by fixed random tensors (so every output element matters), and for each random
    direction v the analytic derivative sum(grad · v) must match (L(x + eps v) - L(x - eps v)) / 2eps.
    Floating inputs are differentiated; others (indices, labels) stay fixed. Raises AssertionError.
    """
    rng = np.random.default_rng(seed)
    inputs = [np.asarray(x) for x in inputs]
    graph = Graph()
    with graph.as_default():
        feeds = [placeholder(dtypes.as_dtype(x.dtype), x.shape) for x in inputs]
        outputs = build(*feeds)
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        outputs = [convert_to_tensor(y) for y in outputs]
        with Session(graph=graph) as sess:
            # Shaped like the outputs' values: their static shapes may be partly unknown.
            forward = sess.run(outputs, dict(zip(feeds, inputs)))
            weights = [rng.standard_normal(np.shape(v)).astype(y.dtype.np_dtype) for v, y in zip(forward, outputs)]
            differentiable = [i for i, x in enumerate(inputs) if x.dtype.kind == "f"]
            grads = gradients(outputs, [feeds[i] for i in differentiable], grad_ys=weights)
            grads = [convert_to_tensor(g) if isinstance(g, IndexedSlices) else g for g in grads]

            def loss(values) -> float:
                results = sess.run(outputs, dict(zip(feeds, values)))
                return float(sum(np.sum(np.asarray(r, np.float64) * w) for r, w in zip(results, weights)))

            present = [g for g in grads if g is not None]
            analytic = sess.run(present, dict(zip(feeds, inputs)))
            by_input = dict(zip([i for i, g in zip(differentiable, grads) if g is not None], analytic))
            for _ in range(directions):
                moves = {i: rng.standard_normal(inputs[i].shape) for i in differentiable}
                predicted = sum(float(np.sum(by_input[i] * moves[i])) for i in by_input)
                plus = [x + eps * moves[i] if i in moves else x for i, x in enumerate(inputs)]
                minus = [x - eps * moves[i] if i in moves else x for i, x in enumerate(inputs)]
                numeric = (loss(plus) - loss(minus)) / (2 * eps)
                if not np.isclose(predicted, numeric, rtol=rtol, atol=atol):
                    raise AssertionError(f"gradient check failed: analytic directional derivative {predicted:.8g} "
                                         f"!= finite difference {numeric:.8g} (ops: {[y.op.type for y in outputs]})")


def run_both_executors(fetches: Any, feed_dict: dict | None = None, session: Session | None = None) -> Any:
    """Runs `fetches` untraced (the generated code) and traced (the frame executor); returns the values they agree on.

    The values must agree exactly (the same repr): both executors run the same kernels. Both runs use one
    session, `session` or a new Session on the default graph, so a fetch with side effects (an assign, a
    dequeue) takes effect twice. Raises AssertionError.
    """
    if session is None:
        with Session() as new_session:
            return run_both_executors(fetches, feed_dict, new_session)
    untraced = session.run(fetches, feed_dict)
    traced = session.run(fetches, feed_dict, RunOptions(trace_level=RunOptions.FULL_TRACE), RunMetadata())
    if repr(untraced) != repr(traced):
        raise AssertionError(f"the executors disagree: generated code {untraced!r}, frame executor {traced!r}")
    return untraced
