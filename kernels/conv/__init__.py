"""Convolution and pooling kernels (NHWC), written against `xp`.

A 2-D convolution has three directions: forward (Conv2D), the gradient with respect to its input
(Conv2DBackpropInput, which is also conv2d_transpose) and with respect to its filter
(Conv2DBackpropFilter). As cuDNN does, each direction has several algorithms:

- "gemm": im2col through a strided view and one large matrix product; any stride, dilation, padding.
- "fft": the product in the frequency domain, on the smallest canvas that the outputs read. The 2-D
  DFTs of such small canvases (tens of points a side) run as matrix products with DFT matrices:
  at these sizes BLAS beats numpy.fft's per-line transforms several times over. Strides, dilations
  and paddings only change which canvas positions the matrices visit.
- "rows": for few input channels: the kw*C columns of every canvas row's windows, copied once, then
  one product per window row over views of them (kh times less copying than im2col); stride 1 in height.
- "banded": for few input channels: im2col rows that each cover a group of adjacent outputs of a row, and the
  filter as a banded matrix: more multiply-adds, in wider products over a smaller, faster copied matrix.
- "winograd", "winograd 4x4", "winograd 5x5": F(2x2, 3x3), F(4x4, 3x3) and F(2x2, 5x5), for those filters
  at stride 1 without dilation: fewer multiplications than any direct product.

The first time a direction meets a (shapes, strides, dilations, paddings, dtype) key, every
algorithm that claims it runs and is timed; the fastest is kept for that key, process-wide.

The kernels are registered `parallel`: during a session's run they split their batch across the
run's threads (kernels/intra_op.py), each chunk through every stage in one thread, near the caches,
while BLAS runs in one thread. Large temporaries and outputs are reused from step to step (`Scratch`).

Modules: scratch (scratch arrays, canvases, windows, batch chunks), one per algorithm (gemm, fft,
rows, banded, winograd), choice (timing and the process-wide cache), convolution and pooling (the kernels),
arguments (the checks both kinds of kernel share).
"""

from tfnb.kernels.conv import convolution, pooling  # noqa: F401  importing registers the kernels
from tfnb.kernels.conv.choice import ALGORITHMS, chosen_algorithms, clear_algorithm_cache, run_convolution
from tfnb.kernels.conv.scratch import Scratch

__all__ = ["ALGORITHMS", "Scratch", "chosen_algorithms", "clear_algorithm_cache", "run_convolution"]
