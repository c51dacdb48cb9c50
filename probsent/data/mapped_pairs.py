"""The training pairs, tokenized and indexed: read once, at compiled speed, and mapped, not loaded.

Words are numbered by decreasing frequency in the pairs (ties alphabetically), so a model
vocabulary of any size is a prefix of the pairs' word list. Sentence 2i is the first side
of pair i and sentence 2i + 1 its second side; ``pair_sources[i]`` indexes ``sources``, the
source names of the file's third column.

Reading a pair file: blocks of whole lines go to :func:`probsent.data.pair_tokens.tokenize_block`
in worker processes (one per core; a file of one block is read here), which tokenize both sides
of every line with the compiled tokenizer; this process puts each block's words in one
numbering, counts them and streams the ids to disk, then ranks the words and writes the cache.
The cache is a directory of flat files (int32 word ranks, int64 sentence offsets, int32 pair
sources, the counts, the words and ``meta.json`` with their sizes and SHA-256 sums), mapped
into memory with ``np.memmap`` (the offsets, a step's index, are read into memory): a step
reads its sentences with ``pread`` (:func:`read_token_rows`), so a run's resident
memory does not grow with the number of pairs beyond the offsets. A cache that is damaged
(``meta.json`` of another shape included), from another format or another version of probsent is
rebuilt: a cache is read only from regular files (a link to ``/dev/zero`` is damage, not a read that
never ends), each only as far as ``meta.json`` says it holds, so damage costs a rebuild, never a
crash or a hang. A cache directory that cannot be written is only a lost cache (the pairs are
then built in a temporary directory and read into memory).

Reading scattered sentences of memory-mapped pairs without bringing their pages into memory.

A training step reads a few thousand sentences scattered over the token file. Read through the
memory map, every page touched stays mapped, and the system maps the neighbours of each page it
reads in as well (fault-around: 64 KiB), so one mega-batch maps most of the pairs' token file into the
process's resident memory. :func:`read_token_rows` reads each sentence's tokens with one
``pread`` from a numba kernel instead (a few microseconds a sentence, about what the page
faults cost), where the system has ``pread``; elsewhere it indexes the map.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import json
import multiprocessing
import os
import sys
import tempfile
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path
from typing import Iterator

import numpy as np

from probsent.data.pair_files import PairPart, pair_blocks, pair_parts
from probsent.data.pair_tokens import TokenBlock, tokenize_block
from probsent.data.pairs import MAX_TOKENS, ReadReport
from probsent.errors import InvalidValueError, ProbsentError
from probsent.files.atomic_writes import atomic_path
from probsent.files.content_identity import file_sha256
from probsent.files.untrusted import open_regular_file, read_json_file
from probsent.signals import become_worker, usable_cores
from probsent.version import __version__


def _libc_pread():
    """libc's pread as a ctypes function, or None where there is none (Windows)."""
    if os.name != "posix":
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        function = libc.pread
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_ssize_t
    function.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int64]
    return function


_PREAD = _libc_pread()
_KERNEL = None
_DESCRIPTORS: dict[str, int] = {}  # this process's open token files, by name


def _kernel():
    """The compiled loop of preads (made on first use)."""
    global _KERNEL
    if _KERNEL is None:
        from numba import njit

        pread = _PREAD

        @njit(cache=False)
        def read_rows(descriptor, base, itemsize, starts, out_offsets, out):  # pragma: no cover (compiled)
            for j in range(len(starts)):
                size = (out_offsets[j + 1] - out_offsets[j]) * itemsize
                if size > 0:
                    done = pread(descriptor, out[out_offsets[j]:].ctypes.data, size, base + starts[j] * itemsize)
                    if done != size:
                        return j
            return -1

        _KERNEL = read_rows
    return _KERNEL


