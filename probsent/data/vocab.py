"""Word vocabulary: index 0 is the unknown word, then words by decreasing training frequency.

A token without an entry of its own is looked up once more in its folded form (:func:`fold`:
accents and compatibility forms removed, case folded), so ``café`` reads as ``cafe`` and
``ﬁne`` as ``fine`` where the vocabulary has those; only then is it ``<unk>``. Every tokenizer
path looks words up through :attr:`Vocabulary.index` (a :class:`FoldingIndex`), so they agree.

The open vocabulary (the second half of this module): a term for every word without an entry
of its own, read from a table in the model directory (``estimated_words.safetensors``), with
NumPy only.

A WLO word is a scale A_w and a translation B_w (its entropy term is sum_d log|A_w,d|). A word
without an entry used to share the ``<unk>`` row. With this table it is read as one of a few
*classes*, each with its own A and B fitted on the model's own entries of that kind
(:mod:`probsent.training.model_calibration`), tried in this order:

1. **a number, by its shape** (``number: year``, ``integer``, ``decimal``, ``thousands``,
   ``time``, ``ordinal``, ``decade``, ``with letters``, ``other``): "1879", "3.14",
   "1,000,000", "5:30", "22nd", "1990s", "3kg"; percentages and money are a number
   followed by the tokens "%" or "$", which the tokenizer splits off;
2. **an English word the model lacks**, by its English frequency (wordfreq's English list,
   copied into the table when it was fitted: no wordfreq and no network at run time): one class
   per band of Zipf frequency (``english: zipf 2.5-3.0``); a hyphenated compound whose every
   part is a number or a word the model or English knows (``real-estate``, ``30-year``) is
   English too, in the band of its rarest part;
3. **any other token, by its form** (``form: letters``, ``letters and digits``, ``joined``
   (letters or digits joined by punctuation: ``foo_bar``, ``node.js``), ``other script``,
   ``symbols``). Tokens are lower-cased by the tokenizer before they are looked up, so capitals
   are not part of the form.

Each class is one more row after the vocabulary's: the token's id is ``len(vocabulary) +
class``, so every path that turns text into ids (the Python and compiled tokenizers, explain,
spaCy) reads it through one index (:class:`EstimatingIndex`), and scoring, ``encode`` and the
worker processes use the same rows. ``encode``'s variance of a word is A's, so it stays the
entropy the score reports.

Coverage: a number or an English word counts as *known* (to the model or to English); a token
read by its form only does not (:attr:`WordEstimates.known`).
"""
from __future__ import annotations

import json
import os
import re
import unicodedata
from itertools import compress, repeat
from operator import is_
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from probsent.errors import InvalidValueError

UNKNOWN = "<unk>"


def fold(token: str) -> str:
    """``token`` without accents and compatibility variants, case-folded: NFKD, combining marks
    dropped, then ``str.casefold`` (``Straße`` -> ``strasse``, ``Ｃａｆé`` -> ``cafe``)."""
    decomposed = unicodedata.normalize("NFKD", token)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


class FoldingIndex(dict):
    """token -> id, where ``get`` falls back to the token's folded form (:func:`fold`) when the
    token itself has no entry; iteration, ``in`` and ``[]`` see the exact entries only."""

    def get(self, token, default=None):  # type: ignore[override]
        found = dict.get(self, token)
        if found is not None:
            return found
        if isinstance(token, str) and not token.isascii():
            return dict.get(self, fold(token), default)
        return default


