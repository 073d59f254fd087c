"""Checkpoints: Saver writing safetensors plus a JSON index, atomically, a CRC32 per tensor.

A checkpoint is a path prefix ("train/model.ckpt-1000") naming up to three files:

    <prefix>.safetensors   the variables' values, by variable name, with a checksum each
    <prefix>.index.json    their names, dtypes, shapes, byte ranges and checksums, the global step
    <prefix>.meta.json     the graph in tfnb's JSON graph format (when write_meta_graph)

(tfnb/io/checkpoint_format.py says what each holds and how a reader checks it) and the directory's
`checkpoint` file (JSON, TF's CheckpointState fields) names the latest ones. Each file is written under
a temporary name, flushed to disk and renamed over its final name, the state file last, so a process
killed in the middle of a save leaves the previous checkpoint whole; the next save removes what such a
process left behind. A restore validates the index and every value it reads before it assigns any
variable. Nothing here unpickles: everything is read as raw bytes or JSON.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import numbers
import os
import re
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
import safetensors.numpy

from tfnb.framework import dtypes
from tfnb.framework.errors import InvalidArgumentError, NotFoundError
from tfnb.framework.graph import get_default_graph
from tfnb.framework.tensor import Tensor
from tfnb.io.checkpoint_format import (
    DATA,
    INDEX,
    STORABLE,
    CheckpointFiles,
    TensorEntry,
    checksum,
    data_metadata,
    index_record,
    open_checkpoint,
    read_data_header,
)
from tfnb.ops.array_ops import placeholder
from tfnb.ops.control_flow.dependencies import group
from tfnb.ops.state_ops import assign_variable_op, read_variable_op
from tfnb.ops.variables import Variable, global_variables

__all__ = ["Saver", "checkpoint_exists", "get_checkpoint_state", "latest_checkpoint", "list_variables",
           "load_variable"]


# -- the state file ---------------------------------------------------------------------------------


@dataclass
class CheckpointState:
    """The contents of a directory's `checkpoint` file: the newest checkpoint and those still kept."""

    model_checkpoint_path: str
    all_model_checkpoint_paths: list[str] = field(default_factory=list)
    all_model_checkpoint_timestamps: list[float] = field(default_factory=list)
    last_preserved_timestamp: float = 0.0
    # tfnb's addition to TF's fields: those keep_checkpoint_every_n_hours keeps, which no save deletes.
    preserved_model_checkpoint_paths: list[str] = field(default_factory=list)


def get_checkpoint_state(checkpoint_dir: str, latest_filename: str | None = None) -> CheckpointState | None:
    """The CheckpointState in `checkpoint_dir`'s `checkpoint` file, or None if there is none (or it is unreadable)."""
    path = os.path.join(checkpoint_dir, latest_filename or "checkpoint")
    try:
        with open(path, encoding="utf-8") as f:
            state = CheckpointState(**json.load(f))
    except FileNotFoundError:
        return None
    except (ValueError, TypeError) as e:
        warnings.warn(f"{path}: checkpoint state ignored, it is not a tfnb checkpoint state file ({e})", stacklevel=2)
        return None
    if not state.model_checkpoint_path:
        raise ValueError(f"Invalid checkpoint state loaded from {checkpoint_dir}")
    state.model_checkpoint_path = os.path.join(checkpoint_dir, state.model_checkpoint_path)
    state.all_model_checkpoint_paths = [os.path.join(checkpoint_dir, p) for p in state.all_model_checkpoint_paths]
    state.preserved_model_checkpoint_paths = [os.path.join(checkpoint_dir, p)
                                              for p in state.preserved_model_checkpoint_paths]
    return state


def latest_checkpoint(checkpoint_dir: str, latest_filename: str | None = None) -> str | None:
    """The prefix of the newest checkpoint in `checkpoint_dir`, or None if there is none."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None or not checkpoint_exists(state.model_checkpoint_path):
        return None
    return state.model_checkpoint_path


def checkpoint_exists(checkpoint_prefix: str) -> bool:
    """Whether a checkpoint's values and index are on disk under `checkpoint_prefix`."""
    return os.path.isfile(checkpoint_prefix + DATA) and os.path.isfile(checkpoint_prefix + INDEX)


