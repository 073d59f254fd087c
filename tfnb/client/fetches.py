"""Fetch structures: flatten any nest of tensors, ops and names, and rebuild it from values."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tfnb.framework.indexed_slices import IndexedSlices, IndexedSlicesValue
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor


def freeze(fetches):
    """A hashable key for a fetch structure (its leaves and its shape), used to cache plans."""
    kind = type(fetches)
    if kind in (Tensor, Operation, str):
        return fetches
    if kind is list:
        return (list, tuple(freeze(f) for f in fetches))
    if isinstance(fetches, tuple):
        return (kind, tuple(freeze(f) for f in fetches))
    if isinstance(fetches, Mapping):
        return (kind, tuple((k, freeze(v)) for k, v in fetches.items()))
    return fetches


def flatten(graph, fetches) -> tuple[list, Callable]:
    """The leaves of `fetches` as graph elements, and a function rebuilding the structure from values."""
    leaves: list = []
    builder = _flatten(graph, fetches, leaves)
    return leaves, builder


def _flatten(graph, fetches, leaves: list) -> Callable:
    if isinstance(fetches, list | tuple):
        parts = [_flatten(graph, f, leaves) for f in fetches]
        if isinstance(fetches, tuple) and hasattr(fetches, "_fields"):
            kind = type(fetches)
            return lambda values: kind(*[p(values) for p in parts])
        kind = type(fetches)
        return lambda values: kind(p(values) for p in parts)
    if isinstance(fetches, Mapping):
        kind = type(fetches)
        parts = {k: _flatten(graph, v, leaves) for k, v in fetches.items()}
        return lambda values: kind({k: p(values) for k, p in parts.items()})
    if isinstance(fetches, IndexedSlices):
        parts = [_absent if part is None else _flatten(graph, part, leaves)
                 for part in (fetches.values, fetches.indices, fetches.dense_shape)]
        return lambda values: IndexedSlicesValue(*[p(values) for p in parts])
    if fetches is None:
        raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
    element = _as_fetch_element(graph, fetches)
    index = len(leaves)
    leaves.append(element)
    return lambda values: values[index]


def _absent(values) -> None:
    """The dense_shape of an IndexedSlices built without one: None, as TF fetches it."""
    return None


def _as_fetch_element(graph, fetch):
    """The graph element `fetch` names; ValueError for a name or element not in `graph` (as TF1), TypeError else."""
    if isinstance(fetch, bytes):
        fetch = fetch.decode()
    try:
        return graph.as_graph_element(fetch)
    except KeyError as error:
        message = error.args[0]
    except ValueError as error:
        message = str(error)
    except TypeError as error:
        raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}, must be a string or Tensor. "
                        f"({error})") from None
    raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. ({message})")
