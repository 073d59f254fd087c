"""The files of a checkpoint and their validation: a safetensors data file and its JSON index, a CRC32 per tensor.

    <prefix>.safetensors   safetensors: an 8-byte little-endian header length, a JSON header giving each
                           tensor's dtype, shape and byte range, then the tensors' bytes. The header's
                           __metadata__ holds the format, the save's id and each tensor's CRC32, so the
                           data file can be checked on its own.
    <prefix>.index.json    {"format", "tfnb_version", "global_step", "save_id", "data_bytes",
                            "tensors": {name: {"dtype", "shape", "offsets": [begin, end], "crc32"}}}:
                           the same table, with byte ranges counted from the start of the data file.

Everything read from either file is validated before it is used, and a reader trusts a tensor's bytes
only once their CRC32 matches: a file that is not what the index says is a DataLossError naming the
file (and the tensor), a data file shorter than its index says is an OutOfRangeError, as in TF.

The index and the data of one save carry the same save id and must agree field for field. A save that
reuses a prefix (no global step) renames its data file into place before its index, so a process killed
between the two leaves the new data beside the previous save's index: the ids differ, and there the
index must still agree on every name, dtype, shape and byte range, and the data's own checksums decide.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import struct
import zlib
from dataclasses import dataclass

import numpy as np

from tfnb.framework import dtypes
from tfnb.framework.errors import DataLossError, OutOfRangeError

__all__ = ["FORMAT", "STORABLE", "CheckpointFiles", "TensorEntry", "checksum", "data_metadata", "index_record",
           "open_checkpoint"]

FORMAT = "tfnb-checkpoint-2"
DATA, INDEX = ".safetensors", ".index.json"
# safetensors stores these; strings (object arrays) and complex numbers it cannot.
STORABLE = dtypes.REAL + (dtypes.bool_,)
_SAFETENSORS_DTYPES = {"BOOL": dtypes.bool_, "U8": dtypes.uint8, "I8": dtypes.int8, "U16": dtypes.uint16,
                       "I16": dtypes.int16, "I32": dtypes.int32, "I64": dtypes.int64, "F16": dtypes.float16,
                       "F32": dtypes.float32, "F64": dtypes.float64}
_STORABLE_BY_NAME = {d.name: d for d in STORABLE}
# Bounds on what a reader accepts, far above any real checkpoint, so that a corrupt length cannot make it
# allocate or parse without end (safetensors itself refuses headers over 100 MB).
_MAX_HEADER_BYTES = 100_000_000
_MAX_INDEX_BYTES = 256 * 2**20
_MAX_RANK = 64
_SAVE_ID = re.compile(r"[0-9a-f]{32}")
_INDEX_FIELDS = {"format", "tfnb_version", "global_step", "save_id", "data_bytes", "tensors"}
_ENTRY_FIELDS = {"dtype", "shape", "offsets", "crc32"}
_HEADER_ENTRY_FIELDS = {"dtype", "shape", "data_offsets"}


@dataclass(frozen=True)
class TensorEntry:
    """One stored tensor: its dtype, shape, byte range [begin, end) in the data file, and the CRC32 of those bytes."""

    name: str
    dtype: dtypes.DType
    shape: tuple
    begin: int
    end: int
    crc32: int

    def layout(self) -> tuple:
        return self.dtype, self.shape, self.begin, self.end


def checksum(array: np.ndarray) -> int:
    """The CRC32 of an array's bytes as the data file stores them (C order, little-endian)."""
    return zlib.crc32(_bytes_of(np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))))


def _bytes_of(array: np.ndarray) -> np.ndarray:
    """A C-contiguous array's memory as a flat uint8 array (a view: reading into it fills the array)."""
    return array.reshape(-1).view(np.uint8)


def data_metadata(save_id: str, checksums: dict[str, int]) -> dict[str, str]:
    """The data file's safetensors __metadata__: format, save id, and each tensor's CRC32 (as JSON text)."""
    return {"format": FORMAT, "save_id": save_id, "crc32": json.dumps(checksums, sort_keys=True)}


