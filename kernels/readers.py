"""Reader kernels: records read from files where the data is needed (paper section 4.5).

A reader is a resource, as a queue is: it takes file names from a queue of work and produces
records, keeping its place across steps: the lines of text files (TextLineReaderV2) or the rows
of the arrays in .npy/.npz shards (NpyReaderV2; np.load refuses pickled object arrays). A line
remembers its file and line number, so DecodeCSV names them when the line is malformed.
Also here: the two small ops of input pipelines, epoch counting and shuffling.
"""

from __future__ import annotations

import csv
import threading
import zipfile

import numpy as np

from tfnb.framework.errors import InvalidArgumentError, NotFoundError, OutOfRangeError
from tfnb.kernels.queues import Queue, deadline_of, resource_handle
from tfnb.kernels.registry import kernel
from tfnb.kernels.state import _freezer, _uninitialized, variable_lock


def _fail(message: str):
    raise InvalidArgumentError(None, None, message)


class Line(bytes):
    """A line of a text file that remembers where it came from (`where`: 'file:line')."""

    def __new__(cls, data: bytes, where: str) -> Line:
        line = super().__new__(cls, data)
        line.where = where
        return line


# -- readers ----------------------------------------------------------------------------------------


class Reader:
    """Reads records from the files that a queue of work names, one file after another."""

    def __init__(self, name: str, definition: str) -> None:
        self.name = name
        self.definition = definition
        self.records_produced = 0
        self.work_units_completed = 0
        self._lock = threading.Lock()
        self._work: str | None = None

    def read_up_to(self, queue: Queue, count: int, deadline: float | None) -> list[tuple]:
        """Pieces (keys, records) of up to `count` records in all, fewer only once the queue of work is closed."""
        pieces, total = [], 0
        with self._lock:
            while total < count:
                if self._work is None:
                    try:
                        filename = _next_filename(queue, deadline)
                    except OutOfRangeError:
                        if pieces:
                            break
                        raise
                    self._start(filename)
                    self._work = filename
                piece = self._read(count - total)
                if piece is None:
                    self._work = None
                    self.work_units_completed += 1
                    continue
                pieces.append(piece)
                total += len(piece[0])
            self.records_produced += total
        return pieces

    def reset(self) -> None:
        """Forgets the file being read and the counts."""
        with self._lock:
            self._work = None
            self.records_produced = self.work_units_completed = 0
            self._start(None)

    def _start(self, filename: str | None) -> None:
        raise NotImplementedError

    def _read(self, count: int) -> tuple | None:
        raise NotImplementedError


def _next_filename(queue: Queue, deadline: float | None) -> str:
    if queue.dtypes != (np.dtype(object),):
        _fail(f"A reader's queue of work must hold file names (one string component), but '{queue.name}' holds "
              f"{[str(d) for d in queue.dtypes]}")
    name = queue.dequeue(1, deadline)[0][0]
    return name.decode() if isinstance(name, bytes) else str(name)


def _not_found(filename: str) -> NotFoundError:
    return NotFoundError(None, None, f"{filename}; No such file or directory")


class TextLineReader(Reader):
    """Records are the lines of text files, without their line ending; keys are 'file:line'."""

    def __init__(self, name: str, definition: str, skip_header_lines: int) -> None:
        super().__init__(name, definition)
        self._skip = skip_header_lines
        self._file = None
        self._line = 0

    def _start(self, filename: str | None) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if filename is None:
            return
        try:
            self._file = open(filename, "rb")  # noqa: SIM115 (kept open across steps, closed at the end)
        except FileNotFoundError:
            raise _not_found(filename) from None
        except OSError as error:
            _fail(f"{filename}: {error.strerror}")
        self._line = 0
        while self._line < self._skip and self._file.readline():
            self._line += 1

    def _read(self, count: int) -> tuple | None:
        keys, lines = [], []
        readline, work = self._file.readline, self._work
        for _ in range(count):
            data = readline()
            if not data:
                break
            self._line += 1
            where = f"{work}:{self._line}"
            keys.append(where.encode())
            lines.append(Line(_without_line_end(data), where))
        if not keys:
            self._start(None)
            return None
        return keys, lines


def _without_line_end(data: bytes) -> bytes:
    if data.endswith(b"\n"):
        data = data[:-1]
    return data[:-1] if data.endswith(b"\r") else data


def load_shard(path: str):
    """The arrays of a .npy shard (an array, memory-mapped) or a .npz shard (a dict by name); never unpickles."""
    try:
        loaded = np.load(path, mmap_mode="r")  # NumPy's default allow_pickle is False: object arrays are refused
        if isinstance(loaded, np.lib.npyio.NpzFile):
            with loaded:
                return {name: loaded[name] for name in loaded.files}
        return loaded
    except FileNotFoundError:
        raise _not_found(path) from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
        raise InvalidArgumentError(None, None, f"{path} is not a readable .npy or .npz file: {error}") from None


