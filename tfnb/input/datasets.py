"""tf.data in TF1 style: Dataset pipelines as ops in the graph, read through iterators of the session.

    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(1000).repeat().batch(64).prefetch(1)
    x, y = dataset.make_one_shot_iterator().get_next()     # or make_initializable_iterator()

Each method adds one dataset op (TensorSliceDataset, ShuffleDataset, ...), so the pipeline shows in the graph
like any op. An element may be a nest (tuples, dicts) of tensors; the ops carry its flat dtypes and shapes.
`map` and `filter` trace their function once into a graph of its own (tfnb/input/function_graph.py), which
the session compiles and runs per element. At the end of the data, get_next raises OutOfRangeError.
"""

from __future__ import annotations

import numpy as np

from tfnb.framework import dtypes, nest
from tfnb.framework.graph import get_default_graph, name_scope
from tfnb.framework.op_registry import Example
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape, as_shape
from tfnb.input.dataset_ops import (
    dataset_op,
    iterator_get_next,
    iterator_op,
    make_iterator,
    register_dataset_ops,
)
from tfnb.input.function_graph import as_structure, trace
from tfnb.ops.constant_op import convert_to_tensor
from tfnb.ops.random_ops import get_seed

__all__ = ["Dataset", "Iterator", "make_one_shot_iterator", "make_initializable_iterator"]

_AUTOTUNE_PREFETCH = 1


class _Elements:
    """What datasets and iterators share: the structure of their elements, with its dtypes and static shapes."""

    def __init__(self, structure, types: list, shapes: list) -> None:
        self._structure = structure  # a nest with the element's shape of nesting (its leaves are placeholders)
        self._types = list(types)
        self._shapes = [as_shape(s) for s in shapes]

    @property
    def output_types(self):
        return nest.pack_sequence_as(self._structure, self._types)

    @property
    def output_shapes(self):
        return nest.pack_sequence_as(self._structure, self._shapes)

    @property
    def output_classes(self):
        return nest.pack_sequence_as(self._structure, [Tensor] * len(self._types))


