"""The GPU path without a GPU: every registry example and gradient on a device whose arrays behave as CuPy's
(tfnb/runtime/strict_numpy.py), and every function kernels call through `xp` present in CuPy's namespace."""

import ast
import pathlib
import types

import numpy as np
import pytest
from registry_cases import (
    CASES,
    GRADIENT_CASES,
    call_example,
    check_output,
    example_graph,
    example_values,
    gradient_values,
)

import tfnb as tf
from tfnb.kernels import find_kernel, has_kernel
from tfnb.runtime.binding import KernelCache
from tfnb.runtime.devices import LocalDevice, local_devices
from tfnb.runtime.rendezvous import transfer
from tfnb.runtime.resources import ResourceManager
from tfnb.runtime.strict_numpy import STRICT_XP, StrictArray

STRICT = "/device:STRICT:0"
# Without rewrites: folding would compute some ops on the host before the run.
CONFIG = tf.ConfigProto(device_count={"STRICT": 1}, graph_options=tf.GraphOptions(
    tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0)))
# CuPy's top-level names (read from cupy/__init__.py), and the functions of its submodules kernels may reach.
CUPY_NAMES = set((pathlib.Path(__file__).parent / "data" / "cupy_namespace.txt").read_text().split())
CUPY_UFUNC_METHODS = {"at", "reduceat", "reduce", "accumulate", "outer"}
CUPY_SUBMODULE_NAMES = {"lib.stride_tricks.as_strided", "lib.stride_tricks.sliding_window_view", "linalg.norm",
                        "linalg.inv", "linalg.solve", "linalg.cholesky", "linalg.qr", "linalg.svd", "linalg.det",
                        "fft.fft", "fft.ifft", "fft.rfft", "fft.irfft", "fft.fft2", "fft.ifft2", "fft.rfft2",
                        "fft.irfft2", "cuda.get_current_stream"}


def test_strict_arrays_refuse_numpy_as_cupy_arrays_do():
    x = STRICT_XP.asarray(np.arange(6.0).reshape(2, 3))
    assert isinstance(x, StrictArray) and isinstance(x.sum(), StrictArray) and x.sum().ndim == 0
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(x)
    with pytest.raises(TypeError):
        np.add(x, 1.0)
    with pytest.raises(TypeError):
        np.concatenate([x, x])
    np.testing.assert_array_equal(STRICT_XP.concatenate([x, x]).get(), np.concatenate([x.get(), x.get()]))
    np.testing.assert_array_equal((x * 2 + 1).get(), x.get() * 2 + 1)


def test_fused_functions_allow_only_what_cupy_fuse_compiles():
    x = STRICT_XP.asarray(np.arange(4.0) - 2)
    fused = STRICT_XP.fuse(lambda a, b: STRICT_XP.where(a > 0, STRICT_XP.tanh(a * 2 + b), 1 / (1 + STRICT_XP.exp(-a))))
    expected = np.where(x.get() > 0, np.tanh(x.get() * 2 + 1.0), 1 / (1 + np.exp(-x.get())))
    np.testing.assert_array_equal(fused(x, 1.0).get(), expected)
    for refused in (lambda a: a.reshape(2, 2), lambda a: STRICT_XP.sum(a), lambda a: a + x,
                    lambda a: STRICT_XP.add(a, 1, out=a), lambda a: a if a else a):
        with pytest.raises(TypeError, match="compiled with fuse"):
            STRICT_XP.fuse(refused)(x)
    with pytest.raises(TypeError):
        STRICT_XP.fuse(lambda a: np.add(a, 1))(x)


ELEMENTWISE_CASES = [(t, i, e) for t, i, e in CASES
                     if find_kernel(t, "STRICT") is not None and find_kernel(t, "STRICT").elementwise]