class Vocabulary:
    """Maps tokens to ids; any token not in the vocabulary maps to 0 (``<unk>``)."""

    def __init__(self, words: Sequence[str]) -> None:
        if not words or words[0] != UNKNOWN:
            raise ValueError(f"a vocabulary starts with {UNKNOWN}")
        self.words = list(words)
        self.index = FoldingIndex((word, i) for i, word in enumerate(self.words))
        if len(self.index) != len(self.words):
            raise ValueError("duplicate word in vocabulary")

    def __len__(self) -> int:
        return len(self.words)

    def ids(self, tokens: Iterable[str]) -> np.ndarray:
        """Ids of ``tokens`` (int64), unknown words as 0."""
        get = self.index.get
        return np.fromiter((get(t, 0) for t in tokens), dtype=np.int64)

    def save(self, path: str | os.PathLike[str]) -> None:
        """One word a line, in id order (``<unk>`` first)."""
        Path(path).write_text("".join(w + "\n" for w in self.words), encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "Vocabulary":
        """Read a file written by :meth:`save`."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidValueError(f"{path}: cannot read vocabulary ({exc})") from None
        return cls.from_text(text, path)

    @classmethod
    def from_text(cls, text: str, path: str | os.PathLike[str]) -> "Vocabulary":
        """The vocabulary in ``text`` (a file's content, as :meth:`save` writes it; ``path``
        names it in errors)."""
        words = text.replace("\r\n", "\n").split("\n")  # a file saved with CRLF line ends (no word holds a \r)
        if words and words[-1] == "":
            words.pop()
        if not words or words[0] != UNKNOWN:
            raise InvalidValueError(f"{path}:1: a vocabulary file starts with {UNKNOWN}")
        try:
            return cls(words)
        except ValueError as exc:
            raise InvalidValueError(f"{path}: {exc}") from None


# -- the open vocabulary: words without an entry, read by their class -------------------------

ESTIMATES_FILE = "estimated_words.safetensors"  # in a model directory (probsent.model_directory.MODEL_FILES)
ESTIMATES_FORMAT = "probsent-estimated-words"
MAX_ESTIMATES_BYTES = 64 * 2**20  # far above what is ever written (a few MB)

# (name, pattern): the first that matches the whole (lower-cased) token
NUMBER_SHAPES = (
    ("year", r"1[0-9]{3}|20[0-9]{2}"),
    ("integer", r"[0-9]+"),
    ("decimal", r"[0-9]*\.[0-9]+"),
    ("thousands", r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?"),
    ("time", r"[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?(?:am|pm)?"),
    ("ordinal", r"[0-9]*(?:1st|2nd|3rd|[04-9]th|1[0-9]th)"),
    ("decade", r"[0-9]+'?s"),
    ("with letters", r"[0-9][0-9.,]*[a-z]+"),
    ("other", r"[0-9][^a-z]*"),
)
_SHAPES = [(name, re.compile(pattern)) for name, pattern in NUMBER_SHAPES]
# English bands of Zipf frequency: [lower, upper) (the first from 0, the last without an upper end)
ENGLISH_BANDS = (1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0)
FORMS = ("letters", "letters and digits", "joined", "other script", "symbols")
NOT_ENGLISH = 255  # a vocabulary entry's band where English does not know it


def number_shape(token: str) -> str | None:
    """The shape of a number token (a name of NUMBER_SHAPES), None for a token that is no number."""
    if not token[:1].isdigit() and not (token[:1] == "." and token[1:2].isdigit()):
        return None
    for name, pattern in _SHAPES:
        if pattern.fullmatch(token):
            return name
    return None


_SHAPE_ROWS = {name: row for row, (name, _) in enumerate(NUMBER_SHAPES)}  # the number classes come first


def english_band(zipf: float) -> int:
    """The index of the English band (0 .. len(ENGLISH_BANDS)) of a Zipf frequency."""
    return int(np.searchsorted(ENGLISH_BANDS, zipf, side="right"))


def band_name(band: int) -> str:
    """``english: zipf 2.5-3.0`` for a band index."""
    lower = (0.0, *ENGLISH_BANDS)[band]
    upper = f"-{ENGLISH_BANDS[band]:.1f}" if band < len(ENGLISH_BANDS) else "+"
    return f"english: zipf {lower:.1f}{upper}"


def _is_latin(character: str) -> bool:
    return character.isascii() or fold(character).isascii()


_LETTERS = re.compile(r"[a-z]+")
_LETTERS_AND_DIGITS = re.compile(r"[a-z0-9]+")
_ASCII_LETTER_OR_DIGIT = re.compile(r"[a-zA-Z0-9]")


def form_of(token: str) -> str:
    """The form of a token that is neither a number nor English (a name of FORMS)."""
    if _LETTERS.fullmatch(token):  # the usual cases first, without a loop over characters
        return "letters"
    if _LETTERS_AND_DIGITS.fullmatch(token):
        return "letters and digits"
    if token.isascii():  # ASCII letters are Latin: symbols or joined, by two searches
        return "joined" if _ASCII_LETTER_OR_DIGIT.search(token) else "symbols"
    letters = any(c.isalpha() for c in token)
    digits = any(c.isdigit() for c in token)
    if not letters and not digits:
        return "symbols"
    if letters and not all(_is_latin(c) for c in token if c.isalpha()):
        return "other script"
    if not all(c.isalnum() for c in token):
        return "joined"
    return "letters and digits" if digits else "letters"


_FORM_ROWS = {form: row for row, form in enumerate(FORMS)}  # a form's row among the forms


def class_names() -> list[str]:
    """Every class, in row order: the number shapes, the English bands, the forms."""
    return ([f"number: {name}" for name, _ in NUMBER_SHAPES]
            + [band_name(b) for b in range(len(ENGLISH_BANDS) + 1)] + [f"form: {name}" for name in FORMS])


class WordEstimates:
    """Each class's scale and translation (``scale``, ``shift``: [classes, dim] float32), and
    the English words the model lacks with their band (``english``: word -> band index),
    for a model of ``vocab_size`` entries. Immutable once made; thread-safe."""

    def __init__(self, scale: np.ndarray, shift: np.ndarray, english_words: Sequence[str],
                 english_bands: np.ndarray, vocab_size: int, fitted: Mapping[str, Any] | None = None,
                 vocab_bands: np.ndarray | None = None) -> None:
        self.names = class_names()
        if scale.shape != shift.shape or scale.ndim != 2 or len(scale) != len(self.names):
            raise ValueError(f"estimates need [{len(self.names)}, dim] scale and shift, not {scale.shape}, {shift.shape}")
        if len(english_words) != len(english_bands):
            raise ValueError("one band per English word")
        self.scale = np.ascontiguousarray(scale, dtype=np.float32)
        self.shift = np.ascontiguousarray(shift, dtype=np.float32)
        # the English words as one string, one a line: a list of a few hundred thousand strings is
        # a container the garbage collector walks, item by item, and a process pickles item by item
        self._english_text = "\n".join(english_words)
        self.english_count = len(english_words)
        self.english_bands = np.asarray(english_bands, dtype=np.uint8)
        self.vocab_size = int(vocab_size)
        # each vocabulary entry's English band (NOT_ENGLISH where English does not know it): the parts of compounds
        self.vocab_bands = (np.full(self.vocab_size, NOT_ENGLISH, dtype=np.uint8) if vocab_bands is None
                            else np.asarray(vocab_bands, dtype=np.uint8))
        if self.vocab_bands.shape != (self.vocab_size,):
            raise ValueError("one band per vocabulary entry")
        self.fitted = dict(fitted or {})  # how the table was fitted (counts per class; for people)
        self.known = np.array([not name.startswith("form: ") for name in self.names])
        self.first_english = len(NUMBER_SHAPES)  # the row of the first English band
        self.first_form = len(NUMBER_SHAPES) + len(ENGLISH_BANDS) + 1  # the row of the first form
        self._lookups: _EnglishLookups | None = None  # made on first use (a few hundred thousand words)

    def __len__(self) -> int:
        return len(self.names)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_lookups": None}

    def _english_lookups(self) -> "_EnglishLookups":
        if self._lookups is None:
            self._lookups = _EnglishLookups(self)
        return self._lookups

    @property
    def english_words(self) -> list[str]:
        """The English words the model lacks, in the table's order (a new list each time)."""
        return self._english_text.split("\n") if self.english_count else []

    def plain_english_ids(self) -> dict[str, int]:
        """The id (``vocab_size`` + class row) of each English word that is read as English by
        itself: ASCII (no folded form is looked up before it) and not starting with a digit or
        "." (no number shape is tried before it). It is the id :meth:`class_of` gives such a
        word, whatever the vocabulary holds, so a token without an entry found here needs no
        classification. Made on first use, once per process (a copy for a worker makes its own)."""
        return self._english_lookups().plain

    def _english_id(self, word: str) -> int | None:
        """The id of an English word the model lacks (``word`` exactly, else a non-ASCII word's
        folded form), None for another word."""
        found = self._exact_english_id(word)
        if found is None and not word.isascii():
            found = self._exact_english_id(fold(word))
        return found

    def _exact_english_id(self, word: str) -> int | None:
        lookups = self._english_lookups()
        found = lookups.plain.get(word)
        return found if found is not None or not lookups.other else lookups.other.get(word)

    def _band(self, token: str, entry: Callable[[str], int | None]) -> int | None:
        """The English band of a word (``entry``: its vocabulary id, or None), None if English
        does not know it."""
        found = entry(token)
        if found:  # an entry other than <unk>: the band the table holds for it
            band = self._english_lookups().vocab_bands[found]
            return None if band == NOT_ENGLISH else band
        english = self._english_id(token)
        return None if english is None else english - self.vocab_size - self.first_english

    def class_of(self, token: str, entry: Callable[[str], int | None] = lambda token: None) -> int:
        """The class (row) of a token without an entry (as the tokenizer gives it: lower-cased);
        ``entry`` looks a word up in the vocabulary (its id, or None), for the parts of compounds."""
        first = token[:1]
        if first.isdigit() or first == ".":
            shape = number_shape(token)
            if shape is not None:
                return _SHAPE_ROWS[shape]
        english = self._english_id(token)
        if english is not None:
            return english - self.vocab_size
        if "-" in token:
            band = self._compound_band(token.split("-"), entry)
            if band is not None:
                return self.first_english + band
        return self.first_form + _FORM_ROWS[form_of(token)]

    def _compound_band(self, parts: list[str], entry: Callable[[str], int | None]) -> int | None:
        """The band of a hyphenated compound's ``parts``: its rarest part's, a number counting
        as the commonest band; None where a part is empty or unknown to English."""
        band = len(ENGLISH_BANDS)
        for part in parts:
            if not part:
                return None
            if (part[0].isdigit() or part[0] == ".") and number_shape(part) is not None:
                continue
            part_band = self._band(part, entry)
            if part_band is None:
                return None
            band = min(band, part_band)
        return band

    def name_of(self, row: int) -> str:
        """The class name of an id at or beyond the vocabulary's size."""
        return self.names[row - self.vocab_size]

    # -- the file ------------------------------------------------------------------------------

    def save(self, model_dir: str | os.PathLike[str]) -> None:
        """Write ``estimated_words.safetensors`` into ``model_dir``, atomically."""
        from safetensors.numpy import save

        from probsent.files.atomic_writes import atomic_path

        words = self._english_text.encode("utf-8")
        metadata = {"format": ESTIMATES_FORMAT, "version": "1", "vocab_size": str(self.vocab_size),
                    "classes": json.dumps(self.names), "fitted": json.dumps(self.fitted, sort_keys=True)}
        data = save({"scale": self.scale, "shift": self.shift, "english_bands": self.english_bands,
                     "english_words": np.frombuffer(words, dtype=np.uint8), "vocab_bands": self.vocab_bands},
                    metadata=metadata)
        with atomic_path(Path(model_dir) / ESTIMATES_FILE) as tmp:
            tmp.write_bytes(_metadata_sorted(data))

    @classmethod
    def load(cls, model_dir: str | os.PathLike[str], vocab_size: int, dim: int) -> "WordEstimates | None":
        """The table of ``model_dir``, None where it has none; a damaged table (or one for
        another vocabulary or dimension) is an InvalidValueError naming the file."""
        from probsent.files.untrusted import read_regular_file

        path = Path(model_dir) / ESTIMATES_FILE
        if not os.path.lexists(path):
            return None
        data = read_regular_file(path, MAX_ESTIMATES_BYTES, "estimated words table")
        return cls.from_bytes(data, path, vocab_size, dim)

    @classmethod
    def from_bytes(cls, data: bytes, path: Path, vocab_size: int, dim: int) -> "WordEstimates":
        """The table in ``data`` (the file's bytes; ``path`` names it in errors), checked."""
        from safetensors.numpy import load

        def damaged(reason: str) -> InvalidValueError:
            return InvalidValueError(f"{path}: damaged estimated words table ({reason}); remove it (words "
                                     f"without an entry then read as <unk>) and run probsent calibrate to write it again")

        try:
            tensors = load(data)
            metadata = _metadata(data)
        except Exception as exc:  # noqa: BLE001 - any parse failure of an untrusted file
            raise damaged(f"unreadable: {type(exc).__name__}") from None
        if metadata.get("format") != ESTIMATES_FORMAT or metadata.get("version") != "1":
            raise damaged("not a probsent estimated words table, version 1")
        expected = {"scale": (np.float32, 2), "shift": (np.float32, 2), "english_bands": (np.uint8, 1),
                    "english_words": (np.uint8, 1), "vocab_bands": (np.uint8, 1)}
        if set(tensors) != set(expected):
            raise damaged(f"tensors {sorted(tensors)}, expected {sorted(expected)}")
        for name, (dtype, ndim) in expected.items():
            if tensors[name].dtype != dtype or tensors[name].ndim != ndim:
                raise damaged(f"{name} is {tensors[name].dtype} with {tensors[name].ndim} dimensions")
        try:
            names = json.loads(metadata.get("classes", ""))
            fitted = json.loads(metadata.get("fitted", "{}"))
            stored_size = int(metadata.get("vocab_size", ""))
        except ValueError:
            raise damaged("unreadable metadata") from None
        if names != class_names():
            raise damaged("its classes are not this version's")
        if stored_size != vocab_size:
            raise InvalidValueError(f"{path}: fitted for a vocabulary of {stored_size:,} words, but the model has "
                                    f"{vocab_size:,}; remove it and run probsent calibrate to write it again")
        scale, shift = tensors["scale"], tensors["shift"]
        if scale.shape != (len(names), dim) or shift.shape != (len(names), dim):
            raise damaged(f"scale {scale.shape} and shift {shift.shape}, expected ({len(names)}, {dim})")
        if not (np.isfinite(scale).all() and np.isfinite(shift).all()) or (scale == 0).any():
            raise damaged("a scale or translation that is not a finite non-zero number")
        try:
            text = tensors["english_words"].tobytes().decode("utf-8")
        except UnicodeDecodeError:
            raise damaged("English words that are not UTF-8") from None
        words = text.split("\n") if text else []
        bands = tensors["english_bands"]
        if len(words) != len(bands) or (len(bands) and int(bands.max()) > len(ENGLISH_BANDS)):
            raise damaged(f"{len(words):,} English words and {len(bands):,} bands")
        vocab_bands = tensors["vocab_bands"]
        if vocab_bands.shape != (vocab_size,) or ((vocab_bands > len(ENGLISH_BANDS)) & (vocab_bands != NOT_ENGLISH)).any():
            raise damaged(f"{len(vocab_bands):,} vocabulary bands for {vocab_size:,} entries")
        return cls(scale, shift, words, bands, vocab_size, fitted, vocab_bands)


class _EnglishLookups:
    """A table's English words as dicts, made once per process from the table's one string:
    ``plain`` (word -> id) holds the words :meth:`WordEstimates.plain_english_ids` describes,
    ``other`` (word -> id) the rest (words with a letter beyond ASCII, in practice; with the
    plain ones, every English word of the table exactly once); ``vocab_bands``
    is each vocabulary entry's band as ``bytes`` (indexing it gives a Python int, without NumPy).
    Only str -> int dicts: containers the garbage collector does not track."""

    def __init__(self, estimates: WordEstimates) -> None:
        words = estimates.english_words
        # one int object per band, shared by every word of it (not one per word): what a lookup
        # returns is then always the same few objects, not a quarter of a million scattered ones
        band_ids = np.array([estimates.vocab_size + estimates.first_english + band
                             for band in range(len(ENGLISH_BANDS) + 1)], dtype=object)
        ids = band_ids[estimates.english_bands].tolist()
        self.plain = dict(zip(words, ids))  # all of them first (one dict built in C), then the others moved out
        self.other = {words[k]: ids[k] for k in _not_plain(estimates._english_text, len(words))}
        for word in self.other:
            del self.plain[word]
        self.vocab_bands = estimates.vocab_bands.tobytes()


def _not_plain(text: str, count: int) -> list[int]:
    """The positions, among the ``count`` words of ``text`` (one a line), of those that are not
    ASCII, are empty, or start with a digit or "." (from the UTF-8 bytes, with NumPy)."""
    if not count:
        return []
    blob = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    starts = np.concatenate(([0], np.flatnonzero(blob == 10) + 1))  # where each word begins
    first = np.append(blob, 10)[starts]  # its first byte (a line end where it is empty)
    number_like = ((first >= ord("0")) & (first <= ord("9"))) | (first == ord(".")) | (first == 10)
    beyond_ascii = np.searchsorted(starts, np.flatnonzero(blob >= 128), side="right") - 1
    return sorted(set(np.flatnonzero(number_like).tolist()) | set(beyond_ascii.tolist()))


def _metadata_sorted(data: bytes) -> bytes:
    """A safetensors file's bytes with its header's ``__metadata__`` keys in sorted order.
    safetensors writes them from a hash map, in an order that changes between processes; sorted,
    the same table gives the same bytes. The header keeps its length (the same characters
    reordered, padded with spaces as safetensors pads it), so the tensors' offsets stand."""
    length, header = _header(data)
    header["__metadata__"] = dict(sorted(header.get("__metadata__", {}).items()))
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    if len(text) > length:  # never: the same keys and values, reordered
        raise ValueError("safetensors header grew when its metadata was sorted")
    return data[:8] + text.ljust(length, b" ") + data[8 + length:]


def _header(data: bytes) -> tuple[int, Any]:
    """(its length, the parsed JSON) of a safetensors file's header."""
    length = int.from_bytes(data[:8], "little")
    return length, json.loads(data[8:8 + length].decode("utf-8"))


def _metadata(data: bytes) -> dict[str, str]:
    """The ``__metadata__`` of a safetensors file's bytes."""
    _, header = _header(data)
    metadata = header.get("__metadata__", {}) if isinstance(header, dict) else {}
    if not isinstance(metadata, dict):
        raise ValueError("metadata")
    return metadata


class EstimatingIndex(FoldingIndex):
    """token -> id like the vocabulary's :class:`FoldingIndex` (its entries exactly, then the
    folded form), and for a token with neither, ``len(vocabulary) + its class`` from the
    :class:`WordEstimates`: every token gets an id. Iteration, ``in`` and ``[]`` see the
    vocabulary's entries only."""

    resolves_every_token = True  # the compiled tokenizer sends unknown plain words here
    MEMO_LIMIT = 1 << 16  # tokens without an entry that :meth:`ids_of` remembers (then it starts again)

    def __init__(self, index: Mapping[str, int], estimates: WordEstimates) -> None:
        super().__init__(index)
        self.estimates = estimates
        self.vocab_size = estimates.vocab_size
        self._form_rows = {form: self.vocab_size + estimates.first_form + k for k, form in enumerate(FORMS)}
        self._entries = dict.get.__get__(self)  # the entries' own lookup, in C (no override, no fold)
        self._memo: dict[str, int] = {}  # ids_of's: the id get gave each token without an exact entry

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (dict(self), self.estimates))

    def ids_of(self, tokens: Sequence[str]) -> list[int]:
        """``[self.get(t, 0) for t in tokens]``, fast: an exact entry by ``dict.get`` in C (one
        call for all tokens); a token without one from the table's plain English words
        (:meth:`WordEstimates.plain_english_ids`, also in C), else by :meth:`_unlisted_id`."""
        found = list(map(self._entries, tokens))
        if None in found:
            positions = list(compress(range(len(found)), map(is_, found, repeat(None))))
            missing = list(map(tokens.__getitem__, positions))
            english = map(self.estimates.plain_english_ids().get, missing)
            unlisted = self._unlisted_id
            for k, token, known in zip(positions, missing, english):
                found[k] = known if known is not None else unlisted(token)
        return found

    def _unlisted_id(self, token: str) -> int:
        """:meth:`get`'s id of a token with no entry that is not one of the table's plain English
        words. An ASCII token without a hyphen that starts with neither a digit nor "." is then
        no number, no English word and no compound: it is read by its form at once. Any other
        comes from a memo of what :meth:`get` gave it before, else from :meth:`get`, remembered
        (up to MEMO_LIMIT tokens, then the memo starts again)."""
        if token.isascii() and token and "-" not in token and not (token[0].isdigit() or token[0] == "."):
            return self._form_rows[form_of(token)]
        memo = self._memo
        known = memo.get(token)
        if known is None:
            if len(memo) >= self.MEMO_LIMIT:
                memo = self._memo = {}
            known = memo[token] = self.get(token, 0)
        return known

    def get(self, token, default=None):  # type: ignore[override]
        found = dict.get(self, token)  # the usual case first
        if found is not None:
            return found
        if not isinstance(token, str) or not token:
            return default
        if not token.isascii():  # FoldingIndex.get's fallback, inline
            found = dict.get(self, fold(token))
            if found is not None:
                return found
        # a part of an ASCII token is ASCII: its entry is its exact one (no folded form), in C
        return self.vocab_size + self.estimates.class_of(token, self._entries if token.isascii() else self._entry)

    def kernel_forms(self) -> tuple[int, int]:
        """The ids :meth:`get` gives a word of ASCII letters, and of a letter then letters and
        digits, that neither the vocabulary nor English holds (the compiled kernel's shortcut)."""
        return self._form_rows["letters"], self._form_rows["letters and digits"]

    def missing_plain_word(self, word: str) -> int:
        """:meth:`get` of a plain word (ASCII letters, digits, hyphens) that neither the
        vocabulary nor the English words hold (the compiled tokenizer's table has both): without
        a hyphen its class is its number shape or its form, read without the lookups."""
        if "-" in word:
            return self.get(word, 0)
        shape = number_shape(word) if word[:1].isdigit() else None
        if shape is not None:
            return self.vocab_size + _SHAPE_ROWS[shape]
        return self._form_rows[form_of(word)]

    def _entry(self, word: str) -> int | None:
        return FoldingIndex.get(self, word)

    def table_words(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The English words without an entry for the compiled tokenizer's table, which then reads
        them without Python: (their UTF-8 bytes one after another, uint8; the starts of each and
        the end, int64; the id :meth:`get` gives each, int64), from the table's bytes in NumPy."""
        estimates = self.estimates
        blob = np.frombuffer(estimates._english_text.encode("utf-8"), dtype=np.uint8)
        breaks = np.flatnonzero(blob == 10)
        count = estimates.english_count
        starts = np.concatenate(([0], breaks + 1, [len(blob) + 1])) - np.arange(count + 1) if count else np.zeros(1, np.int64)
        ids = self.vocab_size + estimates.first_english + estimates.english_bands.astype(np.int64)
        return blob[blob != 10], starts.astype(np.int64), ids


def open_index(vocab: Vocabulary, estimates: WordEstimates | None) -> Mapping[str, int]:
    """The index every scoring path reads tokens with: the vocabulary's, and with ``estimates``
    an :class:`EstimatingIndex` over it."""
    return vocab.index if estimates is None else EstimatingIndex(vocab.index, estimates)
