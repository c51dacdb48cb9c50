"""The tokenized, indexed training corpus, cached on disk so that later runs start at once.

Words are numbered by decreasing frequency in the corpus (ties alphabetically), so a model
vocabulary of any size is a prefix of the corpus's word list. Sentence 2i is the first side
of pair i and sentence 2i + 1 its second side; ``pair_sources[i]`` indexes ``sources``, the
corpus names of the file's third column.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from array import array
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from probsent.version import __version__
from probsent.data.pairs import MAX_TOKENS, ReadReport, read_tokenized_pairs
from probsent.data.vocab import UNKNOWN, Vocabulary
from probsent.errors import MissingFileError
from probsent.io import atomic_path

CACHE_FORMAT = 2


@dataclass
class PairCorpus:
    """All pairs of a file as word ranks: ``tokens[offsets[k]:offsets[k + 1]]`` is sentence k."""

    tokens: np.ndarray  # int32 ranks into ``words``
    offsets: np.ndarray  # int64, one more than the number of sentences
    words: list[str]  # by decreasing frequency
    counts: np.ndarray  # int64 frequency of each word
    report: dict  # what reading the file skipped
    sources: list[str] = field(default_factory=list)  # corpus names, in order of appearance
    pair_sources: np.ndarray | None = None  # int16 index into ``sources``, one per pair

    @property
    def num_pairs(self) -> int:
        return (len(self.offsets) - 1) // 2

    def vocabulary(self, max_words: int) -> Vocabulary:
        """``<unk>`` plus the ``max_words`` most frequent words."""
        return Vocabulary([UNKNOWN] + self.words[:max_words])

    def model_ids(self, vocab_size: int) -> np.ndarray:
        """``tokens`` as ids of the vocabulary of the ``vocab_size - 1`` most frequent words."""
        return np.where(self.tokens < vocab_size - 1, self.tokens + 1, 0).astype(np.int64)


def content_hash(path: Path) -> str:
    """The SHA-256 of the file's bytes (read once more: cheap next to tokenizing it)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _cache_key(path: Path, max_pairs: int | None, max_tokens: int) -> str:
    """The cache's name: the file's content (not its path, size or time: a file edited in place
    with the same size and time is a new corpus) and the settings."""
    identity = [content_hash(path), max_pairs, max_tokens, CACHE_FORMAT, __version__]
    return hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:20]


def default_cache_dir() -> Path:
    """``$PROBSENT_CACHE``, else ``~/.cache/probsent``."""
    return Path(os.environ.get("PROBSENT_CACHE") or Path.home() / ".cache" / "probsent")


def _tokenize_file(path: Path, max_pairs: int | None, max_tokens: int,
                   progress: bool) -> PairCorpus:
    """Read and index the file in one pass, holding only int32 ids (a word's number in order
    of first appearance) besides the distinct words; ranked by frequency at the end."""
    report = ReadReport()
    first_seen: dict[str, int] = {}
    ids, lengths, pair_sources = array("i"), array("q"), array("h")
    source_index: dict[str, int] = {}
    pairs = read_tokenized_pairs(path, max_pairs, max_tokens, report)
    if progress:
        from tqdm import tqdm
        pairs = tqdm(pairs, desc="tokenizing", unit=" pairs", total=max_pairs, file=sys.stderr)
    number = first_seen.setdefault
    for first, second, source in pairs:
        pair_sources.append(source_index.setdefault(source, len(source_index)))
        for sentence in (first, second):
            lengths.append(len(sentence))
            ids.extend([number(w, len(first_seen)) for w in sentence])
    seen = list(first_seen)
    counts = np.bincount(np.frombuffer(ids, dtype=np.int32), minlength=len(seen)).astype(np.int64)
    order = sorted(range(len(seen)), key=lambda i: (-counts[i], seen[i]))  # by frequency, then word
    rank = np.empty(len(seen), dtype=np.int32)
    rank[order] = np.arange(len(seen), dtype=np.int32)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(np.frombuffer(lengths, dtype=np.int64), out=offsets[1:])
    tokens = np.frombuffer(ids, dtype=np.int32) if len(ids) else np.zeros(0, dtype=np.int32)
    for start in range(0, len(tokens), 1 << 20):  # ids -> ranks in place, a slice at a time
        tokens[start:start + (1 << 20)] = rank[tokens[start:start + (1 << 20)]]
    return PairCorpus(tokens, offsets, [seen[i] for i in order], counts[order],
                      {"summary": report.summary(), "lines": report.lines, "pairs": report.pairs,
                       "skipped": dict(report.skipped), "truncated": report.truncated_sentences},
                      list(source_index), np.frombuffer(pair_sources, dtype=np.int16).copy())


def load_corpus(path: str | os.PathLike[str], max_pairs: int | None = None, max_tokens: int = MAX_TOKENS,
                cache_dir: str | os.PathLike[str] | None = None, progress: bool = False) -> PairCorpus:
    """Tokenize and index a pair file, or load the result of an earlier identical call.

    The cache is keyed by the SHA-256 of the file's content and by the settings; a damaged
    cache file is ignored and rebuilt.
    """
    path = Path(path)
    if not path.is_file():
        raise MissingFileError(f"{path}: no such file")
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    cached = cache / f"corpus-{_cache_key(path, max_pairs, max_tokens)}.npz"
    if cached.is_file():
        try:
            with np.load(cached, allow_pickle=False) as f:
                words = bytes(f["words"]).decode("utf-8").split("\n")
                return PairCorpus(f["tokens"], f["offsets"], words, f["counts"],
                                  json.loads(str(f["report"])), json.loads(str(f["sources"])),
                                  f["pair_sources"])
        except Exception:  # a damaged cache is only a cache: rebuild it
            pass
    corpus = _tokenize_file(path, max_pairs, max_tokens, progress)
    cache.mkdir(parents=True, exist_ok=True)
    with atomic_path(cached) as tmp:
        with open(tmp, "wb") as handle:
            np.savez(handle, tokens=corpus.tokens, offsets=corpus.offsets,
                     words=np.frombuffer("\n".join(corpus.words).encode("utf-8"), dtype=np.uint8),
                     counts=corpus.counts, report=np.array(json.dumps(corpus.report)),
                     sources=np.array(json.dumps(corpus.sources)), pair_sources=corpus.pair_sources)
    return corpus