@pytest.mark.parametrize("op_type,index,example", ELEMENTWISE_CASES, ids=[f"{t}-{i}" for t, i, _ in ELEMENTWISE_CASES])
def test_every_elementwise_kernel_compiles_into_a_fused_kernel(op_type, index, example):
    # Kernels registered `elementwise` join fused groups on GPUs (tfnb/runtime/fusion.py): each must run inside
    # cupy.fuse, where only ufuncs and operators on the arguments and scalars exist.
    device = local_devices({"STRICT": 1})[-1]
    kernels = KernelCache(ResourceManager())
    checked = 0
    for dtype, values in example_values(op_type, index, example):
        graph, inputs, _ = example_graph(example, dtype, values, True, STRICT)
        with graph.as_default(), tf.Session(graph=graph, config=CONFIG) as sess:
            for op in [op for op in graph.get_operations() if op.type == op_type]:
                kernel_def = find_kernel(op_type, "STRICT")
                if not op.outputs[0].shape.ndims or not kernel_def.computes_elementwise(
                        tuple(t.dtype.np_dtype for t in op.inputs)):
                    continue
                arguments = [STRICT_XP.asarray(v) for v in sess.run(list(op.inputs), dict(zip(inputs, values)))]
                kernel, _ = kernels.bind(op, device)
                np.testing.assert_array_equal(STRICT_XP.fuse(kernel)(*arguments).get(), kernel(*arguments).get(),
                                              err_msg=f"{op_type} example {index} in {dtype.name}")
                checked += 1
    if not checked:
        pytest.skip(f"{op_type} example {index} has no output of at least one dimension on which it is elementwise")


@pytest.mark.parametrize("op_type,index,example", CASES, ids=[f"{t}-{i}" for t, i, _ in CASES])
def test_forward_on_a_device_like_a_gpu(op_type, index, example):
    if not has_kernel(op_type, "STRICT"):
        pytest.skip(f"{op_type} has no kernel for devices other than the CPU (as in TF)")
    for dtype, values in example_values(op_type, index, example):
        graph, inputs, outputs = example_graph(example, dtype, values, True, STRICT)
        # As in TF, an op taking or giving strings has no kernel there: soft placement puts it on the host (and
        # the ops sharing a resource with it, such as a queue of strings).
        strings = {op for op in graph.get_operations() if any(t.dtype is tf.string for t in (*op.inputs, *op.outputs))}
        config = tf.ConfigProto(device_count={"STRICT": 1}, graph_options=CONFIG.graph_options,
                                allow_soft_placement=bool(strings))
        with graph.as_default(), tf.Session(graph=graph, config=config) as sess:
            actual = sess.run(outputs, dict(zip(inputs, values)))
            placed = {op.assigned_device for op in sess.last_plan().ops if op.type == op_type}
        if not strings or any(op.type == op_type for op in strings):
            where = "STRICT" if not strings else "CPU"
            assert placed == {f"/job:localhost/replica:0/task:0/device:{where}:0"}, f"{op_type} not placed on {where}"
        expected = call_example(example.reference, values, dtype)
        label = f"{op_type} example {index} in {dtype.name} on {STRICT}"
        if isinstance(outputs, (list, tuple)):
            for a, e, t in zip(actual, expected, outputs):
                check_output(a, e, t, dtype, example, label)
        else:
            check_output(actual, expected, outputs, dtype, example, label)


@pytest.mark.parametrize("device", [STRICT, pytest.param("/device:GPU:0", marks=pytest.mark.gpu)], ids=["strict", "gpu"])
@pytest.mark.parametrize("op_type,index,example", GRADIENT_CASES, ids=[f"{t}-{i}" for t, i, _ in GRADIENT_CASES])
def test_gradient_on_a_device_like_a_gpu_matches_the_cpu(op_type, index, example, device):
    values = gradient_values(index, example)
    results = []
    on_device = (device, CONFIG if device == STRICT else tf.ConfigProto(graph_options=CONFIG.graph_options))
    for where, config in (("/device:CPU:0", None), on_device):
        graph = tf.Graph()
        with graph.as_default():
            inputs = [tf.placeholder(tf.as_dtype(v.dtype), v.shape) for v in values]
            with tf.device(where):
                outputs = call_example(example.build, inputs, tf.float64)
                outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
                xs = [x for x, v in zip(inputs, values) if v.dtype.kind == "f"]
                grads = [g for g in tf.gradients([tf.reduce_sum(y * y) for y in outputs], xs) if g is not None]
            with tf.Session(graph=graph, config=config) as sess:
                results.append(sess.run([tf.convert_to_tensor(g) for g in grads], dict(zip(inputs, values))))
    for cpu, strict in zip(*results):
        np.testing.assert_allclose(strict, cpu, rtol=1e-9, atol=1e-12, err_msg=f"{op_type} example {index}")


