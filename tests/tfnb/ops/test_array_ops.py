"""Array ops beyond their forward examples: Python indexing, shape inference, errors and TF1 conventions."""

import numpy as np
import pytest

import tfnb as tf

VALUE = np.arange(60, dtype=np.float32).reshape(4, 5, 3)

INDEXES = {
    "int": lambda x: x[1], "negative int": lambda x: x[-1], "start": lambda x: x[1:], "stop": lambda x: x[:-1],
    "step": lambda x: x[::2], "reverse": lambda x: x[::-1], "negative step": lambda x: x[-2::-2],
    "int and slice": lambda x: x[1:3, 2], "ellipsis": lambda x: x[..., 1], "newaxis": lambda x: x[..., tf.newaxis],
    "None first": lambda x: x[None, ..., 0], "new axes inside": lambda x: x[:, None, 1:, None],
    "ints around ellipsis": lambda x: x[0, ..., 0], "clamped": lambda x: x[-100:100, ::3],
    "reverse clamped": lambda x: x[7:-9:-1, 10:], "empty": lambda x: x[2:0], "empty reversed": lambda x: x[0:2:-1],
    "all ints": lambda x: x[-1, -1, -1], "ellipsis only": lambda x: x[...],
    "ellipsis then ints": lambda x: x[..., ::-1, 1], "mixed": lambda x: x[3:1:-1, None, ..., 2],
    "numpy ints": lambda x: x[np.int64(1), np.int32(-2):],
}
SHAPES = {"static": (4, 5, 3), "unknown dims": (None, 5, None), "unknown rank": None}


def _run(fetches, feeds):
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("index", INDEXES.values(), ids=INDEXES.keys())
def test_python_indexing_matches_numpy(index, shape):
    x = tf.placeholder(tf.float32, shape)
    y = index(x)
    expected = index(VALUE)
    assert y.op.type == "StridedSlice" and y.op.name == "strided_slice"
    assert y.shape.is_compatible_with(expected.shape)
    if shape == SHAPES["static"]:
        assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_array_equal(_run(y, {x: VALUE}), expected)


def test_scalar_tensor_indices():
    x = tf.placeholder(tf.float32, [None, 5, 3])
    i = tf.placeholder(tf.int32, [])
    j = tf.constant(-1, tf.int64)
    y, z = x[i, 1:i], x[:, j]
    assert y.shape.as_list() == [None, 3] and z.shape.as_list() == [None, 3]
    actual_y, actual_z = _run([y, z], {x: VALUE, i: 2})
    np.testing.assert_array_equal(actual_y, VALUE[2, 1:2])
    np.testing.assert_array_equal(actual_z, VALUE[:, -1])


def test_a_list_index_is_a_tuple_as_in_tf1():
    np.testing.assert_array_equal(_run(tf.constant(VALUE)[[1, 2]], {}), VALUE[1, 2])


def test_shape_elements_index_as_ints():
    x = tf.placeholder(tf.float32, [None, 5, 3])
    assert tf.shape(x)[1:].shape.as_list() == [2]
    assert tf.shape(x)[0].shape.as_list() == []
    np.testing.assert_array_equal(_run(tf.shape(x)[::-1], {x: VALUE}), [3, 5, 4])


def test_invalid_indices_are_refused():
    x = tf.constant(VALUE)
    with pytest.raises(TypeError, match="valid indices"):
        x[1.5]
    with pytest.raises(TypeError, match="valid indices"):
        x[tf.constant([1, 2])]
    with pytest.raises(ValueError, match="out of bounds"):
        x[4]
    with pytest.raises(ValueError, match="Multiple ellipses"):
        x[..., 1, ...]
    with pytest.raises(ValueError, match="Index out of range"):
        x[1, 2, 3, 4]


def test_index_out_of_range_at_run_time():
    x = tf.placeholder(tf.float32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError):
        _run(x[3], {x: np.zeros(3, np.float32)})


