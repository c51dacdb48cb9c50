"""A model directory, read and saved: which directory a path names, and its files read as
untrusted input and checked, without torch. Every model reader starts here (:func:`probsent.load`,
the checkpoint and export readers with torch); :func:`save_model` writes these files.

Each part is a regular file read with a bound that follows from what it should hold
(:mod:`probsent.files.untrusted`): ``config.json``, ``calibration.json`` and
``percentiles.json`` at most :data:`MAX_JSON_BYTES`; ``vocab.txt`` at most :data:`MAX_WORD_BYTES`
per word of the config's ``vocab_size``; ``model.safetensors`` exactly its header plus the bytes
of the tensors the config implies. The config's model settings are checked against the model's
description (:mod:`probsent.model_descriptions`) and the settings' declared ranges
(:mod:`probsent.settings`), and the weights' header against the names and shapes they imply,
before any tensor is read or any table of the model's size is made, so a config that claims a
huge model costs nothing.

A model saved: a directory of ``config.json``, ``model.safetensors`` and ``vocab.txt`` (and
the calibration and percentile table where the model has them).

No pickle anywhere: weights are safetensors, everything else is JSON or text. Writing needs
NumPy and safetensors only (a torch module's weights are read as NumPy arrays first), so the
core install saves and exports as well as it reads.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import struct
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import save_file

from probsent.data.vocab import ESTIMATES_FILE, Vocabulary
from probsent.errors import InvalidValueError, MissingFileError
from probsent.files.atomic_writes import atomic_path, files_into, set_aside
from probsent.files.untrusted import open_regular_file, read_json_file, read_regular_file
from probsent.model_descriptions import DESCRIPTIONS, ModelDescription
from probsent.settings import check_setting, is_declared
from probsent.version import __version__

__all__ = ["CALIBRATION", "CONFIG", "DEFAULT_MODEL", "DEFAULT_NAME", "ESTIMATED_WORDS", "FORMAT_NAME", "FORMAT_VERSION",
           "MAX_HEADER_BYTES", "MAX_JSON_BYTES", "MAX_MODEL_FILE_BYTES", "MAX_WORD_BYTES", "MODEL_FILES",
           "PERCENTILES", "TOKENIZER", "VOCAB", "WEIGHTS", "encoder_weights", "expected_shapes", "files_digest",
           "files_identity", "lossless_dtype", "model_settings_problem", "read_config", "read_consistently",
           "read_model", "read_model_config", "read_model_files", "read_vocabulary", "read_weights",
           "resolve_model_dir", "save_model", "weights_header", "write_model_dir", "write_model_files",
           "write_safetensors"]

FORMAT_NAME = "probsent-model"
FORMAT_VERSION = 1
CONFIG, WEIGHTS, VOCAB = "config.json", "model.safetensors", "vocab.txt"
CALIBRATION, PERCENTILES = "calibration.json", "percentiles.json"  # written by ``probsent calibrate``
ESTIMATED_WORDS = ESTIMATES_FILE  # the open vocabulary (probsent.data.vocab): calibrate, export, training
# Every file a model directory's model is made of: what ``save`` writes, and the only names it
# ever replaces or removes in an existing directory (anything else there is the user's).
MODEL_FILES = (CONFIG, WEIGHTS, VOCAB, CALIBRATION, PERCENTILES, ESTIMATED_WORDS)
DEFAULT_NAME = "default"  # the shipped model's name: never a path, so no file can shadow it
DEFAULT_MODEL = Path(__file__).resolve().parent / "pretrained" / "wlo"

MAX_JSON_BYTES = 8 * 2**20  # config.json, calibration.json, percentiles.json
MAX_WORD_BYTES = 1024  # vocab.txt: at most this many bytes per word, on average
MAX_MODEL_FILE_BYTES = 2**34  # any model file read whole (Spark's archive): 16 GiB
MAX_HEADER_BYTES = 2**20  # the safetensors header (JSON: each tensor's dtype, shape, offsets)
T = TypeVar("T")
_DTYPES = {"F16": "<f2", "F32": "<f4", "F64": "<f8", "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
           "U8": "u1", "BOOL": "?"}


def resolve_model_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """The model directory that ``path`` names: with no argument, or the name ``"default"``
    (a str), the WLO model that ships inside the package, whatever the working directory holds
    (a directory named default is ``"./default"``, or a ``Path``); a model directory itself; or a
    ``probsent train`` output directory's best model (or the copy set aside while it was
    replaced). Raises MissingFileError only for the missing shipped model; any other problem is
    left to the reader."""
    if path is None or (isinstance(path, str) and path == DEFAULT_NAME):
        if not (DEFAULT_MODEL / CONFIG).is_file():
            raise MissingFileError(f"{DEFAULT_MODEL}: this installation has no shipped model; "
                                   f"give a model directory")
        path = DEFAULT_MODEL
    path = Path(path)
    if not (path / CONFIG).exists():  # a training run: its best model, or the copy set aside
        path = next((p for p in (path / "best", set_aside(path / "best")) if (p / CONFIG).exists()), path)
    return path


def read_model(directory: Path) -> tuple[dict[str, Any], Vocabulary, dict[str, np.ndarray]]:
    """The config, vocabulary and float32 weights (NumPy, by name) of the model directory
    ``directory``, every part checked: MissingFileError (a FileNotFoundError) for it or a part
    missing, InvalidValueError (a ValueError) for anything wrong in it, in one line."""
    config = read_model_config(directory)
    problem = model_settings_problem(config.get("model"))
    if problem:
        raise InvalidValueError(f"{directory / CONFIG}: {problem}")
    model = config["model"]
    vocab, weights = read_model_parts(directory, model, expected_shapes(DESCRIPTIONS[model["type"]], model))
    return config, vocab, weights


def model_settings_problem(model: Any) -> str | None:
    """What is wrong with config.json's "model" settings, or None: a described model type, no
    setting its description lacks, a positive whole ``vocab_size`` (the reader compares it with
    vocab.txt), each setting (or its default, where absent) within the range that
    :mod:`probsent.settings` declares for it, and the weights' dimensions whole numbers."""
    if not isinstance(model, dict):
        return "no model settings"
    described = DESCRIPTIONS.get(model.get("type")) if isinstance(model.get("type"), str) else None
    if described is None:
        return f"model.type must be one of {', '.join(DESCRIPTIONS)}, not {model.get('type')!r}"
    unknown = sorted(set(model) - {"type", "vocab_size"} - set(described.settings))
    if unknown:
        return f"model.{unknown[0]} is not a setting of a {described.name} model"
    size = model.get("vocab_size")
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        return f"model.vocab_size must be a positive integer, not {size!r}"
    for name, default in described.settings.items():
        problem = check_setting(name, model.get(name, default)) if is_declared(name) else None
        if problem:
            return f"model.{name} {problem}"
    for shape in described.weights.values():
        for part in shape:
            name = part.split("*")[-1] if isinstance(part, str) else None
            value = model.get(name, described.settings.get(name)) if name else part
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                return f"model.{name} must be a whole number, not {value!r}"
    return None