def shard_arrays(path: str, names: tuple, dtypes: tuple, shapes: tuple) -> list:
    """The shard's arrays in the order of `names` (() for a .npy shard), checked against dtypes and row shapes."""
    arrays = load_shard(path)
    if not names:
        if isinstance(arrays, dict):
            _fail(f"{path} is an .npz archive, but this reader reads .npy shards")
        arrays = {"": arrays}
    elif not isinstance(arrays, dict):
        _fail(f"{path} is an .npy file, but this reader reads .npz shards with arrays {list(names)}")
    elif sorted(arrays) != sorted(names):
        _fail(f"{path} holds arrays {sorted(arrays)}, but this reader reads {sorted(names)}")
    ordered = []
    for name, dtype, shape in zip(names or ("",), dtypes, shapes):
        array, label = arrays[name], f"array '{name}' in {path}" if name else path
        if array.ndim == 0:
            _fail(f"{label} is a scalar; a shard holds rows (an array of rank 1 or more)")
        if array.dtype != dtype:
            _fail(f"{label} has dtype {array.dtype}, but this reader reads {np.dtype(dtype)}")
        if array.shape[1:] != shape:
            _fail(f"{label} has rows of shape {list(array.shape[1:])}, but this reader reads rows of shape "
                  f"{list(shape)}")
        ordered.append(array)
    if len({len(a) for a in ordered}) > 1:
        counts = ", ".join(f"'{n}': {len(a)}" for n, a in zip(names, ordered))
        _fail(f"The arrays in {path} have different numbers of rows ({counts})")
    return ordered


class NpyReader(Reader):
    """Records are the rows of the arrays in .npy or .npz shards; keys are 'file:row'."""

    def __init__(self, name: str, definition: str, names: tuple, dtypes: tuple, shapes: tuple) -> None:
        super().__init__(name, definition)
        self._signature = (names, dtypes, shapes)
        self._arrays: list = []
        self._row = 0

    def _start(self, filename: str | None) -> None:
        self._arrays = [] if filename is None else shard_arrays(filename, *self._signature)
        self._row = 0

    def _read(self, count: int) -> tuple | None:
        start = self._row
        stop = min(len(self._arrays[0]), start + count)
        if stop <= start:
            self._start(None)
            return None
        self._row = stop
        keys = [f"{self._work}:{row}".encode() for row in range(start, stop)]
        return keys, tuple(np.array(a[start:stop]) for a in self._arrays)


# -- reader kernels -----------------------------------------------------------------------------------


@kernel("TextLineReaderV2")
def text_line_reader(node):
    skip = node.attrs["skip_header_lines"]
    definition = f"TextLineReaderV2(skip_header_lines={skip})"
    return resource_handle(node, Reader, definition, lambda name: TextLineReader(name, definition, skip))


@kernel("NpyReaderV2")
def npy_reader(node):
    attrs = node.attrs
    names = tuple(attrs["names"])
    dtypes = tuple(d.np_dtype for d in attrs["component_types"])
    shapes = tuple(s.as_tuple() for s in attrs["shapes"])
    definition = f"NpyReaderV2(names={list(names)}, dtypes={[str(d) for d in dtypes]}, shapes={list(shapes)})"
    return resource_handle(node, Reader, definition, lambda name: NpyReader(name, definition, names, dtypes, shapes))


def _strings(values: list) -> np.ndarray:
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


def _string_reader(reader) -> Reader:
    if not isinstance(reader, TextLineReader):
        _fail(f"Reader '{reader.name}' does not produce string records; use its own read op")
    return reader


@kernel("ReaderReadV2", needs_step=True, fresh_output=True)
def reader_read(node):
    def run(step, reader, queue):
        keys, records = _string_reader(reader).read_up_to(queue, 1, deadline_of(step))[0]
        return _strings(keys).reshape(()), _strings(records).reshape(())
    return run


@kernel("ReaderReadUpToV2", needs_step=True, fresh_output=True)
def reader_read_up_to(node):
    def run(step, reader, queue, num_records):
        pieces = _string_reader(reader).read_up_to(queue, _positive(num_records), deadline_of(step))
        return (_strings([k for keys, _ in pieces for k in keys]),
                _strings([r for _, records in pieces for r in records]))
    return run


def _positive(num_records) -> int:
    count = int(num_records)
    if count <= 0:
        _fail(f"num_records must be positive, got {count}")
    return count


@kernel("NpyReaderReadUpTo", needs_step=True, fresh_output=True)
def npy_reader_read_up_to(node):
    def run(step, reader, queue, num_records):
        if not isinstance(reader, NpyReader):
            _fail(f"Reader '{reader.name}' is not an NpyReader")
        pieces = reader.read_up_to(queue, _positive(num_records), deadline_of(step))
        keys = _strings([k for piece in pieces for k in piece[0]])
        columns = zip(*(piece[1] for piece in pieces))
        return (keys, *(parts[0] if len(parts) == 1 else np.concatenate(parts) for parts in columns))
    return run


@kernel("ReaderNumRecordsProducedV2", fresh_output=True)
def reader_num_records_produced(node):
    return lambda reader: np.array(reader.records_produced, np.int64)


