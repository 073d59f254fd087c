"""The ops of tf.data: dataset ops (each outputs a dataset, dtype variant) and iterator ops.

Every dataset op carries the flat dtypes and static shapes of its elements (output_types, output_shapes);
the Dataset classes (tfnb/input/datasets.py) keep the nesting. Dataset ops are stateless and cheap: they
describe a pipeline (kernels/dataset.py); an iterator resource runs it. IteratorGetNext and MakeIterator are
stateful, as reads of a queue are.
"""

from __future__ import annotations

from tfnb.framework import dtypes
from tfnb.framework.graph import get_default_graph
from tfnb.framework.op_registry import Example, not_differentiable, register_op
from tfnb.framework.operation import Operation
from tfnb.framework.tensor import Tensor
from tfnb.framework.tensor_shape import TensorShape

DATASET_OPS = ("TensorSliceDataset", "TensorDataset", "RangeDataset", "MapDataset", "FilterDataset",
               "BatchDatasetV2", "RepeatDataset", "ShuffleDataset", "TakeDataset", "SkipDataset", "ZipDataset",
               "ConcatenateDataset", "PrefetchDataset")
ITERATOR_OPS = ("IteratorV2", "OneShotIterator", "MakeIterator", "IteratorGetNext")
_ELEMENT_DTYPES = tuple(d for d in dtypes.ALL if d is not dtypes.resource)
# The attrs of dataset and iterator ops: every one names its elements' types and shapes.
_ELEMENT_ATTRS = {"output_types": "list(type)", "output_shapes": "list(shape)"}
_DATASET_ATTRS = {"MapDataset": {"f": "func"}, "FilterDataset": {"f": "func"},
                  "ShuffleDataset": {"reshuffle_each_iteration": "bool"}}
_SHARED_ATTRS = {"container": "string", "shared_name": "string"}


def _check_datasets(op, count: int) -> None:
    for index in range(count):
        if op.inputs[index].dtype is not dtypes.variant:
            raise TypeError(f"Input {index} of {op.type} must be a dataset (variant), got "
                            f"{op.inputs[index].dtype.name}")


def _check_scalars(op, first: int, what: tuple[str, ...]) -> None:
    for tensor, name in zip(op.inputs[first:], what):
        if tensor.shape.ndims not in (None, 0):
            raise ValueError(f"{name} of {op.type} must be a scalar, got shape {tensor.shape}")


def _infer_dataset(op):
    sources = {"MapDataset": 1, "FilterDataset": 1, "BatchDatasetV2": 1, "RepeatDataset": 1, "ShuffleDataset": 1,
               "TakeDataset": 1, "SkipDataset": 1, "PrefetchDataset": 1, "ConcatenateDataset": 2,
               "ZipDataset": len(op.inputs)}.get(op.type, 0)
    _check_datasets(op, sources)
    scalars = {"BatchDatasetV2": ("batch_size", "drop_remainder"), "RepeatDataset": ("count",),
               "ShuffleDataset": ("buffer_size", "seed", "seed2"), "TakeDataset": ("count",),
               "SkipDataset": ("count",), "PrefetchDataset": ("buffer_size",),
               "RangeDataset": ("start", "stop", "step")}.get(op.type, ())
    _check_scalars(op, 1 if sources else 0, scalars)
    if len(op.attrs["output_types"]) != len(op.attrs["output_shapes"]):
        raise ValueError(f"{op.type} has {len(op.attrs['output_types'])} output_types but "
                         f"{len(op.attrs['output_shapes'])} output_shapes")
    return [(dtypes.variant, TensorShape([]))]


def _infer_iterator_handle(op):
    if op.type == "OneShotIterator":
        _check_datasets(op, 1)
    return [(dtypes.resource, TensorShape([]))]


def _infer_make_iterator(op):
    _check_datasets(op, 1)
    if op.inputs[1].dtype is not dtypes.resource:
        raise TypeError(f"Input 1 of MakeIterator must be an iterator (resource), got {op.inputs[1].dtype.name}")
    return []


def _infer_get_next(op):
    if op.inputs[0].dtype is not dtypes.resource:
        raise TypeError(f"IteratorGetNext takes an iterator (resource), got {op.inputs[0].dtype.name}")
    return list(zip(op.attrs["output_types"], op.attrs["output_shapes"]))


def register_dataset_ops(examples: dict[str, list[Example]]) -> None:
    """Adds the dataset and iterator ops to the registry, with their example cases (tfnb/input/datasets.py builds
    them from its Dataset classes)."""
    for op_type in DATASET_OPS:
        register_op(op_type, _infer_dataset, dtypes=_ELEMENT_DTYPES, examples=examples[op_type],
                    attrs={**_ELEMENT_ATTRS, **_DATASET_ATTRS.get(op_type, {})})
    register_op("IteratorV2", _infer_iterator_handle, dtypes=_ELEMENT_DTYPES, stateful=True,
                examples=examples["IteratorV2"], attrs={**_ELEMENT_ATTRS, **_SHARED_ATTRS})
    register_op("OneShotIterator", _infer_iterator_handle, dtypes=_ELEMENT_DTYPES, stateful=True,
                examples=examples["OneShotIterator"], attrs={**_ELEMENT_ATTRS, **_SHARED_ATTRS})
    register_op("MakeIterator", _infer_make_iterator, dtypes=_ELEMENT_DTYPES, stateful=True,
                examples=examples["MakeIterator"])
    register_op("IteratorGetNext", _infer_get_next, dtypes=_ELEMENT_DTYPES, stateful=True,
                examples=examples["IteratorGetNext"], attrs=_ELEMENT_ATTRS)
    not_differentiable(*DATASET_OPS, *ITERATOR_OPS)


def dataset_op(op_type: str, inputs, types: list, shapes: list, name: str | None = None, **attrs) -> Tensor:
    """A dataset op whose elements have the flat `types` and `shapes`."""
    attrs.update(output_types=list(types), output_shapes=[TensorShape(s) for s in shapes])
    return get_default_graph().create_op(op_type, inputs, attrs, name).outputs[0]


def iterator_op(op_type: str, inputs, types: list, shapes: list, shared_name: str, name: str | None) -> Tensor:
    attrs = {"output_types": list(types), "output_shapes": [TensorShape(s) for s in shapes],
             "shared_name": shared_name, "container": ""}
    return get_default_graph().create_op(op_type, inputs, attrs, name).outputs[0]


def make_iterator(dataset: Tensor, iterator: Tensor, name: str | None = None) -> Operation:
    return get_default_graph().create_op("MakeIterator", (dataset, iterator), {}, name)


def iterator_get_next(iterator: Tensor, types: list, shapes: list, name: str | None = None) -> list[Tensor]:
    attrs = {"output_types": list(types), "output_shapes": [TensorShape(s) for s in shapes]}
    return list(get_default_graph().create_op("IteratorGetNext", (iterator,), attrs, name).outputs)
