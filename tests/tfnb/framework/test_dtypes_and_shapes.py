"""dtypes (TF names, conversions, value dtypes) and static shapes (unknown dims, merging)."""

import numpy as np
import pytest

import tfnb as tf
from tfnb.framework.dtypes import dtype_of_value
from tfnb.framework.tensor_shape import Dimension, TensorShape


@pytest.mark.parametrize("name", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "float16",
                                  "float32", "float64", "complex64", "complex128", "string"])
def test_every_dtype_has_its_tf_name_and_numpy_type(name):
    dtype = getattr(tf, name)
    assert dtype.name == name
    assert tf.as_dtype(name) is dtype
    if name != "string":
        assert tf.as_dtype(dtype.np_dtype) is dtype


def test_dtype_properties():
    assert tf.float32.is_floating and not tf.float32.is_integer
    assert tf.uint8.is_unsigned and tf.uint8.max == 255
    assert tf.complex64.is_complex and tf.bool.is_bool
    assert tf.float16.size == 2 and tf.string.size == 0
    assert tf.as_dtype(np.float64) is tf.float64 and tf.as_dtype(bytes) is tf.string
    with pytest.raises(TypeError):
        tf.as_dtype("no-such-type")


def test_python_values_take_tf_default_dtypes():
    assert dtype_of_value(1.0) is tf.float32
    assert dtype_of_value(3) is tf.int32
    assert dtype_of_value(2 ** 40) is tf.int64
    assert dtype_of_value(True) is tf.bool
    assert dtype_of_value(1j) is tf.complex128
    assert dtype_of_value(np.float64(1.0)) is tf.float64
    assert dtype_of_value(np.arange(3, dtype=np.uint16)) is tf.uint16


def test_constants_of_every_dtype_round_trip_through_a_session():
    values = {tf.bool: [True, False], tf.int8: [-3, 4], tf.uint16: [7, 9], tf.float16: [0.5, 1.5],
              tf.complex64: [1 + 2j, 3j], tf.string: [b"a", "b"]}
    tensors = {dtype: tf.constant(v, dtype=dtype) for dtype, v in values.items()}
    with tf.Session() as sess:
        results = sess.run(tensors)
    for dtype, result in results.items():
        assert result.dtype == dtype.np_dtype
    assert results[tf.string].tolist() == [b"a", b"b"]


def test_lossy_constant_conversions_are_refused():
    with pytest.raises(TypeError):
        tf.constant(1.5, dtype=tf.int32)
    with pytest.raises(TypeError):
        tf.constant(300, dtype=tf.uint8)
    with pytest.raises(TypeError):
        tf.constant("text", dtype=tf.float32)


def test_constant_shape_argument_fills_and_reshapes():
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(tf.constant(7, shape=[2, 2])), [[7, 7], [7, 7]])
        np.testing.assert_array_equal(sess.run(tf.constant([1, 2, 3, 4], shape=[2, 2])), [[1, 2], [3, 4]])
        # TF1 fills the rest of the shape with the last value.
        np.testing.assert_array_equal(sess.run(tf.constant([1, 2, 3], shape=[2, 2])), [[1, 2], [3, 3]])
    with pytest.raises(ValueError):
        tf.constant([1, 2, 3, 4, 5], shape=[2, 2])


def test_tensor_shape_with_unknown_dims():
    shape = TensorShape([None, 3])
    assert shape.ndims == 2 and not shape.is_fully_defined()
    assert shape.is_compatible_with([5, 3]) and not shape.is_compatible_with([5, 4])
    assert shape.merge_with([5, None]).as_list() == [5, 3]
    assert shape.concatenate([2]).as_list() == [None, 3, 2]
    assert TensorShape(None).ndims is None and TensorShape(None).is_compatible_with([1, 2, 3])
    assert str(shape) == "(?, 3)" and TensorShape([4]).num_elements() == 4
    with pytest.raises(ValueError):
        TensorShape(None).as_list()


def test_dimension_arithmetic_keeps_unknowns():
    assert (Dimension(3) * 2).value == 6
    assert (Dimension(None) + 1).value is None
    assert Dimension(4) == 4 and (Dimension(None) == 4) is None
    assert int(Dimension(5)) == 5
    with pytest.raises(ValueError):
        int(Dimension(None))