@kernel("ReaderNumWorkUnitsCompletedV2", fresh_output=True)
def reader_num_work_units_completed(node):
    return lambda reader: np.array(reader.work_units_completed, np.int64)


@kernel("ReaderResetV2")
def reader_reset(node):
    return lambda reader: reader.reset()


# -- DecodeCSV --------------------------------------------------------------------------------------


def _parser(dtype: np.dtype):
    """A function turning a field (str) into a value of `dtype`; ValueError if it cannot."""
    if dtype == object:
        return lambda field: field.encode()
    if dtype.kind == "f":
        return float
    info = np.iinfo(dtype)

    def parse_int(field: str) -> int:
        value = int(field)
        if not info.min <= value <= info.max:
            raise ValueError(field)
        return value
    return parse_int


def _where(record) -> str:
    where = getattr(record, "where", None)
    return f" (line {where})" if where else ""


@kernel("DecodeCSV", fresh_output=True)
def decode_csv(node):
    attrs = node.attrs
    out_types = node.output_dtypes
    parsers = [_parser(np.dtype(d)) for d in out_types]
    type_names = [{"float32": "float", "float64": "double"}.get(d.name, d.name) for d in attrs["OUT_TYPE"]]
    select = tuple(attrs["select_cols"])
    na_value = attrs["na_value"]
    dialect = {"delimiter": attrs["field_delim"], "strict": True,
               "quoting": csv.QUOTE_MINIMAL if attrs["use_quote_delim"] else csv.QUOTE_NONE}
    width = len(out_types)

    def fields_of(record, index: int) -> list[str]:
        text = record.decode("utf-8", "surrogateescape") if isinstance(record, bytes) else str(record)
        try:
            fields = next(csv.reader([text], **dialect), [""]) if text else [""]
        except csv.Error as error:
            _fail(f"Cannot parse record {index}: {error}{_where(record)}")
        if select:
            if len(fields) <= select[-1]:
                _fail(f"Expect {select[-1] + 1} fields but have {len(fields)} in record {index}{_where(record)}")
            fields = [fields[i] for i in select]
        if len(fields) != width:
            _fail(f"Expect {width} fields but have {len(fields)} in record {index}{_where(record)}")
        return fields

    def run(records, *defaults):
        defaults = [d.reshape(-1) for d in defaults]
        for column, default in enumerate(defaults):
            if default.size > 1:
                _fail(f"Record default {column} must have at most one element, got {default.size}")
        columns = [[] for _ in range(width)]
        for index, record in enumerate(records.reshape(-1)):
            for column, field in enumerate(fields_of(record, index)):
                if field == "" or field == na_value:
                    if not defaults[column].size:
                        _fail(f"Field {column} is required but missing in record {index}!{_where(record)}")
                    columns[column].append(defaults[column][0])
                    continue
                try:
                    columns[column].append(parsers[column](field))
                except ValueError:
                    _fail(f"Field {column} in record {index} is not a valid {type_names[column]}: "
                          f"{field}{_where(record)}")
        return tuple(_column(values, dtype, records.shape) for values, dtype in zip(columns, out_types))

    return run


def _column(values: list, dtype, shape: tuple) -> np.ndarray:
    if dtype == object:
        return _strings(values).reshape(shape)
    return np.array(values, dtype=dtype).reshape(shape)


# -- input-pipeline ops -----------------------------------------------------------------------------


@kernel("ResourceCountUpTo")
def resource_count_up_to(node):
    limit, xp, dtype, freeze = node.attrs["limit"], node.xp, node.output_dtypes[0], _freezer(node)

    def run(handle):
        with variable_lock(handle):
            old = handle.values.get(handle.name)
            if old is None:
                raise _uninitialized(handle)
            if old >= limit:
                raise OutOfRangeError(None, None, f"Reached limit of {limit}")
            handle.values[handle.name] = freeze(xp.asarray(old + 1, dtype=dtype))
            return old
    return run


@kernel("RandomShuffle")
def random_shuffle(node):
    seeds = (node.attrs["seed"], node.attrs["seed2"])
    rng, xp = np.random.default_rng(list(seeds) if any(seeds) else None), node.xp

    def run(value):
        if value.ndim == 0:
            return value
        return value[xp.asarray(rng.permutation(len(value)))]
    return run


# -- whole files ----------------------------------------------------------------------------------------


def _path(filename) -> str:
    name = filename.item() if hasattr(filename, "item") else filename
    return name.decode() if isinstance(name, bytes) else str(name)


@kernel("ReadFile")
def read_file(node):
    def run(filename):
        path = _path(filename)
        try:
            with open(path, "rb") as file:
                return np.array(file.read(), dtype=object)
        except FileNotFoundError:
            raise NotFoundError(None, None, f"{path}; No such file or directory") from None
    return run


@kernel("WriteFile")
def write_file(node):
    def run(filename, contents):
        with open(_path(filename), "wb") as file:
            file.write(bytes(contents.item() if hasattr(contents, "item") else contents))
    return run
