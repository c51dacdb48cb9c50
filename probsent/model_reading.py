"""The parts of a model directory read as untrusted input, without torch.

Each part is a regular file read with a bound that follows from what it should hold
(:mod:`probsent.untrusted_files`): ``config.json``, ``calibration.json`` and
``percentiles.json`` at most :data:`MAX_JSON_BYTES`; ``vocab.txt`` at most :data:`MAX_WORD_BYTES` per word of the
config's ``vocab_size``; ``model.safetensors`` exactly its header plus the bytes of the
tensors the config implies. The weights' header is read and checked against the expected
names and shapes before any tensor is read or any table of the model's size is made, so a
config that claims a huge model costs nothing. Both model readers use these
(:mod:`probsent.model_files` with torch, :mod:`probsent.word_terms` with NumPy).
"""
from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any, Callable, Mapping, TypeVar

import numpy as np

from probsent.data.vocab import Vocabulary
from probsent.errors import InvalidValueError, MissingFileError
from probsent.model_paths import CONFIG, FORMAT_NAME, FORMAT_VERSION, MODEL_FILES, VOCAB, WEIGHTS
from probsent.files.untrusted import open_regular_file, read_json_file, read_regular_file
from probsent.version import __version__

__all__ = ["MAX_HEADER_BYTES", "MAX_MODEL_FILE_BYTES", "MAX_JSON_BYTES", "MAX_WORD_BYTES", "files_identity", "read_config", "read_consistently", "read_model_config",
           "read_model_parts", "read_vocabulary", "read_weights", "weights_header"]

MAX_JSON_BYTES = 8 * 2**20  # config.json, calibration.json, percentiles.json
MAX_WORD_BYTES = 1024  # vocab.txt: at most this many bytes per word, on average
MAX_MODEL_FILE_BYTES = 2**34  # any model file read whole (Spark's archive): 16 GiB
MAX_HEADER_BYTES = 2**20  # the safetensors header (JSON: each tensor's dtype, shape, offsets)
T = TypeVar("T")
_DTYPES = {"F16": "<f2", "F32": "<f4", "F64": "<f8", "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
           "U8": "u1", "BOOL": "?"}


def read_config(directory: Path) -> Any:
    """The JSON value of ``config.json`` (a one-line "damaged config" error otherwise)."""
    return read_json_file(directory / CONFIG, MAX_JSON_BYTES, "config")


def read_model_config(directory: Path) -> dict[str, Any]:
    """config.json's value, once the directory is checked to be a complete probsent model of this
    format: MissingFileError (a FileNotFoundError) for it or a part missing, InvalidValueError
    for a config of another kind or version. Every reader starts here."""
    if not directory.is_dir():
        raise MissingFileError(f"{directory}: no such model directory")
    for name in (CONFIG, WEIGHTS, VOCAB):
        if not (directory / name).exists():  # present, of any kind: the reader names a wrong kind
            raise MissingFileError(f"{directory}: not a complete probsent model ({name} is missing)")
    config = read_config(directory)
    if not isinstance(config, dict) or config.get("format") != FORMAT_NAME:
        raise InvalidValueError(f"{directory / CONFIG}: not a probsent model config")
    if config.get("format_version") != FORMAT_VERSION:
        raise InvalidValueError(f"{directory / CONFIG}: model format version {config.get('format_version')} "
                                f"is not supported by probsent {__version__}")
    return config


def read_consistently(directory: Path, read: Callable[[], T]) -> tuple[T, tuple]:
    """``read()`` of the model directory ``directory``, checked to have read one version of its
    files: each model file's identity (inode, size, modification time) is the same before and
    after, so a directory replaced or rewritten meanwhile never gives weights of one model with
    the vocabulary, calibration or percentile table of another: (what it read, the files'
    identity, :func:`files_identity`). Read again if it changed (three tries), then a one-line
    error."""
    for _ in range(3):
        before = files_identity(directory)
        value = read()
        if files_identity(directory) == before:
            return value, before
    raise InvalidValueError(f"{directory}: the model directory kept changing while it was read; try again "
                            f"once it is written")


def files_identity(directory: Path) -> tuple:
    """(name, inode, size, modification time) of each model file there, and the directory's own."""
    found = []
    for name in ("", *MODEL_FILES):
        try:
            status = os.stat(directory / name)
        except OSError:
            found.append((name, None))
            continue
        found.append((name, status.st_ino, status.st_size, status.st_mtime_ns))
    return tuple(found)


def read_model_parts(directory: Path, model: Mapping[str, Any],
                     expected: Mapping[str, tuple[int, ...]]) -> tuple[Vocabulary, dict[str, np.ndarray]]:
    """The vocabulary and the float32 weights of a model directory whose config.json "model"
    section is ``model`` (checked) and whose tensors should have the ``expected`` names and shapes:
    the one check of the files that every reader uses (the NumPy readers, the torch reader).

    The weights' header is checked before anything else is read; the vocabulary must hold
    exactly ``vocab_size`` words; every tensor must be stored as a floating-point type and be
    finite as the model computes, in float32 (a float64 weight beyond float32's range is refused,
    not turned into an infinity)."""
    weights_header(directory, expected, model["type"])  # before the vocabulary or any table is read
    vocab = read_vocabulary(directory, model["vocab_size"])
    if model["vocab_size"] != len(vocab):  # before any table of that size is made
        raise InvalidValueError(f"{directory / VOCAB}: {len(vocab)} words, but {directory / CONFIG} says "
                                f"model.vocab_size {model['vocab_size']!r}")
    weights = {}
    for name, array in read_weights(directory, expected, model["type"]).items():
        if array.dtype.kind != "f":
            raise InvalidValueError(f"{directory / WEIGHTS}: {name} is stored as {array.dtype}, not as floating point")
        with np.errstate(over="ignore"):
            weights[name] = array.astype(np.float32)
        if not np.isfinite(weights[name]).all():
            raise InvalidValueError(f"{directory / WEIGHTS}: {name} contains NaN or infinite values "
                                    f"(in float32, as the model computes)")
    return vocab, weights


