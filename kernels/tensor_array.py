"""TensorArray kernels: a list of arrays that a step writes and reads one index at a time (TF1's rules).

An array is a plain object made by each run of its TensorArrayV3 op and passed along as that op's
handle value, as an accumulator is (kernels/accumulators.py): it belongs to that step (or to that
iteration, when made inside a loop), so concurrent steps and later runs never see it, and it is freed
with its handle. This is what TF1 gets by keeping arrays in a per-step resource container.
The flow output is a float32 zero; only the order it imposes matters.
"""

from __future__ import annotations

import threading

import numpy as np

from tfnb.framework.errors import InvalidArgumentError, UnimplementedError
from tfnb.kernels.host import to_host
from tfnb.kernels.registry import kernel

FLOW = np.float32(0.0)


class Element:
    """One index of an array: its value (None once cleared), its shape, and what happened to it."""

    __slots__ = ("value", "shape", "written", "read")

    def __init__(self, shape=None) -> None:
        self.value, self.shape, self.written, self.read = None, shape, False, False


class Array:
    """The state behind one TensorArray handle."""

    def __init__(self, name: str, dtype, size: int, element_shape, dynamic_size: bool, clear_after_read: bool,
                 identical_shapes: bool, is_grad: bool = False) -> None:
        self.name, self.dtype, self.element_shape = name, np.dtype(dtype), element_shape
        self.elements = [Element() for _ in range(size)]
        self.dynamic_size, self.clear_after_read = dynamic_size, clear_after_read
        self.identical_shapes = identical_shapes  # infer_shape: the first write fixes the element shape
        self.is_grad = is_grad  # a gradient array: writes to one index add up, unwritten indices read as zeros
        self.closed = False
        self.gradients: dict[str, Array] = {}
        self.lock = threading.Lock()

    def fail(self, message: str):
        """Raises TF's InvalidArgumentError naming this array (the executor adds the op)."""
        raise InvalidArgumentError(None, None, f"TensorArray {self.name}: {message}")

    def check_open(self) -> None:
        if self.closed:
            self.fail("has already been closed.")

    def check_dtype(self, dtype, action: str) -> None:
        if np.dtype(dtype) != self.dtype:
            self.fail(f"TensorArray dtype is {self.dtype.name} but Op is trying to {action} dtype "
                      f"{np.dtype(dtype).name}.")

    def write(self, index: int, value, xp) -> None:
        """Stores a copy of `value` at `index` (a copy: the array must not change with its producer's buffer)."""
        self.check_open()
        size = len(self.elements)
        if index < 0 or (index >= size and not self.dynamic_size):
            self.fail(f"Tried to write to index {index} but array is not resizeable and size is: {size}")
        if index >= size:
            self.elements.extend(Element() for _ in range(index + 1 - size))
        shape = tuple(value.shape)
        if not _compatible(self.element_shape, shape):
            self.fail(f"Could not write to TensorArray index {index} because the value shape is {_text(shape)} which "
                      f"is incompatible with the TensorArray's inferred element shape: {_text(self.element_shape)} "
                      "(consider setting infer_shape=False).")
        if self.identical_shapes and not _fully_defined(self.element_shape):
            self.element_shape = shape
        element = self.elements[index]
        if element.read:
            self.fail(f"Could not write to TensorArray index {index} because it has already been read.")
        if element.written and not self.is_grad:
            self.fail(f"Could not write to TensorArray index {index} because it has already been written to.")
        if element.written and element.value is not None:
            if element.shape != shape:
                self.fail(f"Could not aggregate to TensorArray index {index} because the existing shape is "
                          f"{_text(element.shape)} but the new input shape is {_text(shape)}.")
            element.value = element.value + value
            return
        element.value, element.shape, element.written = xp.array(value, copy=True), shape, True

    def read(self, index: int, xp):
        """The value at `index`; an unwritten index of known shape reads as zeros (as in TF)."""
        self.check_open()
        size = len(self.elements)
        if index < 0 or (not self.is_grad and index >= size):
            self.fail(f"Tried to read from index {index} but array size is: {size}")
        if index >= size:
            self.elements.extend(Element() for _ in range(index + 1 - size))
        element = self.elements[index]
        if not element.written:
            self._fill_zeros(index, element, xp)
        if element.value is None:
            self.fail(f"Could not read index {index} twice because it was cleared after a previous read (perhaps "
                      "try setting clear_after_read = false?).")
        value = element.value
        element.read = True
        if self.clear_after_read:
            element.value = None
        return value

    def _fill_zeros(self, index: int, element: Element, xp) -> None:
        if self.is_grad and element.shape:
            shape = element.shape
        elif _fully_defined(self.element_shape):
            shape = self.element_shape
        else:
            self.fail(f"Could not read from TensorArray index {index}.  Furthermore, the element shape is not fully "
                      f"defined: {_text(self.element_shape)}.  It is possible you are working with a resizeable "
                      "TensorArray and stop_gradients is not allowing the gradients to be written.  If you set the "
                      "full element_shape property on the forward TensorArray, the proper all-zeros tensor will be "
                      "returned instead of incurring this error.")
        element.value, element.shape, element.written = _zeros(xp, shape, self.dtype), tuple(shape), True

    def gradient(self, source: str) -> Array:
        """The gradient array for the gradient computation `source`, made on first use with this one's shapes."""
        self.check_open()
        found = self.gradients.get(source)
        if found is None:
            found = Array(f"{self.name}@{source}", self.dtype, len(self.elements), self.element_shape, False, True,
                          self.identical_shapes, is_grad=True)
            for mine, theirs in zip(found.elements, self.elements):
                mine.shape = theirs.shape
            self.gradients[source] = found
        return found