def test_iterating_a_tensor_unstacks_it_by_indexing():
    rows = list(tf.constant(VALUE[:, 0]))
    assert len(rows) == 4
    np.testing.assert_array_equal(_run(rows, {}), list(VALUE[:, 0]))


def test_strided_slice_masks():
    x = tf.constant(VALUE)
    y = tf.strided_slice(x, [1, 0], [3, 2], [1, 1], begin_mask=1, end_mask=2, new_axis_mask=0, shrink_axis_mask=0)
    z = tf.strided_slice(x, [0, 1, 0], [0, 2, 0], ellipsis_mask=1, new_axis_mask=4)
    assert y.shape.as_list() == [3, 5, 3] and z.shape.as_list() == [4, 5, 1, 1]
    actual_y, actual_z = _run([y, z], {})
    np.testing.assert_array_equal(actual_y, VALUE[:3, 0:])
    np.testing.assert_array_equal(actual_z, VALUE[..., 1:2, None])


def test_reshape_infers_minus_one():
    assert tf.reshape(tf.zeros([2, 6]), [-1, 4]).shape.as_list() == [3, 4]
    x = tf.placeholder(tf.float32, [None, 4, 5])
    assert tf.reshape(x, [-1, 5]).shape.as_list() == [None, 5]
    assert tf.reshape(x, [10, -1]).shape.as_list() == [10, None]
    assert tf.reshape(tf.placeholder(tf.float32, None), [3, -1]).shape.as_list() == [3, None]
    assert tf.reshape(x, tf.placeholder(tf.int32, [3])).shape.as_list() == [None, None, None]
    assert tf.reshape(x, tf.placeholder(tf.int32, None)).shape.ndims is None


def test_reshape_to_shape_of_keeps_what_is_known():
    x = tf.placeholder(tf.float32, [None, 4, 5])
    y = tf.reshape(x, [tf.shape(x)[0], -1])
    assert y.op.inputs[1].op.type == "Pack"
    assert y.shape.as_list() == [None, 20]
    assert tf.reshape(x, tf.concat([tf.shape(x)[:1], [-1]], 0)).shape.as_list() == [None, 20]
    assert tf.reshape(x, [tf.shape(x)[1], -1]).shape.as_list() == [4, None]
    other = tf.placeholder(tf.float32, [None, 2])
    assert tf.reshape(x, [-1, tf.shape(other)[1]]).shape.as_list() == [None, 2]
    assert tf.reshape(x, [tf.shape(other)[0], -1]).shape.as_list() == [None, None]
    np.testing.assert_array_equal(_run(y, {x: VALUE.reshape(3, 4, 5)}), VALUE.reshape(3, 20))