def read_vocabulary(directory: Path, size: int) -> Vocabulary:
    """``vocab.txt``, read only as far as ``size`` words may need (the config's vocab_size)."""
    path = directory / VOCAB
    data = read_regular_file(path, max(size, 1) * MAX_WORD_BYTES, "vocabulary")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidValueError(f"{path}: cannot read vocabulary ({exc})") from None
    return Vocabulary.from_text(text, path)


def weights_header(directory: Path, expected: Mapping[str, tuple[int, ...]],
                   model: str = "model") -> tuple[int, dict[str, tuple[str, tuple[int, ...], int, int]]]:
    """Read and check the header of ``model.safetensors`` against the ``expected`` tensor
    names and shapes: (the header's length, name -> (dtype, shape, start, end)). The file's
    size must be exactly the header plus those tensors' bytes."""
    path = directory / WEIGHTS
    sizes = sum(int(np.prod(shape, dtype=np.int64)) for shape in expected.values())
    with open_regular_file(path, 8 + MAX_HEADER_BYTES + 8 * sizes, "weights file") as handle:
        return _checked_header(path, handle.read(8 + MAX_HEADER_BYTES), os.fstat(handle.fileno()).st_size,
                               expected, model)


def _checked_header(path: Path, head: bytes, size: int, expected: Mapping[str, tuple[int, ...]],
                    model: str) -> tuple[int, dict[str, tuple[str, tuple[int, ...], int, int]]]:
    def damaged(reason: str) -> InvalidValueError:
        return InvalidValueError(f"{path}: damaged weights file ({reason})")

    if len(head) < 8:
        raise damaged("too short for a safetensors header")
    (length,) = struct.unpack("<Q", head[:8])
    if length > MAX_HEADER_BYTES or 8 + length > len(head):
        raise damaged(f"a header of {length:,} bytes")
    try:
        header = json.loads(head[8:8 + length].decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise damaged(f"unreadable header: {type(exc).__name__}") from None
    if not isinstance(header, dict):
        raise damaged("the header is not a JSON object")
    header.pop("__metadata__", None)
    if set(header) != set(expected):
        raise InvalidValueError(f"{path}: tensors {sorted(header)} do not match the {model} model of "
                                f"{CONFIG} ({sorted(expected)})")
    tensors, end = {}, 0
    for name, entry in header.items():
        if not isinstance(entry, dict) or entry.get("dtype") not in _DTYPES:
            raise damaged(f"{name}: a dtype of {entry.get('dtype') if isinstance(entry, dict) else entry!r}")
        shape, offsets = entry.get("shape"), entry.get("data_offsets")
        if not (isinstance(shape, list) and all(isinstance(n, int) and n >= 0 for n in shape)):
            raise damaged(f"{name}: a shape of {shape!r}")
        if tuple(shape) != tuple(expected[name]):
            raise InvalidValueError(f"{path}: {name} has shape {tuple(shape)}, but {CONFIG} implies "
                                    f"{tuple(expected[name])}")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(n, int) for n in offsets)):
            raise damaged(f"{name}: offsets {offsets!r}")
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(_DTYPES[entry["dtype"]]).itemsize
        tensors[name] = (entry["dtype"], tuple(shape), offsets[0], offsets[1])
        if offsets[1] - offsets[0] != nbytes or offsets[0] < 0:
            raise damaged(f"{name}: offsets {offsets} for {nbytes:,} bytes")
        end = max(end, offsets[1])
    starts = sorted((start, stop) for _, _, start, stop in tensors.values())
    if any(a[1] > b[0] for a, b in zip(starts, starts[1:])):
        raise damaged("overlapping tensors")
    if size != 8 + length + end:
        raise damaged(f"{size:,} bytes, but its header describes {8 + length + end:,}")
    return length, tensors


def read_weights(directory: Path, expected: Mapping[str, tuple[int, ...]],
                 model: str = "model") -> dict[str, np.ndarray]:
    """The tensors of ``model.safetensors`` as NumPy arrays (writable, little-endian), after
    :func:`weights_header`'s checks on the same open file: nothing beyond the expected
    tensors' bytes is ever read."""
    path = directory / WEIGHTS
    sizes = sum(int(np.prod(shape, dtype=np.int64)) for shape in expected.values())
    with open_regular_file(path, 8 + MAX_HEADER_BYTES + 8 * sizes, "weights file") as handle:
        head, size = handle.read(8 + MAX_HEADER_BYTES), os.fstat(handle.fileno()).st_size
        length, tensors = _checked_header(path, head, size, expected, model)
        data = bytearray(size - 8 - length)
        done = min(len(head) - 8 - length, len(data))
        data[:done] = head[8 + length:8 + length + len(data)]
        view = memoryview(data)
        while done < len(data):
            count = handle.readinto(view[done:])
            if not count:
                raise InvalidValueError(f"{path}: damaged weights file (it shrank while being read)")
            done += count
    return {name: np.frombuffer(data, dtype=_DTYPES[dtype], count=int(np.prod(shape, dtype=np.int64)),
                                offset=start).reshape(shape)
            for name, (dtype, shape, start, _) in tensors.items()}
