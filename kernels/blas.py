"""A matrix product added into an array in one BLAS call, from the OpenBLAS that NumPy itself links.

NumPy's matmul writes a product into fresh or given memory; it cannot add one into an array. BLAS's GEMM
computes C = alpha * A @ B + beta * C, and with beta = 1 a gradient-descent step on a dense layer's weights,
W -= rate * x.T @ dy, is one call that reads and writes W once while the product is in its registers, instead of
a product written out, then read back beside W (kernels/training.descend_by_product). Against the product and a
subtraction, on this project's machine (two threads): the MLP benchmark's 784x512 layer at batch 128 took 0.87x
the time, its 512x512 one 0.86x, a band of AlexNet's first dense layer at batch 4 (64x4 @ 4x4096) 0.51x, a
262x1000 band 0.45x; a 512x10 product 1.12x (an output too small to gain: descend_by_product keeps the product
for it).

The call goes through ctypes to NumPy's own library, found as threadpoolctl lists it, so it shares the thread
count the runs set (kernels/intra_op.py). Only the OpenBLAS builds of NumPy's wheels (scipy-openblas, whose
symbols carry the `scipy_` prefix, and a `64_` suffix in their 64-bit integer builds) are used: another BLAS, or
none found, makes product_accumulator None, and the caller computes the product with NumPy.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable
from pathlib import Path

import numpy as np
import threadpoolctl

_ROW_MAJOR, _NO_TRANSPOSE, _TRANSPOSE = 101, 111, 112  # CBLAS's enumerations
_GEMMS = {np.dtype(np.float32): "sgemm", np.dtype(np.float64): "dgemm"}


@functools.cache
def _gemm(dtype: np.dtype):
    """NumPy's cblas_?gemm for `dtype` as a ctypes function, or None where NumPy's BLAS is not scipy-openblas."""
    try:
        blas = np.show_config(mode="dicts").get("Build Dependencies", {}).get("blas", {})
    except (TypeError, ValueError, AttributeError):  # a NumPy that cannot say how it was built
        return None
    if blas.get("name") != "scipy-openblas":
        return None
    site = Path(np.__file__).resolve().parent.parent  # NumPy's wheels keep it in numpy.libs/ or numpy/.dylibs/
    libraries = [controller.filepath for controller in threadpoolctl.ThreadpoolController().lib_controllers
                 if controller.internal_api == "openblas" and Path(controller.filepath).resolve().parent
                 in (site / "numpy.libs", site / "numpy" / ".dylibs")]
    if len(libraries) != 1:
        return None
    wide = "USE64BITINT" in blas.get("openblas configuration", "")
    integer = ctypes.c_int64 if wide else ctypes.c_int32
    try:
        gemm = getattr(ctypes.CDLL(libraries[0]), f"scipy_cblas_{_GEMMS[dtype]}{'64_' if wide else ''}")
    except (OSError, AttributeError):
        return None
    scalar = ctypes.c_float if dtype == np.float32 else ctypes.c_double
    enum, pointer = ctypes.c_int, ctypes.c_void_p
    gemm.argtypes = [enum, enum, enum, integer, integer, integer, scalar, pointer, integer, pointer, integer, scalar,
                     pointer, integer]
    gemm.restype = None
    return gemm


def _operand(matrix) -> tuple[int, int] | None:
    """(CBLAS transpose flag, leading dimension) of a 2-D operand laid out as BLAS reads it, else None: rows or
    columns one element apart, the other axis a whole number of elements and at least as long as a row."""
    (rows, columns), (row_stride, column_stride), size = matrix.shape, matrix.strides, matrix.itemsize
    if column_stride == size and row_stride % size == 0 and row_stride >= columns * size:
        return _NO_TRANSPOSE, row_stride // size
    if row_stride == size and column_stride % size == 0 and column_stride >= rows * size:
        return _TRANSPOSE, column_stride // size
    return None


def product_accumulator(a, b, out) -> Callable[[float, slice], None] | None:
    """A function add(alpha, rows) doing out[rows] += alpha * (a[rows] @ b) in one GEMM of NumPy's BLAS, for any
    slice of the rows (bands, as descents take them); None where GEMM cannot take these arrays: NumPy arrays of
    one float dtype whose GEMM was found, (m, k) @ (k, n) into (m, n), each at least 2 along every axis, out's
    rows contiguous and writable, none of them sharing memory with out. The arrays are checked once, here: a
    slice of the rows of each keeps the layout found."""
    layouts = _layouts(a, b, out)
    if layouts is None:
        return None
    gemm, (transpose_a, lead_a), (transpose_b, lead_b), lead_out = layouts
    (rows, k), n = a.shape, b.shape[1]
    # Addresses from the array interface: `.ctypes` builds a Python object per array, and this runs every step.
    a_start, b_start = a.__array_interface__["data"][0], b.__array_interface__["data"][0]
    out_start, a_row, out_row = out.__array_interface__["data"][0], a.strides[0], out.strides[0]

    def add(alpha: float, chosen: slice) -> None:
        first, end, step = chosen.indices(rows)
        if step != 1:
            raise ValueError(f"rows {chosen} of {rows} are not one band")
        if end > first:
            gemm(_ROW_MAJOR, transpose_a, transpose_b, end - first, n, k, alpha, a_start + first * a_row, lead_a,
                 b_start, lead_b, 1.0, out_start + first * out_row, lead_out)

    add.arrays = (a, b, out)  # held while add lives: the addresses it writes through stay theirs
    return add


def _layouts(a, b, out) -> tuple | None:
    """(GEMM, a's and b's (transpose flag, leading dimension), out's leading dimension), or None (see
    product_accumulator)."""
    if not (type(a) is type(b) is type(out) is np.ndarray and a.dtype == b.dtype == out.dtype
            and a.ndim == b.ndim == out.ndim == 2):
        return None
    (m, k), n = a.shape, b.shape[1]
    if b.shape[0] != k or out.shape != (m, n) or min(m, n, k) < 2 or not out.flags.writeable:
        return None
    into, left, right = _operand(out), _operand(a), _operand(b)
    if into is None or into[0] != _NO_TRANSPOSE or left is None or right is None:
        return None
    gemm = _gemm(a.dtype) if a.dtype in _GEMMS else None
    if gemm is None or np.may_share_memory(a, out) or np.may_share_memory(b, out):
        return None
    return gemm, left, right, into[1]