def read_token_rows(tokens: np.ndarray, starts: np.ndarray, out_offsets: np.ndarray) -> np.ndarray:
    """``tokens[starts[j]:starts[j] + length j]`` one after the other (lengths from ``out_offsets``),
    in ``tokens``' dtype: by ``pread`` from a memory map's file, else by indexing."""
    lengths = np.diff(out_offsets)
    filename = getattr(tokens, "filename", None)
    if _PREAD is None or not isinstance(tokens, np.memmap) or filename is None:
        return np.asarray(tokens[np.repeat(starts - out_offsets[:-1], lengths) + np.arange(out_offsets[-1])])
    descriptor = _DESCRIPTORS.get(filename)
    if descriptor is None:
        descriptor = _DESCRIPTORS[filename] = os.open(filename, os.O_RDONLY)
    out = np.empty(int(out_offsets[-1]), dtype=tokens.dtype)
    failed = _kernel()(descriptor, tokens.offset, tokens.dtype.itemsize, np.ascontiguousarray(starts, np.int64),
                       np.ascontiguousarray(out_offsets, np.int64), out)
    if failed >= 0:
        raise OSError(f"{filename}: could not read sentence {int(failed)} (the cache file changed while mapped)")
    return out

CACHE_FORMAT = 4  # 4: words.txt's size recorded too (3: a directory of mapped arrays; 2: one .npz read whole)
BLOCK_BYTES = 4 << 20  # the text of a block of lines sent to a worker (TSV, JSON Lines)
_COPY_ROWS = 1 << 22  # array entries moved at a time while writing the cache


@dataclass
class MappedPairs:
    """All pairs of a file as word ranks: ``tokens[offsets[k]:offsets[k + 1]]`` is sentence k."""

    tokens: np.ndarray  # int32 ranks into ``words`` (mapped from the cache)
    offsets: np.ndarray  # int64, one more than the number of sentences (mapped)
    words: list[str]  # by decreasing frequency
    counts: np.ndarray  # int64 frequency of each word
    report: dict  # what reading the file skipped
    sources: list[str] = field(default_factory=list)  # source names, in order of appearance
    pair_sources: np.ndarray | None = None  # int32 index into ``sources``, one per pair (mapped)

    @property
    def num_pairs(self) -> int:
        return (len(self.offsets) - 1) // 2

    def sentences(self, sentences: np.ndarray, rank_ids: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, offsets) of ``sentences`` only, one after the other: sentence ``sentences[j]`` is
        ``ids[offsets[j]:offsets[j + 1]]``, its ranks as int64, or their ``rank_ids`` where given."""
        return gather_sentences(self.tokens, self.offsets, sentences, rank_ids)


def gather_sentences(tokens: np.ndarray, offsets: np.ndarray, sentences: np.ndarray,
                     table: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(ids, offsets) of ``sentences`` (sentence k is ``tokens[offsets[k]:offsets[k + 1]]``),
    compact and int64, each token looked up in ``table`` where given."""
    sentences = np.asarray(sentences, dtype=np.int64)
    starts = np.asarray(offsets[sentences], dtype=np.int64)
    lengths = np.asarray(offsets[sentences + 1], dtype=np.int64) - starts
    out_offsets = np.zeros(len(sentences) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out_offsets[1:])
    ids = read_token_rows(tokens, starts, out_offsets).astype(np.int64)  # the map's pages stay unmapped
    return (table[ids] if table is not None else ids), out_offsets


def content_hash(parts: list[PairPart]) -> str:
    """The SHA-256 of the pairs' content: each file's bytes (read once more: cheap next to
    tokenizing them), its format, columns and partition values, in order (a single TSV file: its
    bytes' SHA-256)."""
    digests = [(_file_sha256(part.path), part.kind, part.columns) + ((part.partition,) if part.partition else ())
               for part in parts]  # a partition folder's values are content too (a source)
    if len(parts) == 1 and parts[0].kind == "tsv":
        return digests[0][0]
    return hashlib.sha256(json.dumps(digests).encode()).hexdigest()


def _cache_key(digest: str, max_pairs: int | None, max_tokens: int) -> str:
    """The cache's name: the file's content (``digest``, its SHA-256; not its path, size or time:
    a file edited in place with the same size and time holds other pairs) and the settings."""
    identity = [digest, max_pairs, max_tokens, CACHE_FORMAT, __version__]
    return hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:20]


def default_cache_dir() -> Path:
    """``$PROBSENT_CACHE``, else ``~/.cache/probsent``."""
    return Path(os.environ.get("PROBSENT_CACHE") or Path.home() / ".cache" / "probsent")