# -- reading and validating ---------------------------------------------------------------------------


def _corrupt(path: str, problem: str) -> DataLossError:
    return DataLossError(None, None, f"Checkpoint file {path} is corrupt: {problem}")


def _truncated(path: str, size: int, needed: int) -> OutOfRangeError:
    return OutOfRangeError(None, None, f"Checkpoint file {path} is truncated: read {size} bytes where {needed} were "
                           f"expected")


def _is_int(value) -> bool:
    return type(value) is int


def _json(text, path: str):
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as error:  # RecursionError: nesting deeper than Python's parser goes
        raise _corrupt(path, f"not valid JSON ({type(error).__name__}: {error})") from None


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _checked_entry(name, dtype, shape, begin, end, crc32, path: str) -> TensorEntry:
    """A TensorEntry after checking each field's type and that the byte range fits the dtype and shape."""
    if not isinstance(name, str) or not name:
        raise _corrupt(path, f"a tensor name must be a non-empty string, got {name!r:.80}")
    if type(shape) is not list or len(shape) > _MAX_RANK or not all(_is_int(d) and d >= 0 for d in shape):
        raise _corrupt(path, f"tensor '{name}': shape {shape!r:.80} is not a list of sizes")
    if not (_is_int(begin) and _is_int(end) and 0 <= begin <= end):
        raise _corrupt(path, f"tensor '{name}': byte range [{begin!r:.20}, {end!r:.20}) is not a range")
    if end - begin != math.prod(shape) * dtype.np_dtype.itemsize:
        raise _corrupt(path, f"tensor '{name}': {end - begin} bytes for a {dtype.name} tensor of shape {shape}")
    if not (_is_int(crc32) and 0 <= crc32 < 2**32):
        raise _corrupt(path, f"tensor '{name}': checksum {crc32!r:.40} is not a CRC32")
    return TensorEntry(name, dtype, tuple(shape), begin, end, crc32)


def _check_disjoint(entries: dict[str, TensorEntry], path: str) -> None:
    """No two tensors' byte ranges overlap (empty tensors take no bytes)."""
    ranges = sorted((e.begin, e.end, e.name) for e in entries.values() if e.end > e.begin)
    for (_, end, name), (begin, _, next_name) in itertools.pairwise(ranges):
        if begin < end:
            raise _corrupt(path, f"tensors '{name}' and '{next_name}' overlap")


@dataclass(frozen=True)
class Index:
    """A validated `.index.json`."""

    path: str
    global_step: int | None
    save_id: str
    data_bytes: int
    tensors: dict[str, TensorEntry]


def read_index(prefix: str) -> Index:
    """The checkpoint's index, every field checked; DataLossError naming the file if it is not a valid index."""
    path = prefix + INDEX
    with open(path, "rb") as f:
        text = f.read(_MAX_INDEX_BYTES + 1)
    if len(text) > _MAX_INDEX_BYTES:
        raise _corrupt(path, f"an index over {_MAX_INDEX_BYTES} bytes")
    record = _json(text, path)
    if type(record) is not dict or set(record) != _INDEX_FIELDS:
        raise _corrupt(path, f"not a tfnb checkpoint index (fields {sorted(record) if type(record) is dict else None})")
    if record["format"] != FORMAT:
        raise _corrupt(path, f"format {record['format']!r:.40}, where tfnb reads {FORMAT!r}")
    step, save_id, data_bytes, tensors = (record[k] for k in ("global_step", "save_id", "data_bytes", "tensors"))
    if step is not None and not _is_int(step):
        raise _corrupt(path, f"global_step {step!r:.40} is not an integer")
    if not (isinstance(save_id, str) and _SAVE_ID.fullmatch(save_id)):
        raise _corrupt(path, f"save_id {save_id!r:.40} is not a save id")
    if not (_is_int(data_bytes) and data_bytes >= 8) or type(tensors) is not dict:
        raise _corrupt(path, "data_bytes must be a size and tensors a JSON object")
    entries = {name: _index_entry(name, entry, data_bytes, path) for name, entry in tensors.items()}
    _check_disjoint(entries, path)
    return Index(path, step, save_id, data_bytes, entries)