class Dataset(_Elements):
    """A sequence of elements, each a nest of tensors with `output_types` and `output_shapes`."""

    def __init__(self, variant: Tensor, structure, types: list, shapes: list) -> None:
        super().__init__(structure, types, shapes)
        self._variant = variant

    # -- what a user reads back -------------------------------------------------------------------

    def _as_variant_tensor(self) -> Tensor:
        return self._variant

    def __repr__(self) -> str:
        return f"<Dataset {self._variant.op.type} shapes: {self.output_shapes}, types: {self.output_types}>"

    # -- sources ----------------------------------------------------------------------------------

    @staticmethod
    def from_tensor_slices(tensors) -> Dataset:
        """The slices of `tensors` along their first dimension, one element each."""
        with name_scope(None, "TensorSliceDataset"):
            structure = as_structure(tensors)
            flat = nest.flatten(structure)
            for tensor in flat:
                if tensor.shape.ndims == 0:
                    raise ValueError(f"Unbatching a tensor is only supported for rank >= 1: {tensor.name}")
            shapes = [t.shape[1:] if t.shape.ndims is not None else TensorShape(None) for t in flat]
            types = [t.dtype for t in flat]
            return Dataset(dataset_op("TensorSliceDataset", flat, types, shapes), structure, types, shapes)

    @staticmethod
    def from_tensors(tensors) -> Dataset:
        """A dataset of one element: `tensors`."""
        with name_scope(None, "TensorDataset"):
            structure = as_structure(tensors)
            flat = nest.flatten(structure)
            types, shapes = [t.dtype for t in flat], [t.shape for t in flat]
            return Dataset(dataset_op("TensorDataset", flat, types, shapes), structure, types, shapes)

    @staticmethod
    def range(*args) -> Dataset:
        """int64 elements as Python's range(start, stop, step) gives them."""
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Invalid arguments to range: {args}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
        bounds = [convert_to_tensor(v, dtype=dtypes.int64, name=n) for v, n in zip((start, stop, step),
                                                                                  ("start", "stop", "step"))]
        variant = dataset_op("RangeDataset", bounds, [dtypes.int64], [TensorShape([])])
        return Dataset(variant, convert_to_tensor(0, dtypes.int64), [dtypes.int64], [TensorShape([])])

    @staticmethod
    def zip(datasets) -> Dataset:
        """Elements made of one element of each dataset in the nest `datasets`, until the shortest ends."""
        flat = nest.flatten(datasets)
        for dataset in flat:
            if not isinstance(dataset, Dataset):
                raise TypeError(f"The argument to `Dataset.zip()` must be a (nested) structure of `Dataset` "
                                f"objects, got {type(dataset).__name__}")
        types = [t for d in flat for t in d._types]
        shapes = [s for d in flat for s in d._shapes]
        structure = nest.pack_sequence_as(datasets, [d._structure for d in flat])
        variant = dataset_op("ZipDataset", [d._variant for d in flat], types, shapes)
        return Dataset(variant, structure, types, shapes)

    # -- transformations --------------------------------------------------------------------------

    def _derived(self, op_type: str, inputs: list, shapes=None, **attrs) -> Dataset:
        shapes = self._shapes if shapes is None else shapes
        variant = dataset_op(op_type, [self._variant] + inputs, self._types, shapes, **attrs)
        return Dataset(variant, self._structure, self._types, shapes)

    def _traced(self, fn, name: str):
        """fn traced on an element of this dataset (a tuple element is spread over fn's parameters)."""
        return trace(fn, name, self._types, self._shapes,
                     lambda placeholders: nest.pack_sequence_as(self._structure, placeholders))

    def map(self, map_func, num_parallel_calls=None) -> Dataset:
        """Each element passed through map_func (traced once into a function graph).

        tfnb differs: num_parallel_calls is accepted and ignored (one element at a time).
        """
        function = self._traced(map_func, "map_func")
        flat = function.outputs
        types, shapes = [t.dtype for t in flat], [t.shape for t in flat]
        variant = dataset_op("MapDataset", [self._variant] + function.captured, types, shapes, f=function)
        return Dataset(variant, function.structure, types, shapes)

    def filter(self, predicate) -> Dataset:
        """The elements for which predicate (a scalar bool tensor function) is True."""
        function = self._traced(predicate, "predicate")
        result = function.outputs[0] if len(function.outputs) == 1 else None
        if result is None or result.dtype is not dtypes.bool_ or result.shape.ndims not in (None, 0):
            raise ValueError("`predicate` must return a scalar boolean tensor.")
        return self._derived("FilterDataset", function.captured, f=function)

    def batch(self, batch_size, drop_remainder: bool = False) -> Dataset:
        """Consecutive elements stacked batch_size at a time (a last, smaller batch unless drop_remainder)."""
        size = convert_to_tensor(batch_size, dtype=dtypes.int64, name="batch_size")
        known = _constant_int(batch_size)
        batch = TensorShape([known if drop_remainder else None])
        shapes = [batch.concatenate(s) for s in self._shapes]
        drop = convert_to_tensor(drop_remainder, dtype=dtypes.bool_, name="drop_remainder")
        return self._derived("BatchDatasetV2", [size, drop], shapes)

    def repeat(self, count=None) -> Dataset:
        """The elements `count` times over (forever if count is None or -1)."""
        count = convert_to_tensor(-1 if count is None else count, dtype=dtypes.int64, name="count")
        return self._derived("RepeatDataset", [count])

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None) -> Dataset:
        """The elements in random order, each drawn from a buffer of the next buffer_size elements."""
        seed1, seed2 = get_seed(seed)
        inputs = [convert_to_tensor(buffer_size, dtype=dtypes.int64, name="buffer_size"),
                  convert_to_tensor(seed1 or 0, dtype=dtypes.int64, name="seed"),
                  convert_to_tensor(seed2 or 0, dtype=dtypes.int64, name="seed2")]
        reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        return self._derived("ShuffleDataset", inputs, reshuffle_each_iteration=reshuffle)

    def take(self, count) -> Dataset:
        """The first `count` elements (all of them if count is -1)."""
        return self._derived("TakeDataset", [convert_to_tensor(count, dtype=dtypes.int64, name="count")])

    def skip(self, count) -> Dataset:
        """The elements after the first `count` (none if count is -1)."""
        return self._derived("SkipDataset", [convert_to_tensor(count, dtype=dtypes.int64, name="count")])

    def concatenate(self, dataset: Dataset) -> Dataset:
        """This dataset's elements, then those of `dataset` (same structure and dtypes)."""
        if self._types != dataset._types:
            raise TypeError(f"Two datasets to concatenate have different types {self.output_types} and "
                            f"{dataset.output_types}")
        nest.assert_same_structure(self._structure, dataset._structure)
        shapes = [_common_shape(a, b) for a, b in zip(self._shapes, dataset._shapes)]
        return self._derived("ConcatenateDataset", [dataset._variant], shapes)

    def prefetch(self, buffer_size) -> Dataset:
        """The same elements, read ahead into a buffer of buffer_size by a thread of their own."""
        if buffer_size is None or _constant_int(buffer_size) == -1:
            buffer_size = _AUTOTUNE_PREFETCH
        return self._derived("PrefetchDataset", [convert_to_tensor(buffer_size, dtype=dtypes.int64,
                                                                   name="buffer_size")])

    def apply(self, transformation_func) -> Dataset:
        """transformation_func(self)."""
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError("`transformation_func` must return a Dataset.")
        return result

    # -- iterators --------------------------------------------------------------------------------

    def make_one_shot_iterator(self) -> Iterator:
        """An iterator that starts on its first use and cannot be restarted; the dataset may not depend on a
        placeholder (use make_initializable_iterator)."""
        _refuse_placeholders(self._variant)
        handle = iterator_op("OneShotIterator", [self._variant], self._types, self._shapes, "", None)
        return Iterator(handle, None, self._structure, self._types, self._shapes)

    def make_initializable_iterator(self, shared_name: str | None = None) -> Iterator:
        """An iterator that `iterator.initializer` (re)starts at the first element."""
        handle = iterator_op("IteratorV2", [], self._types, self._shapes, shared_name or "", "Iterator")
        initializer = make_iterator(self._variant, handle)
        return Iterator(handle, initializer, self._structure, self._types, self._shapes)