def test_reshape_errors():
    with pytest.raises(ValueError, match="Cannot reshape a tensor with 12 elements"):
        tf.reshape(tf.zeros([3, 4]), [5, -1])
    with pytest.raises(ValueError, match="Cannot reshape a tensor with 12 elements to shape"):
        tf.reshape(tf.zeros([3, 4]), [5])
    with pytest.raises(ValueError, match="multiple unknown"):
        tf.reshape(tf.zeros([3, 4]), [-1, -1])
    x, shape = tf.placeholder(tf.float32, [None]), tf.placeholder(tf.int32, [2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="requires a multiple of 4"):
        _run(tf.reshape(x, [-1, 4]), {x: np.zeros(6, np.float32)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input to reshape is a tensor with 6 values, but the "
                                                              "requested shape has 8"):
        _run(tf.reshape(x, shape), {x: np.zeros(6, np.float32), shape: [2, 4]})


def test_gather_out_of_range_fails_the_run():
    params, indices = tf.constant([[1, 2], [3, 4], [5, 6]]), tf.placeholder(tf.int32, [None])
    rows, columns = tf.gather(params, indices), tf.gather(params, indices, axis=1)
    np.testing.assert_array_equal(_run(rows, {indices: [2, 0]}), [[5, 6], [1, 2]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 3 is not in \[0, 3\)"):
        _run(rows, {indices: [0, 3]})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = -1 is not in \[0, 2\)"):
        _run(columns, {indices: [-1]})


def test_gather_shapes():
    params = tf.placeholder(tf.float32, [None, 4, 5])
    assert tf.gather(params, [[0, 1]], axis=1).shape.as_list() == [None, 1, 2, 5]
    assert tf.gather(params, 2, axis=-1).shape.as_list() == [None, 4]
    assert tf.gather(params, [0], axis=tf.placeholder(tf.int32, [])).shape.as_list() == [None, None, None]


def test_split_with_minus_one():
    x = tf.placeholder(tf.float32, [None, 6])
    parts = tf.split(x, [1, -1, 2], axis=1)
    assert [p.shape.as_list() for p in parts] == [[None, 1], [None, 3], [None, 2]]
    value = np.arange(12, dtype=np.float32).reshape(2, 6)
    for actual, expected in zip(_run(parts, {x: value}), np.split(value, [1, 4], axis=1)):
        np.testing.assert_array_equal(actual, expected)
    assert [p.shape.as_list() for p in tf.split(x, 3, axis=-1)] == [[None, 2]] * 3
    with pytest.raises(ValueError, match="evenly divisible"):
        tf.split(x, 4, axis=1)
    with pytest.raises(ValueError, match="-1"):
        tf.split(x, [-1, -1], axis=1)
    with pytest.raises(ValueError, match="Determined shape"):
        tf.split(x, [1, 2], axis=1)
    with pytest.raises(ValueError, match="Cannot infer num"):
        tf.split(x, tf.placeholder(tf.int32, [None]))


def test_split_sizes_checked_at_run_time():
    x, sizes = tf.placeholder(tf.float32, [6]), tf.placeholder(tf.int32, [2])
    parts = tf.split(x, sizes)
    np.testing.assert_array_equal(_run(parts, {x: np.arange(6), sizes: [-1, 4]})[0], [0, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Determined shape"):
        _run(parts, {x: np.arange(6), sizes: [2, 2]})


def test_one_hot():
    indices = tf.constant([0, 2, -1, 3])
    hot = tf.one_hot(indices, 3)
    assert hot.dtype is tf.float32 and hot.shape.as_list() == [4, 3] and hot.op.name == "one_hot"
    np.testing.assert_array_equal(_run(hot, {}), [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    labels = tf.one_hot([[1], [0]], 2, on_value=5, off_value=-1, axis=0)
    assert labels.dtype is tf.int32 and labels.shape.as_list() == [2, 2, 1]
    np.testing.assert_array_equal(_run(labels, {}), [[[-1], [5]], [[5], [-1]]])
    assert tf.one_hot(tf.placeholder(tf.int64, [None]), tf.placeholder(tf.int32, [])).shape.as_list() == [None, None]
    with pytest.raises(TypeError, match="does not match dtype parameter"):
        tf.one_hot(indices, 3, on_value=1.0, dtype=tf.int32)
    with pytest.raises(TypeError, match="of on_value does not match"):
        tf.one_hot(indices, 3, on_value=1.0, off_value=0)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
def test_concat_and_stack_negative_axes(axis):
    a, b = np.ones((2, 3), np.float32), np.zeros((2, 3), np.float32)
    x, y = tf.placeholder(tf.float32, [None, 3]), tf.placeholder(tf.float32, [2, None])
    stacked = tf.stack([x, y], axis=axis)
    expected = np.stack([a, b], axis)
    assert stacked.shape.as_list() == list(expected.shape)
    np.testing.assert_array_equal(_run(stacked, {x: a, y: b}), expected)


@pytest.mark.parametrize("axis,static", [(0, [6, 3]), (1, [2, None]), (-1, [2, None]), (-2, [6, 3])])
def test_concat_negative_axes(axis, static):
    a, b = np.ones((2, 3), np.float32), np.zeros((2, 3), np.float32)
    x, y = tf.constant(a), tf.placeholder(tf.float32, [2, None])
    joined = tf.concat([x, y, x], axis)
    assert joined.shape.as_list() == static
    np.testing.assert_array_equal(_run(joined, {y: b}), np.concatenate([a, b, a], axis))


def test_concat_and_stack_errors_and_conventions():
    x = tf.zeros([2, 3])
    with pytest.raises(ValueError, match="out of range"):
        tf.concat([x, x], 2)
    with pytest.raises(ValueError, match="not compatible"):
        tf.concat([x, tf.zeros([2, 4])], 0)
    with pytest.raises(ValueError, match="axis = 3"):
        tf.stack([x, x], 3)
    with pytest.raises(TypeError, match="int32"):
        tf.concat([x, tf.zeros([2, 3], tf.int32)], 0)
    assert tf.concat([x], 0).op.type == "Identity"
    assert tf.stack([1, 2]).op.type == "Const"
    assert tf.stack([tf.constant(1), 2]).op.type == "Pack"
    assert tf.concat([x, [[1.0, 2.0, 3.0]]], 0).shape.as_list() == [3, 3]


@pytest.mark.parametrize("mode", ["CONSTANT", "constant", "REFLECT", "reflect", "SYMMETRIC", "Symmetric"])
def test_pad_modes(mode):
    value = np.arange(12, dtype=np.float32).reshape(3, 4)
    widths = [[1, 2], [2, 1]]
    x = tf.placeholder(tf.float32, [None, 4])
    padded = tf.pad(x, widths, mode)
    assert padded.shape.as_list() == [None, 7]
    np.testing.assert_array_equal(_run(padded, {x: value}), np.pad(value, widths, mode.lower()))


def test_pad_constant_values_and_errors():
    x = tf.constant([[1, 2]])
    padded = tf.pad(x, [[0, 1], [1, 0]], constant_values=7)
    assert padded.op.type == "PadV2" and tf.pad(x, [[0, 0], [0, 0]]).op.type == "Pad"
    np.testing.assert_array_equal(_run(padded, {}), [[7, 1, 2], [7, 7, 7]])
    with pytest.raises(ValueError, match="Unknown padding mode"):
        tf.pad(x, [[0, 0], [0, 0]], "WRAP")
    with pytest.raises(ValueError, match="too large for REFLECT"):
        tf.pad(x, [[0, 0], [2, 0]], "REFLECT")
    paddings = tf.placeholder(tf.int32, [2, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="paddings must be less than"):
        _run(tf.pad(x, paddings, "reflect"), {paddings: [[0, 0], [2, 0]]})


def test_squeeze_and_expand_dims():
    x = tf.placeholder(tf.float32, [1, None, 1, 3])
    assert tf.squeeze(x).shape.ndims is None
    assert tf.squeeze(x, [0, -2]).shape.as_list() == [None, 3]
    assert tf.squeeze(x, squeeze_dims=2).shape.as_list() == [1, None, 3]
    with pytest.raises(ValueError, match="Can not squeeze dim\\[3\\]"):
        tf.squeeze(x, [3])
    y = tf.squeeze(x, [1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Can not squeeze dim\\[1\\], expected a dimension of 1"):
        _run(y, {x: np.zeros([1, 2, 1, 3])})
    assert tf.expand_dims(x, -1).shape.as_list() == [1, None, 1, 3, 1]
    assert tf.expand_dims(x, dim=1).shape.as_list() == [1, 1, None, 1, 3]
    with pytest.raises(ValueError, match="Tried to expand dim index 5"):
        tf.expand_dims(x, 5)


def test_shape_size_rank_are_ops_and_constant_values():
    from tfnb.ops.inference import constant_value
    x = tf.zeros([2, 3])
    s = tf.shape(x)
    assert s.op.type == "Shape" and s.shape.as_list() == [2]
    assert tf.size(x, out_type=tf.int64).dtype is tf.int64 and tf.rank(x).op.type == "Rank"
    np.testing.assert_array_equal(constant_value(s), [2, 3])
    assert tf.fill([tf.shape(tf.placeholder(tf.float32, [None, 4]))[1], 2], 0.5).shape.as_list() == [4, 2]


def test_zeros_ones_and_likes():
    small = tf.zeros([2, 3])
    assert small.op.type == "Const" and small.op.name == "zeros" and tf.zeros([2000]).op.type == "Fill"
    assert tf.ones([2], tf.int64).dtype is tf.int64
    n = tf.placeholder(tf.int32, [])
    dynamic = tf.ones([n, 2], tf.bool)
    assert dynamic.op.type == "Fill" and dynamic.shape.as_list() == [None, 2]
    x = tf.placeholder(tf.float32, [None, 2])
    assert tf.zeros_like(x, dtype=tf.int32).dtype is tf.int32
    actual = _run([dynamic, tf.zeros_like(x), tf.ones_like(x, dtype=tf.int64), tf.zeros([2], tf.string)],
                  {n: 1, x: np.ones([3, 2], np.float32)})
    for value, expected in zip(actual, [np.ones([1, 2], bool), np.zeros([3, 2], np.float32),
                                        np.ones([3, 2], np.int64), np.array([b"", b""], object)]):
        assert value.dtype == expected.dtype
        np.testing.assert_array_equal(value, expected)


def test_range_dtypes_and_lengths():
    assert tf.range(5).dtype is tf.int32 and tf.range(5).shape.as_list() == [5]
    assert tf.range(1, 2.5, 0.5).dtype is tf.float32 and tf.range(1, 2.5, 0.5).shape.as_list() == [3]
    assert tf.range(10, 1, -3).shape.as_list() == [3]
    assert tf.range(tf.constant(4, tf.int64)).dtype is tf.int64
    assert tf.range(tf.placeholder(tf.int32, [])).shape.as_list() == [None]
    with pytest.raises(ValueError, match="Requires start <= limit"):
        tf.range(3, 1)
    with pytest.raises(ValueError, match="delta != 0"):
        tf.range(1, 3, 0)
    limit = tf.placeholder(tf.int32, [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Requires start <= limit"):
        _run(tf.range(2, limit), {limit: 0})


def test_transpose_and_reverse():
    x = tf.placeholder(tf.float32, [None, 4, 5])
    assert tf.transpose(x).shape.as_list() == [5, 4, None]
    unknown = tf.placeholder(tf.float32, None)
    np.testing.assert_array_equal(_run(tf.transpose(unknown), {unknown: VALUE}), VALUE.T)
    with pytest.raises(ValueError, match="not a permutation"):
        tf.transpose(x, [0, 0, 1])
    with pytest.raises(ValueError, match="more than once"):
        tf.reverse(x, [1, -2])
    value = VALUE.reshape(3, 4, 5)
    np.testing.assert_array_equal(_run(tf.reverse(x, [0, 2]), {x: value}), value[::-1, :, ::-1])


def test_slice_and_tile():
    x = tf.placeholder(tf.float32, [None, 5, 3])
    part = tf.slice(x, [1, 2, 0], [-1, 2, -1])
    assert part.shape.as_list() == [None, 2, 3]
    np.testing.assert_array_equal(_run(part, {x: VALUE}), VALUE[1:, 2:4, :])
    with pytest.raises(ValueError, match="Expected size"):
        tf.slice(x, [0, 4, 0], [1, 2, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expected size"):
        _run(tf.slice(x, [3, 0, 0], [2, 1, 1]), {x: VALUE})
    tiled = tf.tile(x, [2, 1, 0])
    assert tiled.shape.as_list() == [None, 5, 0]


def test_unstack_needs_a_known_num():
    x = tf.placeholder(tf.float32, [None, 3])
    assert len(tf.unstack(x, axis=1)) == 3
    with pytest.raises(ValueError, match="Cannot infer num"):
        tf.unstack(x)
    parts = tf.unstack(x, num=2)
    with pytest.raises(tf.errors.InvalidArgumentError):
        _run(parts, {x: np.zeros([3, 3])})


def test_fetched_slices_are_copies():
    x = tf.constant(VALUE)
    first = _run(x[0], {})
    first[...] = -1
    np.testing.assert_array_equal(_run(x[0], {}), VALUE[0])