def _index_entry(name: str, entry, data_bytes: int, path: str) -> TensorEntry:
    if type(entry) is not dict or set(entry) != _ENTRY_FIELDS:
        raise _corrupt(path, f"tensor '{name:.80}': an entry needs exactly the fields {sorted(_ENTRY_FIELDS)}")
    dtype = entry["dtype"]
    if not isinstance(dtype, str) or dtype not in _STORABLE_BY_NAME:
        raise _corrupt(path, f"tensor '{name:.80}': {dtype!r:.40} is not a dtype a checkpoint holds")
    offsets = entry["offsets"]
    if type(offsets) is not list or len(offsets) != 2:
        raise _corrupt(path, f"tensor '{name:.80}': offsets must be [begin, end]")
    checked = _checked_entry(name, _STORABLE_BY_NAME[dtype], entry["shape"], *offsets, entry["crc32"], path)
    if checked.end > data_bytes:
        raise _corrupt(path, f"tensor '{name}': its bytes end at {checked.end}, past the data's {data_bytes}")
    return checked


@dataclass(frozen=True)
class DataHeader:
    """A validated safetensors header: where each tensor lies in the data file and its CRC32."""

    path: str
    size: int
    save_id: str
    tensors: dict[str, TensorEntry]


def read_data_header(f, path: str) -> DataHeader:
    """The header of the open data file `f`, every field checked against the file's size."""
    size = os.fstat(f.fileno()).st_size
    f.seek(0)
    if size < 8:
        raise _truncated(path, size, 8)
    (header_bytes,) = struct.unpack("<Q", f.read(8))
    if header_bytes > _MAX_HEADER_BYTES:
        raise _corrupt(path, f"a header of {header_bytes} bytes")
    if 8 + header_bytes > size:
        raise _truncated(path, size, 8 + header_bytes)
    header = _json(f.read(header_bytes), path)
    if type(header) is not dict:
        raise _corrupt(path, "the header is not a JSON object")
    save_id, checksums = _data_metadata(header.pop("__metadata__", None), path)
    start = 8 + header_bytes
    entries = {name: _header_entry(name, entry, start, checksums, path) for name, entry in header.items()}
    if set(checksums) != set(entries):
        raise _corrupt(path, "the checksums do not name the tensors the header lists")
    _check_disjoint(entries, path)
    end = max((e.end for e in entries.values()), default=start)
    if end > size:
        raise _truncated(path, size, end)
    if end < size:
        raise _corrupt(path, f"{size - end} bytes follow the last tensor")
    return DataHeader(path, size, save_id, entries)


def _data_metadata(metadata, path: str) -> tuple[str, dict]:
    if type(metadata) is not dict or metadata.get("format") != FORMAT:
        raise _corrupt(path, f"not a {FORMAT} data file")
    save_id, checksums = metadata.get("save_id"), metadata.get("crc32")
    if not (isinstance(save_id, str) and _SAVE_ID.fullmatch(save_id)) or not isinstance(checksums, str):
        raise _corrupt(path, "its metadata lacks a save id or checksums")
    checksums = _json(checksums, path)
    if type(checksums) is not dict:
        raise _corrupt(path, "its checksums are not a JSON object")
    return save_id, checksums