def _constant_int(value) -> int | None:
    if isinstance(value, Tensor):
        from_graph = value.op.attrs.get("value") if value.op.type == "Const" else None
        return None if from_graph is None else int(np.asarray(from_graph))
    return int(value)


def _common_shape(a: TensorShape, b: TensorShape) -> TensorShape:
    """The most specific shape both a and b have (unknown dims where they differ)."""
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x.value if x.value == y.value else None for x, y in zip(a, b)])


def _refuse_placeholders(variant: Tensor) -> None:
    """As TF: a one-shot iterator cannot capture a placeholder (it has no initializer to feed it through)."""
    stack, seen = [variant.op], set()
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.type == "Placeholder":
            raise ValueError(f"Cannot capture a placeholder (name:{op.name}, type:Placeholder) by value: use "
                             f"make_initializable_iterator() for a dataset fed through placeholders.")
        stack.extend(t.op for t in op.inputs)


class Iterator(_Elements):
    """Reads a dataset's elements: `get_next()` gives the next element each run; `initializer` (re)starts it."""

    def __init__(self, handle: Tensor, initializer: Operation | None, structure, types: list, shapes: list) -> None:
        super().__init__(structure, types, shapes)
        self._handle = handle
        self._initializer = initializer

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name: str | None = None,
                       output_classes=None) -> Iterator:
        """An iterator for any dataset with this structure; `make_initializer(dataset)` points it at one."""
        types = [dtypes.as_dtype(t) for t in nest.flatten(output_types)]
        shapes = ([TensorShape(None)] * len(types) if output_shapes is None else
                  [as_shape(s) for s in _flat_shapes(output_types, output_shapes)])
        structure = nest.pack_sequence_as(output_types, types)
        handle = iterator_op("IteratorV2", [], types, shapes, shared_name or "", "Iterator")
        return Iterator(handle, None, structure, types, shapes)

    @property
    def initializer(self) -> Operation:
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    def make_initializer(self, dataset: Dataset, name: str | None = None) -> Operation:
        """The op that points this iterator at the start of `dataset` (same structure and dtypes)."""
        if dataset._types != self._types:
            raise TypeError(f"Expected output types {self.output_types} but got dataset with output types "
                            f"{dataset.output_types}.")
        for mine, theirs in zip(self._shapes, dataset._shapes):
            if not mine.is_compatible_with(theirs):
                raise TypeError(f"Expected output shapes compatible with {self.output_shapes} but got dataset "
                                f"with output shapes {dataset.output_shapes}.")
        return make_iterator(dataset._variant, self._handle, name)

    def get_next(self, name: str | None = None):
        """The next element, as a nest of tensors; OutOfRangeError when the dataset has no more."""
        flat = iterator_get_next(self._handle, self._types, self._shapes, name)
        return nest.pack_sequence_as(self._structure, flat)

    @property
    def string_handle(self):
        raise NotImplementedError("tfnb's iterators have no string handles")