def _write_state(directory: str, latest_filename: str, state: CheckpointState, relative: bool) -> None:
    def stored(path: str) -> str:
        return os.path.relpath(path, directory) if relative else os.path.abspath(path)
    record = asdict(state)
    record["model_checkpoint_path"] = stored(state.model_checkpoint_path)
    record["all_model_checkpoint_paths"] = [stored(p) for p in state.all_model_checkpoint_paths]
    record["preserved_model_checkpoint_paths"] = [stored(p) for p in state.preserved_model_checkpoint_paths]
    _write_text(os.path.join(directory, latest_filename), json.dumps(record, indent=2))


# -- reading a checkpoint ---------------------------------------------------------------------------


def _resolve(ckpt_dir_or_file: str) -> str:
    if not os.path.isdir(ckpt_dir_or_file):
        return ckpt_dir_or_file
    prefix = latest_checkpoint(ckpt_dir_or_file)
    if prefix is None:
        raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory {ckpt_dir_or_file}")
    return prefix


def _opened(prefix: str) -> CheckpointFiles:
    """The checkpoint at `prefix`, validated (NotFoundError, as TF, when its files are missing)."""
    try:
        return open_checkpoint(prefix)
    except FileNotFoundError:
        raise NotFoundError(None, None, f"Unsuccessful TensorSliceReader constructor: Failed to find any matching "
                            f"files for {prefix}") from None


def list_variables(ckpt_dir_or_file: str) -> list[tuple[str, list[int]]]:
    """(name, shape) of every variable in a checkpoint (a prefix, or a directory's latest), sorted by name.

    The index and the data file's header are validated against each other; the values are not read.
    """
    tensors = _opened(_resolve(ckpt_dir_or_file)).tensors
    return [(name, list(tensors[name].shape)) for name in sorted(tensors)]


def load_variable(ckpt_dir_or_file: str, name: str) -> np.ndarray:
    """The value of one variable in a checkpoint (a prefix, or a directory's latest), its checksum verified."""
    prefix = _resolve(ckpt_dir_or_file)
    name = name.removesuffix(":0")
    files = _opened(prefix)
    if name not in files.tensors:
        raise NotFoundError(None, None, f"Key {name} not found in checkpoint {prefix}")
    return files.read([name])[name]


# -- writing files atomically -----------------------------------------------------------------------


def _write_atomic(path: str, write: Callable[[str], None]) -> None:
    """Runs `write(temporary_path)`, flushes the file to disk, then renames it to `path` in one step."""
    directory, base = os.path.split(os.path.abspath(path))
    # The writer's process id in the name lets a later save tell a crashed writer's file from a live one's.
    fd, temporary = tempfile.mkstemp(prefix=f".{base}.{os.getpid()}.", suffix=_TEMPORARY, dir=directory)
    os.close(fd)
    try:
        write(temporary)
        fd = os.open(temporary, os.O_RDWR)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        _remove(temporary)
        raise


def _write_text(path: str, text: str) -> None:
    def write(temporary: str) -> None:
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(text)
    _write_atomic(path, write)