def _header_entry(name: str, entry, start: int, checksums: dict, path: str) -> TensorEntry:
    if type(entry) is not dict or set(entry) != _HEADER_ENTRY_FIELDS:
        raise _corrupt(path, f"tensor '{name:.80}': a header entry needs exactly {sorted(_HEADER_ENTRY_FIELDS)}")
    code, offsets = entry["dtype"], entry["data_offsets"]
    if not isinstance(code, str) or code not in _SAFETENSORS_DTYPES:
        raise _corrupt(path, f"tensor '{name:.80}': {code!r:.40} is not a dtype a checkpoint holds")
    if type(offsets) is not list or len(offsets) != 2 or not all(_is_int(o) for o in offsets):
        raise _corrupt(path, f"tensor '{name:.80}': data_offsets must be [begin, end]")
    return _checked_entry(name, _SAFETENSORS_DTYPES[code], entry["shape"], start + offsets[0], start + offsets[1],
                          checksums.get(name), path)


# -- a checkpoint opened for reading --------------------------------------------------------------------


@dataclass(frozen=True)
class CheckpointFiles:
    """A checkpoint whose index and data header are validated and agree: the tensors it holds, readable one by one."""

    prefix: str
    global_step: int | None
    tensors: dict[str, TensorEntry]

    def read(self, names) -> dict[str, np.ndarray]:
        """The tensors `names`, each read from the data file and checked against its CRC32."""
        path = self.prefix + DATA
        with open(path, "rb") as f:
            header = read_data_header(f, path)
            _check_agree(self.tensors, header.tensors, header.path, same_save=True)
            return {name: _read_tensor(f, header.tensors[name], path) for name in names}


def open_checkpoint(prefix: str) -> CheckpointFiles:
    """The checkpoint at `prefix` once its index and its data file's header are checked against each other."""
    index = read_index(prefix)
    path = prefix + DATA
    with open(path, "rb") as f:
        header = read_data_header(f, path)
    if header.size < index.data_bytes:
        raise _truncated(path, header.size, index.data_bytes)
    if header.size != index.data_bytes:
        raise _corrupt(path, f"{header.size} bytes where its index {index.path} records {index.data_bytes}")
    _check_agree(index.tensors, header.tensors, index.path, same_save=index.save_id == header.save_id)
    # The data's own table decides: it is the one its checksums were taken with.
    return CheckpointFiles(prefix, index.global_step, header.tensors)


def _check_agree(index: dict[str, TensorEntry], header: dict[str, TensorEntry], path: str, same_save: bool) -> None:
    """DataLossError naming the first tensor where the index and the data file's header disagree."""
    for name in sorted(set(index) ^ set(header)):
        where = "the index" if name in index else "the data file"
        raise _corrupt(path, f"tensor '{name:.80}' is only in {where}")
    for name, entry in index.items():
        other = header[name]
        if entry.layout() != other.layout() or same_save and entry.crc32 != other.crc32:
            raise _corrupt(path, f"tensor '{name}': the index records {entry}, the data file {other}")


def _read_tensor(f, entry: TensorEntry, path: str) -> np.ndarray:
    stored = np.empty(entry.shape, entry.dtype.np_dtype.newbyteorder("<"))
    f.seek(entry.begin)
    count = f.readinto(_bytes_of(stored))
    if count != stored.nbytes:
        raise _truncated(path, entry.begin + count, entry.end)
    found = zlib.crc32(_bytes_of(stored))
    if found != entry.crc32:
        raise DataLossError(None, None, f"Checkpoint file {path} is corrupt: tensor '{entry.name}': checksum does "
                            f"not match: stored {entry.crc32} vs. calculated on the restored bytes {found}")
    return stored.astype(entry.dtype.np_dtype, copy=False)


def index_record(header: DataHeader, global_step: int | None, version: str) -> dict:
    """The `.index.json` contents for a data file just written, from its (validated) header."""
    tensors = {name: {"dtype": e.dtype.name, "shape": list(e.shape), "offsets": [e.begin, e.end], "crc32": e.crc32}
               for name, e in header.tensors.items()}
    return {"format": FORMAT, "tfnb_version": version, "global_step": global_step, "save_id": header.save_id,
            "data_bytes": header.size, "tensors": tensors}
