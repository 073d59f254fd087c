"""Peers of 1x1 convolutions as products of the input's rows (kernels/conv/pointwise.py), against NumPy."""

import numpy as np
import pytest

from tfnb.kernels import intra_op
from tfnb.kernels.conv import pointwise
from tfnb.kernels.conv.scratch import Scratch

ATTRS = {"strides": [1, 1, 1, 1], "padding": "SAME", "data_format": "NHWC"}


def _peers(rng, channels=(5, 3, 1)):
    x = rng.standard_normal((3, 4, 5, 6)).astype(np.float32)
    return x, [rng.standard_normal((1, 1, 6, c)).astype(np.float32) for c in channels]


@pytest.mark.parametrize("threads", [1, 2])
def test_each_filter_and_its_epilogue_over_chunks_of_rows(monkeypatch, threads):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    monkeypatch.setattr(Scratch, "chunk_bytes", lambda self, host_bytes=0: 100)  # a few rows a chunk
    rng = np.random.default_rng(0)
    x, filters = _peers(rng)
    chunks = []
    epilogues = [chunks.append, None, lambda values: np.negative(values, out=values)]
    with intra_op.RunThreads(threads, 1):
        outputs = pointwise.pointwise_forward(Scratch(np), x, filters, epilogues)
    for out, w, sign in zip(outputs, filters, (1, 1, -1)):
        assert out.shape == x.shape[:3] + (w.shape[3],)
        np.testing.assert_allclose(out, sign * np.einsum("nhwc,cf->nhwf", x, w[0, 0]), rtol=1e-5, atol=1e-5)
    assert sum(c.shape[0] for c in chunks) == 3 * 4 * 5  # each chunk of rows once
    assert len(chunks) > 2  # BLAS in the calling thread: chunks sized for its caches (scratch._even_chunks)


def test_an_inception_modules_forward_products_leave_chunks_for_a_thread_that_pools_first():
    # GoogLeNet's 3b module at batch 4: 3 MiB of input rows. The pool beside the products holds one thread for
    # most of their time, so each thread's share is several chunks: the pooling thread takes what is left.
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 28, 28, 256)).astype(np.float32)
    filters = [rng.standard_normal((1, 1, 256, c)).astype(np.float32) for c in (128, 128, 32)]
    chunks = []
    with intra_op.RunThreads(2, 1):
        pointwise.pointwise_forward(Scratch(np), x, filters, [chunks.append, None, None])
    assert len(chunks) >= 2 * 2 and sum(c.shape[0] for c in chunks) == 4 * 28 * 28


@pytest.mark.parametrize("threads", [1, 2])
def test_gradients_sum_the_peers_and_addends_into_the_input_and_split_nothing(monkeypatch, threads):
    monkeypatch.setattr(intra_op, "PARALLEL_WORK", 0)
    monkeypatch.setattr(Scratch, "chunk_bytes", lambda self, host_bytes=0: 100)
    rng = np.random.default_rng(1)
    x, filters = _peers(rng)
    dys = [rng.standard_normal(x.shape[:3] + (w.shape[3],)).astype(np.float32) for w in filters]
    addends = [rng.standard_normal(x.shape).astype(np.float32) for _ in range(2)]
    with intra_op.RunThreads(threads, 1):
        dx, *dws = pointwise.pointwise_gradients(Scratch(np), x, dys, filters, addends)
    expected = sum(np.einsum("nhwf,cf->nhwc", dy, w[0, 0]) for dy, w in zip(dys, filters)) + sum(addends)
    np.testing.assert_allclose(dx, expected, rtol=1e-5, atol=1e-5)
    for dw, dy, w in zip(dws, dys, filters):
        assert dw.shape == w.shape
        np.testing.assert_allclose(dw[0, 0], np.einsum("nhwc,nhwf->cf", x, dy), rtol=1e-4, atol=1e-4)


def test_only_1x1_filters_at_stride_1_over_contiguous_nhwc_claim():
    x, filters = _peers(np.random.default_rng(2))
    assert pointwise.pointwise_claims(x, filters, ATTRS)
    assert pointwise.pointwise_claims(x, filters, dict(ATTRS, padding="VALID"))
    assert not pointwise.pointwise_claims(x, filters, dict(ATTRS, strides=[1, 2, 2, 1]))
    assert not pointwise.pointwise_claims(x, filters, dict(ATTRS, padding="EXPLICIT"))
    assert not pointwise.pointwise_claims(x[:, :, ::2], filters, ATTRS)  # not contiguous
    assert not pointwise.pointwise_claims(x, filters + [np.zeros((3, 3, 6, 2), np.float32)], ATTRS)
    assert not pointwise.pointwise_claims(x, [w.astype(np.float64) for w in filters], ATTRS)
    assert not pointwise.pointwise_claims(x[:0], filters, ATTRS)


@pytest.mark.parametrize("device", ["strict", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_on_a_device_the_peers_take_their_rows_in_one_chunk_and_give_the_hosts_values(device):
    if device == "gpu":
        import cupy as xp
    else:
        from tfnb.runtime.strict_numpy import STRICT_XP as xp
    rng = np.random.default_rng(3)
    x, filters = _peers(rng)
    dys = [rng.standard_normal(x.shape[:3] + (w.shape[3],)).astype(np.float32) for w in filters]
    addend = rng.standard_normal(x.shape).astype(np.float32)
    on_host = (pointwise.pointwise_forward(Scratch(np), x, filters, [None] * 3)
               + pointwise.pointwise_gradients(Scratch(np), x, dys, filters, [addend]))
    chunks = []
    to_device = [xp.asarray(a) for a in (x, *filters, *dys, addend)]
    dx, *rest = to_device
    on_device = (pointwise.pointwise_forward(Scratch(xp), dx, rest[:3], [chunks.append, None, None])
                 + pointwise.pointwise_gradients(Scratch(xp), dx, rest[3:6], rest[:3], [rest[6]]))
    assert len(chunks) == 1  # Scratch.chunk_bytes: a device takes the batch whole
    for device_value, host_value in zip(on_device, on_host):
        np.testing.assert_allclose(device_value.get(), host_value, rtol=1e-5, atol=1e-5)