def _sync_directory(directory: str) -> None:
    """Makes the renames in `directory` durable (a no-op where directories cannot be opened)."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


_TEMPORARY = ".tmp"
_TEMPORARY_NAME = re.compile(r"\.(?P<base>.+)\.(?P<pid>[0-9]+)\.[A-Za-z0-9_]+\.tmp")


def _remove_crashed_writes(directory: str, bases: tuple[str, ...]) -> None:
    """Removes temporary files of `bases` in `directory` that processes no longer running left behind."""
    if os.name != "posix":  # where no process can be asked whether it runs, leave them
        return
    for entry in os.listdir(directory):
        match = _TEMPORARY_NAME.fullmatch(entry)
        if match and match["base"].startswith(bases) and not _running(int(match["pid"])):
            _remove(os.path.join(directory, entry))


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True  # another thread of this process may be saving
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, under another user
    return True


@functools.cache
def _tfnb_version() -> str:
    return importlib.metadata.version("tfnb")


# -- the Saver --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    """One saved variable: its checkpoint name, dtype and shape, the read that save fetches, the feed and assign that
    restore runs."""

    name: str
    dtype: dtypes.DType
    shape: object
    read: object
    feed: object
    assign: object


def _named_variables(var_list) -> dict[str, Variable | Tensor]:
    if var_list is None:
        var_list = global_variables()
    if isinstance(var_list, dict):
        named = dict(var_list)
    else:
        named = {}
        for v in var_list:
            if not isinstance(v, Variable):
                raise TypeError(f"Variable to save is not a Variable: {v!r}")
            if v.op.name in named:
                raise ValueError(f"At least two variables have the same name: {v.op.name}")
            named[v.op.name] = v
    for name, v in named.items():
        if not isinstance(v, Variable) and not _is_handle(v):
            raise TypeError(f"Variable to save is not a Variable: {name}: {v!r}")
        dtype = v.dtype if isinstance(v, Variable) else v.op.attrs["dtype"]
        if dtype not in STORABLE:
            raise TypeError(f"Saver cannot store variable '{name}' of dtype {dtype.name}: safetensors checkpoints "
                            f"hold bool, integer and float tensors only")
    return dict(sorted(named.items()))


def _is_handle(value) -> bool:
    """Whether `value` is a variable's resource handle (a VarHandleOp's output), as an imported graph holds them."""
    return isinstance(value, Tensor) and value.op.type == "VarHandleOp"


def _shape_text(dims) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


class Saver:
    """Saves variables to checkpoints and restores them (tf.train.Saver).

    tfnb writes safetensors plus JSON (see the module docstring), not TF's format; string and complex
    variables cannot be saved; the state file holds absolute paths unless save_relative_paths (TF's holds
    them as given); `sharded`, `restore_sequentially`, `write_version` and `filename` are ignored. Unlike
    TF, a Saver's first save counts the checkpoints of its save path that the directory's state file lists
    (as recover_last_checkpoints does), and a save that writes the state file deletes checkpoints of its
    save path that no state file lists (left by a process killed while saving), so that no more than
    max_to_keep (and those keep_checkpoint_every_n_hours keeps) stay on disk.
    """

    def __init__(self, var_list=None, reshape: bool = False, sharded: bool = False, max_to_keep: int | None = 5,
                 keep_checkpoint_every_n_hours: float = 10000.0, name: str | None = None,
                 restore_sequentially: bool = False, saver_def=None, builder=None, defer_build: bool = False,
                 allow_empty: bool = False, write_version: int = 2, pad_step_number: bool = False,
                 save_relative_paths: bool = False, filename: str | None = None) -> None:
        if saver_def is not None or builder is not None:
            raise NotImplementedError("tfnb's Saver builds its own ops: saver_def and builder are not supported")
        self._var_list = var_list
        self._reshape = reshape
        self._max_to_keep = max_to_keep
        self._keep_every_s = keep_checkpoint_every_n_hours * 3600
        self._next_keep_time = time.time() + self._keep_every_s
        self._last_preserved_time = 0.0
        self._preserved: list[str] = []
        self._name = name
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._last_checkpoints: list[tuple[str, float]] = []
        self._history_known = False
        self._entries: list[_Entry] | None = None
        self._meta_json: tuple[int, str] | None = None
        if not defer_build:
            self.build()

    def build(self) -> None:
        """Builds the ops that read and assign the variables (the constructor does, unless defer_build)."""
        if self._entries is not None:
            return
        named = _named_variables(self._var_list)
        if not named and not self._allow_empty:
            raise ValueError("No variables to save")
        self._graph = next(iter(named.values())).graph if named else get_default_graph()
        with self._graph.as_default(), self._graph.name_scope(self._name or "save"):
            self._entries = [self._entry(name, v) for name, v in named.items()]
            self._restore_op = group(*[e.assign for e in self._entries], name="restore_all")

    @staticmethod
    def _entry(name: str, v: Variable | Tensor) -> _Entry:
        if isinstance(v, Variable):
            feed = placeholder(v.dtype, v.shape)
            return _Entry(name, v.dtype, v.shape, v.value(), feed, v.assign(feed, read_value=False))
        dtype, shape = v.op.attrs["dtype"], v.op.attrs["shape"]
        feed = placeholder(dtype, shape)
        return _Entry(name, dtype, shape, read_variable_op(v, dtype), feed, assign_variable_op(v, feed).op)

    def _built_entries(self, action: str) -> list[_Entry]:
        if self._entries is None:
            raise RuntimeError(f"`build()` should be called before {action} if defer_build==True")
        return self._entries

    @property
    def last_checkpoints(self) -> list[str]:
        """The prefixes this Saver still keeps, oldest first (those max_to_keep has not deleted)."""
        return [path for path, _ in self._last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time: list[tuple[str, float]]) -> None:
        """Sets the kept checkpoints as (prefix, timestamp) pairs, oldest first."""
        self._last_checkpoints = list(last_checkpoints_with_time)
        self._history_known = True

    def recover_last_checkpoints(self, checkpoint_paths: list[str]) -> None:
        """Adopts the existing ones of `checkpoint_paths` (from a state file), so max_to_keep counts them."""
        found = [p for p in checkpoint_paths if checkpoint_exists(p)]
        self.set_last_checkpoints_with_time([(p, os.path.getmtime(p + INDEX)) for p in found])

    # -- save -------------------------------------------------------------------------------------

    def save(self, sess, save_path: str, global_step=None, latest_filename: str | None = None,
             meta_graph_suffix: str = "meta", write_meta_graph: bool = True, write_state: bool = True) -> str | None:
        """Writes the variables' values to `save_path` (suffixed '-<global_step>'); returns that prefix."""
        entries = self._built_entries("save")
        if not entries:
            return None
        step = self._step(sess, global_step)
        prefix = self._prefix(save_path, step)
        directory = _directory_for(save_path)
        latest_filename = latest_filename or "checkpoint"
        _remove_crashed_writes(directory, (os.path.basename(save_path), latest_filename))
        values = sess.run([e.read for e in entries])
        # safetensors writes an array's memory as it lies, so a transposed view must be laid out in order first.
        arrays = {e.name: np.asarray(value, order="C") for e, value in zip(entries, values)}
        metadata = data_metadata(uuid.uuid4().hex, {name: checksum(a) for name, a in arrays.items()})
        _write_atomic(prefix + DATA, lambda path: safetensors.numpy.save_file(arrays, path, metadata=metadata))
        with open(prefix + DATA, "rb") as f:
            header = read_data_header(f, prefix + DATA)  # where safetensors put each tensor, checked once written
        _write_text(prefix + INDEX, json.dumps(index_record(header, step, _tfnb_version()), indent=1))
        if write_meta_graph:
            _write_text(f"{prefix}.{meta_graph_suffix}.json", self._graph_json())
        _sync_directory(directory)
        if write_state:
            self._update_state(prefix, save_path, directory, latest_filename, meta_graph_suffix)
        return prefix

    @staticmethod
    def _step(sess, global_step) -> int | None:
        if global_step is None:
            return None
        if isinstance(global_step, numbers.Integral):
            return int(global_step)
        return int(sess.run(global_step))

    def _prefix(self, save_path: str, step: int | None) -> str:
        if step is None:
            return save_path
        return f"{save_path}-{step:08d}" if self._pad_step_number else f"{save_path}-{step}"

    def _graph_json(self) -> str:
        """The graph's JSON, rebuilt only when the graph has grown since the last save."""
        version = self._graph.version
        if self._meta_json is None or self._meta_json[0] != version:
            self._meta_json = (version, self._graph.as_graph_def().to_json())
        return self._meta_json[1]

    def _update_state(self, prefix: str, save_path: str, directory: str, latest_filename: str,
                      meta_graph_suffix: str) -> None:
        if not self._history_known:
            self._adopt_history(save_path, directory, latest_filename)
        dropped = self._record(prefix)
        kept = self._last_checkpoints or [(prefix, time.time())]
        state = CheckpointState(prefix, [p for p, _ in kept], [t for _, t in kept], self._last_preserved_time,
                                list(self._preserved))
        _write_state(directory, latest_filename, state, self._save_relative_paths)
        _sync_directory(directory)
        suffixes = (DATA, INDEX, f".{meta_graph_suffix}.json")
        if self._max_to_keep:
            dropped += _unlisted_checkpoints(save_path, suffixes, {p for p, _ in kept} | set(self._preserved))
        for path in dropped:
            for suffix in suffixes:
                _remove(path + suffix)

    def _adopt_history(self, save_path: str, directory: str, latest_filename: str) -> None:
        """Counts the checkpoints of `save_path` that the state file lists, as if this Saver had written them."""
        self._history_known = True
        state = get_checkpoint_state(directory, latest_filename)
        if state is None:
            return
        ours = re.compile(re.escape(os.path.abspath(save_path)) + r"(-[0-9]+)?")
        listed = state.all_model_checkpoint_paths
        times = state.all_model_checkpoint_timestamps if len(state.all_model_checkpoint_timestamps) == len(listed) \
            else [os.path.getmtime(p + INDEX) if checkpoint_exists(p) else 0.0 for p in listed]
        self._last_checkpoints = [(p, t) for p, t in zip(listed, times)
                                  if ours.fullmatch(os.path.abspath(p)) and checkpoint_exists(p)]
        self._preserved = [p for p in state.preserved_model_checkpoint_paths if ours.fullmatch(os.path.abspath(p))]
        self._last_preserved_time = state.last_preserved_timestamp

    def _record(self, prefix: str) -> list[str]:
        """Adds `prefix` as the newest checkpoint; returns the prefixes to delete (TF's max_to_keep rule)."""
        if not self._max_to_keep:
            return []
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != prefix]
        self._last_checkpoints.append((prefix, time.time()))
        if len(self._last_checkpoints) <= self._max_to_keep:
            return []
        oldest, saved_at = self._last_checkpoints.pop(0)
        # One checkpoint per keep_checkpoint_every_n_hours survives max_to_keep, never to be deleted.
        if saved_at > self._next_keep_time:
            self._next_keep_time += self._keep_every_s
            self._last_preserved_time = saved_at
            self._preserved.append(oldest)
            return []
        return [oldest]

    # -- restore ----------------------------------------------------------------------------------

    def restore(self, sess, save_path: str) -> None:
        """Assigns every variable its value in the checkpoint `save_path`, once the checkpoint's index, every value
        read (by its checksum) and the variables' names, shapes and dtypes check out; on any error no variable
        changes."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        entries = self._built_entries("restore")
        if not checkpoint_exists(save_path):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {save_path}")
        if not entries:
            return
        files = _opened(save_path)
        self._check_fit(files.tensors, save_path)
        arrays = files.read([e.name for e in self._entries])
        sess.run(self._restore_op, {e.feed: self._fitted(e, arrays[e.name]) for e in self._entries})

    def _check_fit(self, stored: dict[str, TensorEntry], save_path: str) -> None:
        """NotFoundError for variables the checkpoint lacks, InvalidArgumentError naming every dtype or shape misfit."""
        missing = [e.name for e in self._entries if e.name not in stored]
        if missing:
            raise NotFoundError(None, None, f"Variables not found in checkpoint {save_path}: "
                                f"{', '.join(repr(n) for n in missing)} (it holds "
                                f"{', '.join(repr(n) for n in sorted(stored)) or 'nothing'})")
        mismatches = [m for e in self._entries if (m := self._mismatch(e, stored[e.name]))]
        if mismatches:
            raise InvalidArgumentError(None, None, "\n".join(f"{m} in checkpoint {save_path}" for m in mismatches))

    def _mismatch(self, entry: _Entry, stored: TensorEntry) -> str | None:
        if stored.dtype is not entry.dtype:
            return f"Variable '{entry.name}' has dtype {entry.dtype.name} in the graph but {stored.dtype.name}"
        if entry.shape.is_compatible_with(stored.shape):
            return None
        if self._reshape and entry.shape.is_fully_defined() and entry.shape.num_elements() == np.prod(stored.shape):
            return None
        return f"Variable '{entry.name}' has shape {_shape_text(entry.shape.as_list())} in the graph but " \
               f"{_shape_text(stored.shape)}"

    @staticmethod
    def _fitted(entry: _Entry, array: np.ndarray) -> np.ndarray:
        """`array`, reshaped to the variable's shape when they differ (only allowed with reshape=True)."""
        return array if entry.shape.is_compatible_with(array.shape) else array.reshape(entry.shape.as_list())


def _directory_for(save_path: str) -> str:
    """The directory a save writes into; one missing level is created, as TF does."""
    directory = os.path.dirname(os.path.abspath(save_path))
    if not os.path.isdir(directory):
        if not os.path.isdir(os.path.dirname(directory)):
            raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.")
        os.makedirs(directory, exist_ok=True)
    return directory


def _unlisted_checkpoints(save_path: str, suffixes: tuple[str, ...], listed: set[str]) -> list[str]:
    """Prefixes of numbered checkpoints of `save_path` on disk (whole or in part) that `listed` does not name."""
    directory, base = os.path.split(os.path.abspath(save_path))
    numbered = re.compile(re.escape(base) + r"-[0-9]+")
    listed = {os.path.abspath(p) for p in listed}
    found = set()
    for entry in os.listdir(directory):
        for suffix in suffixes:
            if entry.endswith(suffix) and numbered.fullmatch(entry[:-len(suffix)]):
                found.add(os.path.join(directory, entry[:-len(suffix)]))
    return sorted(found - listed)
