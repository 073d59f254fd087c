"""Peers of 1x1 convolutions at stride 1 (an inception module's), as products of the input's rows.

A 1x1 convolution at stride 1 is a matrix product of the input's pixels (rows of C channels) with the filter's
(C, F) matrix. Peers of one input (tfnb/runtime/fusion.py) run here per chunk of rows, each filter's product in
turn while the chunk is in the cache: their filters are never concatenated, their outputs never copied apart,
and a chunk's two gradients (the input's, summed over the peers, and each filter's) are one thread's work, where
a merged convolution's two directions side by side wait for the slower one.
"""

from __future__ import annotations

from tfnb.kernels.conv.scratch import Scratch, each_chunk

# Bytes of input rows per chunk of the forward products. An inception module's pool runs beside them
# (tfnb/runtime/fusion.py): the thread that pools joins late, and takes chunks only if some are left. In
# chunks of 2 MiB, GoogLeNet's (two per line) went to the other thread both, which then ran 1.4-2.8 ms alone;
# in chunks of 512 KiB its training step took 0.979-0.992x the time; 256 KiB and 1 MiB did no better (alternating
# steps in one process, batch 4). The gradients' chunks sum partial filter gradients: 512 KiB took 1.027x.
_FORWARD_CHUNK_BYTES = 512 << 10


def pointwise_claims(x, filters, attrs: dict) -> bool:
    """Whether the peers' convolutions of x are products of its rows: 1x1 filters, stride 1, no explicit padding,
    over a non-empty contiguous NHWC x whose channels and dtype the filters share."""
    return (list(attrs["strides"][1:3]) == [1, 1] and attrs["padding"] in ("SAME", "VALID")
            and attrs.get("data_format", "NHWC") == "NHWC" and x.ndim == 4 and x.size > 0 and x.flags.c_contiguous
            and all(w.shape[:3] == (1, 1, x.shape[3]) and w.dtype == x.dtype and w.shape[3] > 0 for w in filters))


def pointwise_forward(scratch: Scratch, x, filters, epilogues) -> tuple:
    """Each filter's convolution of x, its epilogue (or None) applied to each chunk of its output as written."""
    xp, channels = scratch.xp, x.shape[3]
    rows = x.reshape(-1, channels)
    matrices = [w.reshape(channels, w.shape[3]) for w in filters]
    outputs = [scratch.output(x.shape[:3] + (w.shape[3],), x.dtype) for w in filters]
    flats = [out.reshape(-1, out.shape[3]) for out in outputs]

    def chunk(chosen: slice) -> None:
        for matrix, flat, epilogue in zip(matrices, flats, epilogues):
            xp.matmul(rows[chosen], matrix, out=flat[chosen])
            if epilogue is not None:
                epilogue(flat[chosen])

    each_chunk(chunk, rows.shape[0], channels * x.itemsize, scratch.chunk_bytes(_FORWARD_CHUNK_BYTES),
               work=rows.shape[0] * channels * sum(m.shape[1] for m in matrices))
    return tuple(outputs)


def pointwise_gradients(scratch: Scratch, x, dys, filters, addends) -> tuple:
    """(The input gradient summed over the peers plus the addends, then each filter's gradient) of the peers'
    convolutions of x, given their output gradients dys (contiguous, of x's pixels)."""
    xp, channels = scratch.xp, x.shape[3]
    rows = x.reshape(-1, channels)
    gradients = [dy.reshape(-1, dy.shape[3]) for dy in dys]
    matrices = [w.reshape(channels, w.shape[3]) for w in filters]
    summed = [addend.reshape(-1, channels) for addend in addends]
    dx = scratch.output(x.shape, x.dtype)
    flat_dx = dx.reshape(-1, channels)

    def chunk(chosen: slice) -> list:
        """This chunk's input gradient, written into dx, and its part of each filter's gradient."""
        target = flat_dx[chosen]
        xp.matmul(gradients[0][chosen], matrices[0].T, out=target)
        if len(gradients) > 1:
            term = scratch("pointwise.term", target.shape, target.dtype)
            for gradient, matrix in zip(gradients[1:], matrices[1:]):
                xp.add(target, xp.matmul(gradient[chosen], matrix.T, out=term), out=target)
        for addend in summed:
            xp.add(target, addend[chosen], out=target)
        return [rows[chosen].T @ gradient[chosen] for gradient in gradients]

    # Summed in chunk order: the same result whichever thread took which chunk.
    first, *others = each_chunk(chunk, rows.shape[0], (channels + sum(g.shape[1] for g in gradients)) * x.itemsize,
                                scratch.chunk_bytes(), work=2 * rows.shape[0] * channels * sum(m.shape[1] for m in matrices))
    for other in others:
        for total, part in zip(first, other):
            xp.add(total, part, out=total)
    return (dx, *(total.reshape(w.shape) for total, w in zip(first, filters)))