def expected_shapes(described: ModelDescription, model: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
    """Each tensor's name and shape for the model settings ``model`` (checked; a setting absent
    there takes its default)."""
    def size(part: int | str) -> int:
        if isinstance(part, int):
            return part
        factor, _, name = part.rpartition("*")
        return int(factor or 1) * model.get(name, described.settings.get(name))

    return {name: tuple(size(part) for part in shape) for name, shape in described.weights.items()}


def read_config(directory: Path) -> Any:
    """The JSON value of ``config.json`` (a one-line "damaged config" error otherwise)."""
    return read_json_file(directory / CONFIG, MAX_JSON_BYTES, "config")


def read_model_config(directory: Path) -> dict[str, Any]:
    """config.json's value, once the directory is checked to be a complete probsent model of this
    format: MissingFileError (a FileNotFoundError) for it or a part missing, InvalidValueError
    for a config of another kind or version."""
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


def read_model_files(directory: Path) -> dict[str, bytes]:
    """The bytes of the model files there (:data:`MODEL_FILES`, those present), each a regular
    file read within a bound: what Spark ships, and what identifies a model to a resumed run."""
    return {name: read_regular_file(directory / name, MAX_MODEL_FILE_BYTES, "model file")
            for name in MODEL_FILES if os.path.lexists(directory / name)}


def files_digest(contents: Mapping[str, bytes]) -> str:
    """SHA-256 over the files' names and bytes, in the given order."""
    digest = hashlib.sha256()
    for name, data in contents.items():
        digest.update(name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


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
    the check of the files behind :func:`read_model`.

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


TOKENIZER = {"lowercase": True, "scheme": "penn-treebank"}


def encoder_weights(encoder: Any) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(config.json's "model" settings, the weights as NumPy arrays by name) of a torch module
    (:class:`probsent.models.SentenceEncoder`) or of a NumPy model
    (:class:`probsent.inference.array_encoder.ArrayEncoder`, whose float32 tables are used as they
    are: nothing imports torch)."""
    if isinstance(getattr(encoder, "weights", None), dict) and isinstance(getattr(encoder, "config", None), dict):
        size = len(next(iter(encoder.weights.values())))
        return {**encoder.config, "vocab_size": size}, dict(encoder.weights)
    # a floating-point tensor as float32, what the model computes in (bfloat16 has no NumPy dtype)
    tensors = {name: tensor.detach().cpu() for name, tensor in encoder.state_dict().items()}
    return encoder.config(), {name: (t.float() if t.is_floating_point() else t).numpy() for name, t in tensors.items()}


def lossless_dtype(weights: dict[str, np.ndarray]) -> np.dtype:
    """float16 where every floating-point weight is exactly a float16 number (a float16 model as
    loaded, or changed only in ways float16 holds), else float32 (what the model computes in):
    the smaller storage that changes no weight."""
    for array in weights.values():
        if array.dtype.kind == "f" and array.size:
            with np.errstate(over="ignore", invalid="ignore"):
                if not np.array_equal(array.astype(np.float16).astype(array.dtype), array):
                    return np.dtype(np.float32)
    return np.dtype(np.float16)


def write_model_dir(directory: Path, encoder: Any, vocab: Vocabulary, training: dict[str, Any] | None = None,
                    dtype: Any = np.float32) -> None:
    """Write the three model files of ``encoder`` (a torch module or a NumPy model, as
    :func:`encoder_weights`) into an existing (empty) directory ``directory``, its floating-point
    weights stored as ``dtype`` (a NumPy or torch dtype, or None for :func:`lossless_dtype`)."""
    model, weights = encoder_weights(encoder)
    write_model_files(directory, model, weights, vocab, training, dtype)


def write_model_files(directory: Path, model: dict[str, Any], weights: dict[str, np.ndarray], vocab: Vocabulary,
                      training: dict[str, Any] | None = None, dtype: Any = np.float32) -> None:
    """Write config.json (``model``: its "model" settings), model.safetensors (``weights``, NumPy
    arrays by name) and vocab.txt into an existing (empty) directory ``directory``.

    Floating-point weights are stored as ``dtype`` (float16 halves the size of a shipped model;
    loading always computes in float32; None: :func:`lossless_dtype`).
    """
    if len(vocab) != model["vocab_size"]:
        raise ValueError("vocabulary and model disagree on the vocabulary size")
    shapes = {name: tuple(array.shape) for name, array in weights.items()}
    if shapes != expected_shapes(DESCRIPTIONS[model["type"]], model):
        raise ValueError(f"the {model['type']} model's weights {shapes} are not those its description "
                         f"implies; the model could not be read back")
    config = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION,
              "probsent_version": __version__, "model": model,
              "tokenizer": TOKENIZER, "training": training or {}}
    (directory / CONFIG).write_text(json.dumps(config, indent=2, sort_keys=True) + "\n",
                                    encoding="utf-8")
    stored = lossless_dtype(weights) if dtype is None else _numpy_dtype(dtype)
    arrays = {name: np.ascontiguousarray(array.astype(stored) if array.dtype.kind == "f" else array)
              for name, array in weights.items()}
    write_safetensors(arrays, directory / WEIGHTS, metadata={"format": FORMAT_NAME})
    vocab.save(directory / VOCAB)


def _numpy_dtype(dtype: Any) -> np.dtype:
    """A NumPy dtype from a NumPy or torch one (torch.float16 -> float16; no torch imported)."""
    text = str(dtype)
    return np.dtype(text.removeprefix("torch.")) if text.startswith("torch.") else np.dtype(dtype)


def write_safetensors(tensors: dict[str, Any], path: Path, metadata: dict[str, str] | None = None) -> None:
    """safetensors' ``save_file`` (NumPy arrays; or torch tensors, from training, which has torch),
    whose failures to write (a full disk, a file-size limit) come back as the OSError they are,
    naming ``path``, instead of a SafetensorError."""
    tensors = {name: value if isinstance(value, np.ndarray) else value.detach().cpu().numpy()
               for name, value in tensors.items()}
    try:
        save_file(tensors, str(path), metadata=metadata)
    except SafetensorError as exc:
        code = re.search(r"(?:code: |os error )(\d+)", str(exc))
        if code is None:
            raise OSError(errno.EIO, f"cannot write safetensors ({str(exc).splitlines()[0]})", str(path)) from None
        raise OSError(int(code.group(1)), os.strerror(int(code.group(1))), str(path)) from None


def save_model(path: str | os.PathLike[str], encoder: Any, vocab: Vocabulary,
               training: dict[str, Any] | None = None, extras: Sequence[Any] = ()) -> None:
    """Save the model's files (:data:`probsent.model_directory.MODEL_FILES`): into a new directory
    ``path`` atomically, or into an existing model directory (or empty directory), where only
    those names are replaced (and a calibration or percentile table the model no longer has is
    removed, so that it is never paired with other weights) and everything else is kept. ``extras``
    (a calibration, a percentile table: anything with ``save(directory)``) are written with it.

    Any other existing path (a file, a directory that is not a model's) is refused, so nothing a
    user wrote is lost. ``encoder``: a torch module or a NumPy model (:func:`encoder_weights`);
    its weights are stored as :func:`lossless_dtype` says (a float16 model stays float16)."""
    target = Path(path)

    def write(directory: Path) -> None:
        write_model_dir(directory, encoder, vocab, training, dtype=None)
        for extra in extras:
            extra.save(directory)

    if not os.path.lexists(target):
        with atomic_path(target, replace=False) as tmp:  # a directory made meanwhile is not replaced
            tmp.mkdir()
            write(tmp)
        return
    if not (_is_model_dir(target) or _is_empty_dir(target)):
        raise InvalidValueError(f"{target}: exists and is not a probsent model directory; "
                                f"save to a new path (nothing was written)")
    with files_into(target, MODEL_FILES) as staging:
        write(staging)


def _is_empty_dir(path: Path) -> bool:
    """Whether ``path`` is a directory (not a link) with nothing in it."""
    try:
        return path.is_dir() and not path.is_symlink() and not any(path.iterdir())
    except OSError:
        return False


def _is_model_dir(path: Path) -> bool:
    """Whether ``path`` is a directory holding a probsent model's config.json."""
    try:
        if not path.is_dir() or path.is_symlink():
            return False
        config = json.loads((path / CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(config, dict) and config.get("format") == FORMAT_NAME