def _xp_attributes(tree: ast.AST) -> set[str]:
    """Dotted names read through a variable or attribute named `xp` (`xp.add`, `node.xp.lib.stride_tricks...`)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            parts, inner = [node.attr], node.value
            while isinstance(inner, ast.Attribute) and inner.attr != "xp":
                parts.append(inner.attr)
                inner = inner.value
            if (isinstance(inner, ast.Name) and inner.id == "xp") or (isinstance(inner, ast.Attribute)
                                                                        and inner.attr == "xp"):
                found.add(".".join(reversed(parts)))
    return {name for name in found if not any(other.startswith(name + ".") for other in found)}


def _in_cupy(name: str) -> bool:
    top, _, rest = name.partition(".")
    if top in ("lib", "linalg", "fft", "random", "cuda"):
        return name in CUPY_SUBMODULE_NAMES
    return top in CUPY_NAMES and (not rest or rest in CUPY_UFUNC_METHODS)


def test_every_function_kernels_call_through_xp_is_in_cupy():
    kernels = pathlib.Path(__file__).resolve().parents[3] / "kernels"
    used = set()
    for path in kernels.rglob("*.py"):
        used |= _xp_attributes(ast.parse(path.read_text()))
    missing = sorted(name for name in used if not name.startswith("__") and not _in_cupy(name))
    assert not missing, f"kernels call these through xp, and CuPy has no such function: {missing}"


def test_a_string_op_asked_onto_a_device_like_a_gpu_fails_clearly_or_goes_to_the_host_with_soft_placement():
    x = tf.placeholder(tf.string, [2])
    with tf.device(STRICT):
        joined = x + x
    feeds = {x: np.array([b"a", b"bc"], dtype=object)}
    with tf.Session(config=tf.ConfigProto(device_count={"STRICT": 1})) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"'add'.*take no string tensors"):
            sess.run(joined, feeds)
    config = tf.ConfigProto(device_count={"STRICT": 1}, allow_soft_placement=True)
    with tf.Session(config=config) as sess:
        assert sess.run(joined, feeds).tolist() == [b"aa", b"bcbc"]
        assert sess.last_plan().ops[-1].type == "Add" and sess.last_plan().ops[-1].assigned_device.endswith("CPU:0")


def test_a_value_moves_between_two_devices_of_different_array_namespaces_through_the_host():
    strict = local_devices({"STRICT": 1})[-1]
    # A namespace standing for CuPy's: its arrays are tagged NumPy arrays.
    gpu = LocalDevice("/job:localhost/replica:0/task:0/device:GPU:0", "GPU", 0,
                      types.SimpleNamespace(asarray=lambda value: ("on the GPU", np.asarray(value))))
    where, value = transfer(strict, gpu)(STRICT_XP.asarray(np.arange(3.0)))
    assert where == "on the GPU" and type(value) is np.ndarray and value.tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("device", [STRICT, pytest.param("/device:GPU:0", marks=pytest.mark.gpu)], ids=["strict", "gpu"])
@pytest.mark.parametrize("ksize,stride", [(3, 2), (2, 2)], ids=["overlapping", "tiling"])
def test_a_pool_on_a_device_like_a_gpu_takes_the_whole_batch_at_once_and_matches_the_cpu(monkeypatch, device, ksize,
                                                                                           stride):
    # Parts of a batch suit a CPU core's caches; on a GPU each part costs dozens of kernel launches.
    from tfnb.kernels.conv import pooling
    parts, split = [], pooling._in_cache_sized_parts

    def recording(scratch, fn, x):
        on_host = type(x) is np.ndarray
        return split(scratch, lambda part: parts.append((on_host, part.start, part.stop)) or fn(part), x)

    monkeypatch.setattr(pooling, "_in_cache_sized_parts", recording)
    x = tf.placeholder(tf.float32, [16, 32, 32, 64])
    results = {}
    for where, config in (("/device:CPU:0", None), (device, CONFIG if device == STRICT else None)):
        with tf.device(where):
            pooled = tf.nn.max_pool(tf.nn.relu(x), [1, ksize, ksize, 1], [1, stride, stride, 1], "SAME")
            grad = tf.gradients(tf.reduce_sum(pooled * pooled), x)[0]
        with tf.Session(config=config) as sess:
            results[where] = sess.run([pooled, grad], {x: np.random.default_rng(5).standard_normal(
                (16, 32, 32, 64)).astype(np.float32)})
    assert {(start, stop) for on_host, start, stop in parts if not on_host} == {(0, 16)}
    assert len({(start, stop) for on_host, start, stop in parts if on_host}) > 1
    for on_device, cpu in zip(results[device], results["/device:CPU:0"]):
        np.testing.assert_array_equal(on_device, cpu)