def _compatible(partial, shape: tuple) -> bool:
    if partial is None:
        return True
    return len(partial) == len(shape) and all(p is None or p == s for p, s in zip(partial, shape))


def _fully_defined(partial) -> bool:
    return partial is not None and None not in partial


def _text(shape) -> str:
    if shape is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _zeros(xp, shape, dtype):
    if dtype == object:
        return np.full(shape, b"", dtype=object)
    return xp.zeros(shape, dtype)


def _stacked(array: Array, values: list, xp, element_shape):
    """The values stacked on a new first axis; no values give an empty array of a known element shape."""
    if not values:
        shape = element_shape if _fully_defined(element_shape) else array.element_shape
        if not _fully_defined(shape):
            raise UnimplementedError(None, None, f"TensorArray {array.name}: TensorArray has size zero, but element "
                                     f"shape {_text(shape)} is not fully defined. Currently only static shapes are "
                                     "supported when packing zero-size TensorArrays.")
        return _zeros(xp, (0, *shape), array.dtype)
    first = values[0].shape
    for k, value in enumerate(values[1:], 1):
        if value.shape != first:
            array.fail(f"TensorArray has inconsistent shapes.  Index 0 has shape: {_text(first)} but index {k} has "
                       f"shape: {_text(value.shape)}")
    return xp.stack(values)


# -- kernels -----------------------------------------------------------------------------------------


@kernel("TensorArrayV3")
def tensor_array(node):
    attrs = node.attrs
    name = attrs["tensor_array_name"] or node.name
    dtype, element_shape = attrs["dtype"].np_dtype, attrs["element_shape"].as_tuple()
    options = (attrs["dynamic_size"], attrs["clear_after_read"], attrs["identical_element_shapes"])

    def create(size):
        if int(size) < 0:
            raise InvalidArgumentError(None, None, f"Size should be >= 0, got {int(size)}")
        return Array(name, dtype, int(size), element_shape, *options), FLOW
    return create


@kernel("TensorArrayGradV3")
def tensor_array_grad(node):
    source = node.attrs["source"]

    def grad(array, flow):
        with array.lock:
            return array.gradient(source), FLOW
    return grad


@kernel("TensorArrayWriteV3")
def tensor_array_write(node):
    xp, dtype = node.xp, node.input_dtypes[2]

    def write(array, index, value, flow):
        with array.lock:
            array.check_dtype(dtype, "write")
            array.write(int(index), xp.asarray(value), xp)
        return FLOW
    return write