def _token_blocks(parts: list[PairPart], max_tokens: int) -> Iterator[tuple[TokenBlock, int]]:
    """(tokens of a block, number of its first line), in file order, by worker processes
    (at most two blocks in flight each); pairs of one block are read in this process."""
    blocks = pair_blocks(parts, BLOCK_BYTES)
    reading = os.urandom(8).hex()  # this reading's word numbering in each process
    head = list(islice(blocks, 2))
    workers = usable_cores()  # one reader process per core
    if len(head) < 2 or workers < 2:
        for block, line in chain(head, blocks):
            yield tokenize_block(block, max_tokens, reading), line
        return
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=become_worker, initargs=(os.getpid(),))
    try:
        pending: deque = deque()
        for block, line in chain(head, blocks):
            pending.append((pool.submit(tokenize_block, block, max_tokens, reading), line))
            if len(pending) >= 2 * workers:
                future, first = pending.popleft()
                yield future.result(), first
        while pending:
            future, first = pending.popleft()
            yield future.result(), first
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


class _PairsWriter:
    """Puts blocks of tokens together into the files of a cache directory: each process's word
    numbers become one numbering (first appearance in the file), counted as they come, the ids
    streamed to disk; :meth:`finish` ranks the words and writes the arrays."""

    def __init__(self, directory: Path, max_pairs: int | None) -> None:
        self.directory, self.max_pairs = directory, max_pairs
        self.first_seen: dict[str, int] = {}
        self.numbers: dict[int, np.ndarray] = {}  # per process: its word numbers -> first_seen's
        self.counts = np.zeros(0, dtype=np.int64)
        self.source_index: dict[str, int] = {}
        self.report = ReadReport()
        self.files = {name: open(directory / f"{name}.tmp", "wb") for name in ("seen", "lengths")}
        self.pair_sources = open(directory / "pair_sources.i32", "wb")

    @property
    def full(self) -> bool:
        return self.max_pairs is not None and self.report.pairs >= self.max_pairs

    def add(self, block: TokenBlock, first_line: int) -> None:
        number = self.first_seen.setdefault
        new = np.fromiter((number(w, len(self.first_seen)) for w in block.new_words), dtype=np.int64,
                          count=len(block.new_words))
        table = self.numbers[block.process] = np.concatenate([self.numbers.get(block.process, new[:0]), new])
        pairs, lines, skipped = len(block.pair_lines), block.lines, len(block.skipped_lines)
        if self.max_pairs is not None and self.report.pairs + pairs >= self.max_pairs:
            pairs = self.max_pairs - self.report.pairs  # the reference stops after the last pair it keeps
            lines = int(block.pair_lines[pairs - 1]) + 1 if pairs else 0
            skipped = int(np.searchsorted(block.skipped_lines, lines))
        lengths = block.lengths[:2 * pairs]
        seen = table[block.ids[:int(lengths.sum())]]
        self.counts = np.concatenate([self.counts, np.zeros(len(self.first_seen) - len(self.counts), np.int64)])
        self.counts += np.bincount(seen, minlength=len(self.counts))
        self.files["seen"].write(seen.astype(np.int32).tobytes())
        self.files["lengths"].write(lengths.astype(np.int32).tobytes())
        names = np.array([self.source_index.setdefault(name, len(self.source_index))
                          for name in block.source_names], dtype=np.int32)
        self.pair_sources.write(names[block.source_codes[:pairs]].tobytes())
        report = self.report
        report.lines = first_line - 1 + lines
        report.pairs += pairs
        report.skipped.update(block.skipped_reasons[:skipped])
        report.truncated_sentences += int(block.truncated[:pairs].sum())

    def finish(self, name: str) -> dict:
        """Write the cache's arrays and return its ``meta.json`` content; a one-line error where
        the file gave no pair."""
        for handle in (*self.files.values(), self.pair_sources):
            handle.close()
        report = self.report
        if report.pairs == 0:
            raise InvalidValueError(f"{name}: no usable sentence pairs ({report.summary()})")
        seen = list(self.first_seen)
        alphabetical = np.empty(len(seen), dtype=np.int64)
        alphabetical[sorted(range(len(seen)), key=seen.__getitem__)] = np.arange(len(seen))
        used = np.flatnonzero(self.counts)  # a mark the tokenizer asked for but never found
        order = used[np.lexsort((alphabetical[used], -self.counts[used]))]  # by count, then word
        rank = np.zeros(len(seen), dtype=np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        directory = self.directory
        _map_file(directory / "seen.tmp", directory / "tokens.i32", np.int32, lambda ids: rank[ids])
        running = [0]

        def offsets(lengths: np.ndarray) -> np.ndarray:
            ends = running[0] + np.cumsum(lengths, dtype=np.int64)
            running[0] = int(ends[-1]) if len(ends) else running[0]
            return ends

        with open(directory / "offsets.i64", "wb") as handle:
            handle.write(np.zeros(1, np.int64).tobytes())
        _map_file(directory / "lengths.tmp", directory / "offsets.i64", np.int32, offsets, append=True)
        np.asarray(self.counts[order], dtype=np.int64).tofile(directory / "counts.i64")
        words = "\n".join(seen[i] for i in order).encode("utf-8")
        (directory / "words.txt").write_bytes(words)
        sizes = {"tokens.i32": running[0], "offsets.i64": 2 * report.pairs + 1, "pair_sources.i32": report.pairs,
                 "counts.i64": len(order), "words.txt": len(words)}  # entries of the arrays, bytes of the words
        return {"format": CACHE_FORMAT, "version": __version__, "sizes": sizes,
                "sha256": {name: _file_sha256(directory / name) for name in sizes},
                "sources": list(self.source_index),
                "report": {"summary": report.summary(), "lines": report.lines, "pairs": report.pairs,
                           "skipped": dict(report.skipped), "truncated": report.truncated_sentences}}


def _map_file(source: Path, target: Path, dtype: type, function, append: bool = False) -> None:
    """Write ``function`` of ``source``'s array (``dtype``), a slice at a time, to ``target``;
    ``source`` is removed."""
    with open(source, "rb") as reading, open(target, "ab" if append else "wb") as writing:
        while len(part := np.fromfile(reading, dtype=dtype, count=_COPY_ROWS)):
            writing.write(np.ascontiguousarray(function(part)).tobytes())
    source.unlink()


def _file_sha256(path: Path) -> str:
    return file_sha256(path)  # the one content identity of an input (probsent.files.content_identity)


_DTYPES = {"tokens.i32": np.int32, "offsets.i64": np.int64, "pair_sources.i32": np.int32, "counts.i64": np.int64}
_CACHE_FILES = (*_DTYPES, "words.txt")
MAX_META_BYTES = 1 << 30  # meta.json: sizes, sums, the report and the source names
_MAX_ENTRIES = 1 << 48  # no file of a cache holds more (entries or bytes)
_REPORT = {"summary": str, "lines": int, "pairs": int, "skipped": dict, "truncated": int, "sha256": str}


def _cache_meta(directory: Path) -> dict:
    """The cache's ``meta.json``, checked to have the shape this format writes; ValueError where
    it does not (another format or version, or damage of any kind)."""
    try:
        meta = read_json_file(directory / "meta.json", MAX_META_BYTES, "pairs cache meta.json")
    except ProbsentError as exc:  # missing, not a regular file, too large, not JSON
        raise ValueError(str(exc)) from None
    if not isinstance(meta, dict) or meta.get("format") != CACHE_FORMAT or meta.get("version") != __version__:
        raise ValueError("another format or version")
    sizes, sums, sources, report = (meta.get(name) for name in ("sizes", "sha256", "sources", "report"))
    if not (isinstance(sizes, dict) and set(sizes) == set(_CACHE_FILES)
            and all(type(size) is int and 0 <= size <= _MAX_ENTRIES for size in sizes.values())):
        raise ValueError("meta.json: damaged sizes")
    if not (isinstance(sums, dict) and set(sums) == set(_CACHE_FILES) and all(isinstance(v, str) for v in sums.values())):
        raise ValueError("meta.json: damaged sums")
    if not (isinstance(sources, list) and all(isinstance(name, str) for name in sources)):
        raise ValueError("meta.json: damaged sources")
    if not (isinstance(report, dict) and all(type(report.get(key)) is kind for key, kind in _REPORT.items())):
        raise ValueError("meta.json: damaged report")
    return meta


def _check_cache_file(file: Path, size: int, sha256: str) -> None:
    """ValueError unless ``file`` is a regular file (or a link to one) of exactly ``size`` bytes
    whose SHA-256 is ``sha256``; no more than ``size`` bytes are read."""
    try:
        with open_regular_file(file, size, "pairs cache file") as handle:
            if os.fstat(handle.fileno()).st_size != size:
                raise ValueError(f"{file.name} is damaged (its size)")
            digest, left = hashlib.sha256(), size
            while left and (part := handle.read(min(left, 1 << 24))):
                digest.update(part)
                left -= len(part)
    except ProbsentError as exc:  # missing, not a regular file, larger than recorded
        raise ValueError(str(exc)) from None
    if left or digest.hexdigest() != sha256:
        raise ValueError(f"{file.name} is damaged")


def _build(parts: list[PairPart], digest: str, max_pairs: int | None, max_tokens: int, directory: Path,
           progress: bool) -> None:
    """Tokenize ``parts`` into the cache files in ``directory`` (which exists, empty)."""
    writer = _PairsWriter(directory, max_pairs)
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(desc="tokenizing", unit=" pairs", total=max_pairs, file=sys.stderr)
    blocks = _token_blocks(parts, max_tokens)
    try:
        for block, first_line in blocks:
            before = writer.report.pairs
            writer.add(block, first_line)
            if bar is not None:
                bar.update(writer.report.pairs - before)
            if writer.full:
                break
    finally:
        blocks.close()  # stops the workers
        if bar is not None:
            bar.close()
    meta = writer.finish(", ".join(str(part.path) for part in parts))
    meta["report"]["sha256"] = digest  # the content trained on: --resume checks it
    (directory / "meta.json").write_text(json.dumps(meta), encoding="utf-8")


def _mapped(directory: Path, in_memory: bool = False) -> MappedPairs:
    """The pairs in a cache directory, their arrays mapped (or read, ``in_memory``); ValueError
    where the directory is not a complete, undamaged cache of this format and version."""
    meta = _cache_meta(directory)
    sizes = meta["sizes"]
    arrays = {}
    for name, dtype in _DTYPES.items():
        file = directory / name
        _check_cache_file(file, sizes[name] * np.dtype(dtype).itemsize, meta["sha256"][name])
        in_memory_here = in_memory or name == "offsets.i64"  # a step's index: 8 bytes a sentence, read at random
        arrays[name] = np.fromfile(file, dtype=dtype) if in_memory_here else np.memmap(file, dtype=dtype, mode="r")
    _check_cache_file(directory / "words.txt", sizes["words.txt"], meta["sha256"]["words.txt"])
    with open_regular_file(directory / "words.txt", sizes["words.txt"], "pairs cache file") as handle:
        words = handle.read(sizes["words.txt"]).decode("utf-8").split("\n")
    if len(words) != sizes["counts.i64"] or len(arrays["offsets.i64"]) != 2 * sizes["pair_sources.i32"] + 1:
        raise ValueError("the files disagree with meta.json")
    return MappedPairs(arrays["tokens.i32"], arrays["offsets.i64"], words, np.array(arrays["counts.i64"]),
                      meta["report"], meta["sources"], arrays["pair_sources.i32"])


def load_mapped_pairs(path: str | os.PathLike[str], max_pairs: int | None = None, max_tokens: int = MAX_TOKENS,
                cache_dir: str | os.PathLike[str] | None = None, progress: bool = False,
                columns: str | None = None) -> MappedPairs:
    """Tokenize and index the pairs ``path`` names (a TSV, Parquet or JSON Lines file, several
    joined by ``os.pathsep``, or a directory of parts: :func:`probsent.data.pair_files.pair_parts`;
    ``columns``: ``--columns``), or map the result of an earlier identical call.

    The cache is keyed by the SHA-256 of the content and by the settings; a damaged cache, or
    one of another format or version, is rebuilt. Where the cache directory cannot be written,
    the pairs are built in a temporary directory and read into memory.
    """
    parts = pair_parts(str(path), columns)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    digest = content_hash(parts)
    cached = cache / f"pairs-{_cache_key(digest, max_pairs, max_tokens)}"
    try:
        return _mapped(cached)
    except (OSError, ValueError):  # none yet, or damaged (any shape: _cache_meta): only a cache
        pass
    try:
        with atomic_path(cached) as tmp:
            tmp.mkdir()
            _build(parts, digest, max_pairs, max_tokens, tmp, progress)
        return _mapped(cached)
    except OSError:  # the cache directory cannot be written: build the pairs elsewhere
        with tempfile.TemporaryDirectory(prefix="probsent-pairs-") as tmp:
            _build(parts, digest, max_pairs, max_tokens, Path(tmp), progress)
            return _mapped(Path(tmp), in_memory=True)