def _flat_shapes(types, shapes) -> list:
    """output_shapes flattened as output_types is (a single shape may stand for a single type)."""
    if not nest.is_sequence(types):
        return [shapes]
    return nest.flatten(nest.map_structure(lambda _, s: s, types, shapes)) if nest.is_sequence(shapes) else [shapes]


def make_one_shot_iterator(dataset: Dataset) -> Iterator:
    """dataset.make_one_shot_iterator() (TF1's tf.data.make_one_shot_iterator)."""
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset: Dataset, shared_name: str | None = None) -> Iterator:
    """dataset.make_initializable_iterator() (TF1's tf.data.make_initializable_iterator)."""
    return dataset.make_initializable_iterator(shared_name)


# -- the ops' example cases: small pipelines, each read through an iterator its own run initializes ----------


def _first_element(build_dataset, *tensors):
    """The first element of build_dataset(*tensors), read after an initializer that runs in the same step."""
    iterator = build_dataset(*tensors).make_initializable_iterator()
    with get_default_graph().control_dependencies([iterator.initializer]):
        return iterator.get_next()


def _examples() -> dict[str, list[Example]]:
    slices = Example(lambda x: _first_element(Dataset.from_tensor_slices, x), lambda x: x[0], inputs=((3, 2),),
                     differentiable=False)
    batch = Example(lambda x: _first_element(lambda t: Dataset.from_tensor_slices(t).batch(2), x),
                    lambda x: x[:2], inputs=((5, 2),), differentiable=False)
    mapped = Example(lambda x: _first_element(lambda t: Dataset.from_tensor_slices(t).map(lambda e: e * 2 + 1), x),
                     lambda x: x[0] * 2 + 1, inputs=((3,),), dtypes=(dtypes.float32, dtypes.int32),
                     differentiable=False)
    captured = Example(lambda x, y: _first_element(lambda t: Dataset.from_tensors(t).map(lambda e: e - y), x),
                       lambda x, y: x - y, inputs=((2,), (2,)), dtypes=(dtypes.float64,), differentiable=False)
    pipeline = Example(
        lambda x: _first_element(lambda t: Dataset.from_tensor_slices(t).repeat(2).skip(3).take(4).shuffle(
            1, seed=3).prefetch(2).batch(3, drop_remainder=True), x),
        lambda x: np.concatenate([x[3:], x[:2]]), inputs=((4, 2),), dtypes=(dtypes.float32,), differentiable=False)
    filtered = Example(lambda x: _first_element(lambda t: Dataset.from_tensor_slices(t).filter(
        lambda e: e[0] > e[1]).batch(4), x), lambda x: x[x[:, 0] > x[:, 1]], inputs=(
            np.array([[1, 2], [3, 0], [5, 5], [9, 1]], np.float32),), dtypes=(dtypes.float32,), differentiable=False)
    zipped = Example(lambda x: list(_first_element(lambda t: Dataset.zip((Dataset.range(1, 9, 3),
                                                                          Dataset.from_tensors(t))).concatenate(
        Dataset.zip((Dataset.range(2), Dataset.from_tensors(t)))), x)),
        lambda x: [np.array(1, np.int64), x], inputs=((2,),), dtypes=(dtypes.int32,), differentiable=False)
    one_shot = Example(lambda: Dataset.range(5).make_one_shot_iterator().get_next(), lambda: np.array(0, np.int64),
                       differentiable=False)
    # Only the MapDataset and FilterDataset examples hold a function: the JSON graph format has no function
    # library, so their graphs are the only ones that cannot be exported.
    return {"TensorSliceDataset": [slices, batch, pipeline], "TensorDataset": [zipped],
            "RangeDataset": [zipped, one_shot], "MapDataset": [mapped, captured], "FilterDataset": [filtered],
            "BatchDatasetV2": [batch, pipeline], "RepeatDataset": [pipeline], "ShuffleDataset": [pipeline],
            "TakeDataset": [pipeline], "SkipDataset": [pipeline], "ZipDataset": [zipped],
            "ConcatenateDataset": [zipped], "PrefetchDataset": [pipeline], "IteratorV2": [slices, batch],
            "OneShotIterator": [one_shot], "MakeIterator": [slices, zipped], "IteratorGetNext": [slices, one_shot]}


register_dataset_ops(_examples())