@kernel("TensorArrayReadV3")
def tensor_array_read(node):
    xp, dtype = node.xp, node.output_dtypes[0]

    def read(array, index, flow):
        with array.lock:
            array.check_dtype(dtype, "read")
            return array.read(int(index), xp)
    return read


@kernel("TensorArrayGatherV3", fresh_output=True)
def tensor_array_gather(node):
    xp, dtype = node.xp, node.output_dtypes[0]
    element_shape = node.attrs["element_shape"].as_tuple()

    def gather(array, indices, flow):
        with array.lock:
            array.check_dtype(dtype, "read")
            values = [array.read(int(i), xp) for i in to_host(indices).ravel()]
            return _stacked(array, values, xp, element_shape)
    return gather


@kernel("TensorArrayScatterV3")
def tensor_array_scatter(node):
    xp, dtype = node.xp, node.input_dtypes[2]

    def scatter(array, indices, value, flow):
        value = xp.asarray(value)
        indices = to_host(indices).ravel()
        with array.lock:
            array.check_dtype(dtype, "write")
            if value.ndim < 1:
                array.fail(f"Input value must be at least a vector, but received shape: {_text(value.shape)}")
            if len(indices) != value.shape[0]:
                array.fail(f"Expected len(indices) == values.shape[0], but saw: {len(indices)} vs. {value.shape[0]}")
            for k, index in enumerate(indices):
                array.write(int(index), value[k], xp)
        return FLOW
    return scatter


@kernel("TensorArrayConcatV3", fresh_output=True)
def tensor_array_concat(node):
    xp, dtype = node.xp, node.output_dtypes[0]
    except0 = node.attrs["element_shape_except0"].as_tuple()

    def concat(array, flow):
        with array.lock:
            array.check_dtype(dtype, "read")
            values = [array.read(i, xp) for i in range(len(array.elements))]
        for k, value in enumerate(values):
            if value.ndim < 1:
                array.fail(f"Concat saw a scalar shape at index {k} but requires at least vectors.")
            if value.shape[1:] != values[0].shape[1:]:
                array.fail(f"Concat saw elements of incompatible shapes: index 0 has shape {_text(values[0].shape)} "
                           f"but index {k} has shape {_text(value.shape)}")
        lengths = np.array([v.shape[0] for v in values], np.int64)
        if not values:
            if not _fully_defined(except0):
                array.fail(f"Concat saw a size zero TensorArray whose element shape (except the first dimension) "
                           f"{_text(except0)} is not fully defined.")
            return _zeros(xp, (0, *except0), array.dtype), lengths
        return xp.concatenate(values), lengths
    return concat


@kernel("TensorArraySplitV3")
def tensor_array_split(node):
    xp, dtype = node.xp, node.input_dtypes[1]

    def split(array, value, lengths, flow):
        value = xp.asarray(value)
        lengths = to_host(lengths).ravel()
        with array.lock:
            array.check_dtype(dtype, "write")
            if value.ndim < 1:
                array.fail(f"Expected value to be at least a vector, but received shape: {_text(value.shape)}")
            if int(lengths.sum()) != value.shape[0]:
                array.fail(f"Expected sum of lengths to be equal to values.shape[0], but sum of lengths is "
                           f"{int(lengths.sum())} and value's shape is: {_text(value.shape)}")
            if not array.dynamic_size and len(lengths) != len(array.elements):
                array.fail(f"TensorArray's size is not equal to the size of lengths ({len(array.elements)} vs. "
                           f"{len(lengths)}), and the TensorArray is not marked as dynamically resizeable")
            starts = np.concatenate([[0], np.cumsum(lengths)])
            for k in range(len(lengths)):
                array.write(k, value[int(starts[k]):int(starts[k + 1])], xp)
        return FLOW
    return split


@kernel("TensorArraySizeV3")
def tensor_array_size(node):
    def size(array, flow):
        array.check_open()
        return np.int32(len(array.elements))
    return size


@kernel("TensorArrayCloseV3")
def tensor_array_close(node):
    def close(array):
        with array.lock:
            array.check_open()
            array.closed = True
            array.elements = []
    return close
