"""Nested structures (lists, tuples, namedtuples, dicts) flattened to leaves and packed back."""

from __future__ import annotations

from collections.abc import Mapping


def flatten(structure) -> list:
    """The leaves of a nest, depth first (dicts in sorted key order, as TF's nest)."""
    if isinstance(structure, Mapping):
        return [leaf for key in sorted(structure) for leaf in flatten(structure[key])]
    if isinstance(structure, list | tuple):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def pack_sequence_as(structure, leaves: list):
    """A nest shaped like `structure` whose leaves are `leaves`, in order."""
    iterator = iter(leaves)
    packed = _pack(structure, iterator)
    if next(iterator, _END) is not _END:
        raise ValueError("More leaves than the structure has places for")
    return packed


_END = object()


def _pack(structure, leaves):
    if isinstance(structure, Mapping):
        return type(structure)((key, _pack(structure[key], leaves)) for key in sorted(structure))
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*[_pack(item, leaves) for item in structure])
    if isinstance(structure, list | tuple):
        return type(structure)(_pack(item, leaves) for item in structure)
    leaf = next(leaves, _END)
    if leaf is _END:
        raise ValueError("Fewer leaves than the structure has places for")
    return leaf


def assert_same_structure(a, b) -> None:
    """Raises ValueError if two nests differ in shape."""
    if _shape_of(a) != _shape_of(b):
        raise ValueError(f"The two structures don't have the same nested structure: {a!r} and {b!r}")


def _shape_of(structure):
    if isinstance(structure, Mapping):
        return ("dict", tuple((k, _shape_of(structure[k])) for k in sorted(structure)))
    if isinstance(structure, list | tuple):
        return ("seq", tuple(_shape_of(item) for item in structure))
    return "leaf"


def map_structure(fn, *structures):
    """A nest shaped like the first of `structures` whose leaves are fn applied to their leaves, position by position."""
    for other in structures[1:]:
        assert_same_structure(structures[0], other)
    leaves = [fn(*items) for items in zip(*(flatten(s) for s in structures))]
    return pack_sequence_as(structures[0], leaves)


def is_sequence(structure) -> bool:
    """Whether `structure` is a nest with parts (a list, tuple, namedtuple or dict) rather than a leaf."""
    return isinstance(structure, Mapping | list | tuple)
