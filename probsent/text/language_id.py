"""Which language a sentence is written in: English, or which other language.

The model and its reference sentences are English, so a sentence in another language gets
no percentile or P(specific) (:mod:`probsent.readouts.withheld`, note "looks French"). The
identifier decides in two ways, by the letters' script first:

* **Latin, Cyrillic and Arabic letters: word frequencies.** Each word (letters, with
  apostrophes inside; folded by :func:`fold`) gets its Zipf frequency (log10 of uses per
  billion words) in each language of :data:`WORD_LIST_LANGUAGES`, from the shipped table
  ``language_words.tsv.gz`` (wordfreq's lists, words of Zipf >= :data:`MIN_ZIPF`, written by
  ``python -m reproduction.experiments.language_words``). A word not on a language's list counts as
  :data:`FLOOR` there, so a word that no list holds (a drug, a chemical, an identifier)
  weighs the same in every language and decides nothing; the common words decide. A
  sentence's total per language is the sum over its words (a naive Bayes log-likelihood
  in log10 units). Latin script: another language is named only when its total exceeds
  English's by more than :data:`MARGIN` (10^2 times likelier), so technical English, whose
  known words are English ones ("by", "the", "inhibits"), stays English. Cyrillic and Arabic
  script: the best of that script's languages.
* **Other scripts: the script names the language** (Greek, Hebrew, Hangul: Korean; kana:
  Japanese; Han without kana: Chinese; Devanagari: Hindi; Thai, Georgian, ...), from the
  script with most letters.

A text without letters is English (nothing to tell). :data:`MIN_ZIPF`, :data:`FLOOR` and
:data:`MARGIN` were chosen on the development half of ``reproduction/evaluation/data/language_sets.tsv``;
docs/EVALUATION.md shows the test half (``python -m reproduction.experiments.language_sets``).

For speed on a corpus, :func:`sentence_languages` first screens each sentence by its
vocabulary ids (one gather and two running sums, as coverage): a sentence with few words
unknown to the model whose known words lead English is English without reading its text
(:func:`english_screen`: 98.5 % of 100,000 English training sentences); only the rest are read
word by word. Run time needs the standard library and NumPy only (no wordfreq, no torch, no
network).
"""
from __future__ import annotations

import gzip
import math
import re
import threading
import unicodedata
import weakref
from bisect import bisect_right
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import numpy as np

from probsent.errors import ProbsentError

if TYPE_CHECKING:
    from probsent.text.token_ids import TokenIds
    from probsent.text.utf8_texts import Utf8Texts

__all__ = ["ENGLISH", "FIRST_NON_LATIN", "FLOOR", "LANGUAGES", "MARGIN", "MIN_ZIPF", "NAMES", "WORDS_FILE",
           "WORD_LIST_LANGUAGES", "WordTable", "english_screen", "fold", "is_one_word", "language_of",
           "sentence_languages", "word_table"]

WORDS_FILE = Path(__file__).with_name("language_words.tsv.gz")
MIN_ZIPF = 4.5  # the table keeps each language's words of at least this Zipf frequency
FLOOR = MIN_ZIPF - 0.5  # a word not on a language's list counts as this Zipf there
MARGIN = 2.0  # Latin script: another language needs a total this much above English's (log10 units)
ENGLISH = "en"

# Languages told apart by words, by script (wordfreq's codes; "sh": Serbo-Croatian in Latin letters)
_LATIN_LISTS = ("en", "fr", "de", "es", "it", "pt", "nl", "sv", "da", "nb", "fi", "pl", "cs", "sk", "sl", "sh",
                "hu", "ro", "tr", "id", "ms", "ca", "lv", "lt", "fil", "vi", "is")
_CYRILLIC_LISTS = ("ru", "uk", "bg", "mk")
_ARABIC_LISTS = ("ar", "fa", "ur")
WORD_LIST_LANGUAGES = _LATIN_LISTS + _CYRILLIC_LISTS + _ARABIC_LISTS

# Scripts by code point: (first, last, script); a script that is not a word-list script names its language
_SCRIPT_RANGES = sorted([
    (0x0041, 0x005A, "Latin"), (0x0061, 0x007A, "Latin"), (0x00C0, 0x024F, "Latin"), (0x1E00, 0x1EFF, "Latin"),
    (0x0370, 0x03FF, "el"), (0x1F00, 0x1FFF, "el"), (0x0400, 0x052F, "Cyrillic"), (0x0530, 0x058F, "hy"),
    (0x0590, 0x05FF, "he"), (0x0600, 0x06FF, "Arabic"), (0x0750, 0x077F, "Arabic"), (0xFB50, 0xFDFF, "Arabic"),
    (0xFE70, 0xFEFF, "Arabic"), (0x0900, 0x097F, "hi"), (0x0980, 0x09FF, "bn"), (0x0A00, 0x0A7F, "pa"),
    (0x0A80, 0x0AFF, "gu"), (0x0B80, 0x0BFF, "ta"), (0x0C00, 0x0C7F, "te"), (0x0C80, 0x0CFF, "kn"),
    (0x0D00, 0x0D7F, "ml"), (0x0D80, 0x0DFF, "si"), (0x0E00, 0x0E7F, "th"), (0x0E80, 0x0EFF, "lo"),
    (0x0F00, 0x0FFF, "bo"), (0x1000, 0x109F, "my"), (0x10A0, 0x10FF, "ka"), (0x1100, 0x11FF, "ko"),
    (0x1200, 0x137F, "am"), (0x1780, 0x17FF, "km"), (0x3040, 0x30FF, "ja"), (0x3130, 0x318F, "ko"),
    (0x3400, 0x4DBF, "Han"), (0x4E00, 0x9FFF, "Han"), (0xAC00, 0xD7AF, "ko"), (0xF900, 0xFAFF, "Han"),
])
_RANGE_STARTS = [first for first, _, _ in _SCRIPT_RANGES]
_SCRIPT_ONLY = ("el", "hy", "he", "hi", "bn", "pa", "gu", "ta", "te", "kn", "ml", "si", "th", "lo", "bo", "my", "ka",
                "ko", "am", "km", "ja", "zh")
LANGUAGES = WORD_LIST_LANGUAGES + _SCRIPT_ONLY  # a sentence's language is an index into this; 0: English
_NUMBER = {code: i for i, code in enumerate(LANGUAGES)}
FIRST_NON_LATIN = len(_LATIN_LISTS)  # LANGUAGES from here on are written in other scripts than Latin
NAMES = {
    "en": "English", "fr": "French", "de": "German", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
    "nl": "Dutch", "sv": "Swedish", "da": "Danish", "nb": "Norwegian", "fi": "Finnish", "pl": "Polish",
    "cs": "Czech", "sk": "Slovak", "sl": "Slovenian", "sh": "Serbo-Croatian", "hu": "Hungarian",
    "ro": "Romanian", "tr": "Turkish", "id": "Indonesian", "ms": "Malay", "ca": "Catalan", "lv": "Latvian",
    "lt": "Lithuanian", "fil": "Filipino", "vi": "Vietnamese", "is": "Icelandic", "ru": "Russian",
    "uk": "Ukrainian", "bg": "Bulgarian", "mk": "Macedonian", "ar": "Arabic", "fa": "Persian", "ur": "Urdu",
    "el": "Greek", "hy": "Armenian", "he": "Hebrew", "hi": "Hindi", "bn": "Bengali", "pa": "Punjabi",
    "gu": "Gujarati", "ta": "Tamil", "te": "Telugu", "kn": "Kannada", "ml": "Malayalam", "si": "Sinhala",
    "th": "Thai", "lo": "Lao", "bo": "Tibetan", "my": "Burmese", "ka": "Georgian", "ko": "Korean",
    "am": "Amharic", "km": "Khmer", "ja": "Japanese", "zh": "Chinese",
}
_BY_SCRIPT = {"Latin": _LATIN_LISTS, "Cyrillic": _CYRILLIC_LISTS, "Arabic": _ARABIC_LISTS}

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")
_LETTER = re.compile(r"[^\W\d_]")


def fold(text: str) -> str:
    """Text as the identifier reads it: NFC, a right single quote as an apostrophe, casefolded
    (so "Straße" is "strasse", as in wordfreq's lists)."""
    return unicodedata.normalize("NFC", text.replace("\u2019", "'")).casefold()


def is_one_word(word: str) -> bool:
    """Whether the identifier reads ``word`` (folded) as one word: letters, apostrophes inside."""
    return _WORD.fullmatch(word) is not None


def word_table_lines(frequencies: Callable[[str], Mapping[str, float]]) -> list[str]:
    """The lines of :data:`WORDS_FILE` (its header aside) from word frequency lists (wordfreq's
    ``get_frequency_dict``: word -> share of uses): for each language of :data:`WORD_LIST_LANGUAGES`,
    the words of ``frequencies(language)`` folded as the identifier reads them (:func:`fold`), one
    word to it (:func:`is_one_word`) and of Zipf (log10 of uses per billion words, in tenths,
    rounded down) at least :data:`MIN_ZIPF`; a word folded from several keeps the highest. One
    line per Zipf, highest first: ``language<TAB>tenths<TAB>words sorted, space-separated``."""
    lines = []
    for language in WORD_LIST_LANGUAGES:
        by_tenths: dict[str, int] = {}
        for word, frequency in frequencies(language).items():
            tenths = math.floor((math.log10(frequency) + 9) * 10 + 1e-9)
            word = fold(word)
            if tenths >= MIN_ZIPF * 10 and is_one_word(word):
                by_tenths[word] = max(by_tenths.get(word, 0), tenths)
        groups: dict[int, list[str]] = {}
        for word, tenths in by_tenths.items():
            groups.setdefault(tenths, []).append(word)
        lines += [f"{language}\t{tenths}\t{' '.join(sorted(groups[tenths]))}" for tenths in sorted(groups, reverse=True)]
    return lines


def _script_of(letter: str) -> str:
    """The script of one letter: "Latin", "Cyrillic", "Arabic", "Han", a script-only language
    code, or "" for a letter of a script not listed."""
    point = ord(letter)
    at = bisect_right(_RANGE_STARTS, point) - 1
    if at >= 0 and point <= _SCRIPT_RANGES[at][1]:
        return _SCRIPT_RANGES[at][2]
    return ""


class WordTable:
    """The shipped word table: each word's Zipf frequency per :data:`WORD_LIST_LANGUAGES`
    language (:data:`FLOOR` where the language's list lacks it)."""

    def __init__(self, index: dict[str, int], zipf: np.ndarray) -> None:
        self.index = index  # word -> row of zipf
        self.zipf = zipf  # float32, (words, len(WORD_LIST_LANGUAGES))
        self._columns = {script: np.array([WORD_LIST_LANGUAGES.index(c) for c in codes])
                         for script, codes in _BY_SCRIPT.items()}
        others = np.max(zipf[:, 1:], axis=1) if len(zipf) else np.zeros(0, np.float32)
        # the most one word can add to another language's lead over English
        self.most_against_english = float(max(np.max(others - zipf[:, 0], initial=0.0), 0.0))

    @classmethod
    def read(cls, path: Path = WORDS_FILE) -> "WordTable":
        """The table in ``path`` (:data:`WORDS_FILE`); a one-line :class:`ProbsentError` naming
        the file and line if it is damaged."""
        column = {code: i for i, code in enumerate(WORD_LIST_LANGUAGES)}
        words: list[str] = []
        lines_column: list[int] = []
        lines_zipf: list[float] = []
        lines_count: list[int] = []
        try:
            with gzip.open(path, "rt", encoding="utf-8") as lines:
                for number, line in enumerate(lines, 1):
                    if line.startswith("#") or not line.strip():
                        continue
                    parts = line.rstrip("\n").split("\t")
                    if len(parts) != 3 or parts[0] not in column or not parts[1].isdigit():
                        raise ProbsentError(f"{path}, line {number}: not 'language<TAB>zipf tenths<TAB>words'")
                    these = parts[2].split(" ")
                    words.extend(these)
                    lines_column.append(column[parts[0]])
                    lines_zipf.append(int(parts[1]) / 10)
                    lines_count.append(len(these))
        except (OSError, EOFError, UnicodeDecodeError, gzip.BadGzipFile) as exc:
            raise ProbsentError(f"{path}: cannot read the language word table ({exc})") from None
        unique, rows = np.unique(np.array(words, dtype=str), return_inverse=True)
        zipf_table = np.full((len(unique), len(WORD_LIST_LANGUAGES)), FLOOR, dtype=np.float32)
        np.maximum.at(zipf_table, (rows.ravel(), np.repeat(lines_column, lines_count)),
                      np.repeat(np.array(lines_zipf, dtype=np.float32), lines_count))
        return cls(dict(zip(unique.tolist(), range(len(unique)))), zipf_table)

    def rows(self, text: str) -> list[int]:
        """The table rows of ``text``'s words (folded); a word with an apostrophe that the
        table lacks is read as its parts ("l'année": "l", "année")."""
        index = self.index
        found = []
        for word in _WORD.findall(fold(text)):
            row = index.get(word)
            if row is not None:
                found.append(row)
            elif "'" in word:
                found.extend(index[part] for part in word.split("'") if part in index)
        return found

    def language(self, text: str) -> str:
        """``text``'s language code (:data:`LANGUAGES`): by script, then by words (see the module)."""
        return self.languages([text])[0]

    def languages(self, texts: Sequence[str]) -> list[str]:
        """:meth:`language` of each text, the word totals of all summed in one NumPy pass."""
        found = [""] * len(texts)
        by_words: list[int] = []  # the texts that words decide
        rows: list[int] = []
        ends: list[int] = []
        scripts: list[str] = []
        for i, text in enumerate(texts):
            script = _dominant_script(text)
            if script == "Han":
                found[i] = "ja" if any(_script_of(c) == "ja" for c in text if not c.isascii()) else "zh"
            elif script not in _BY_SCRIPT:
                found[i] = script or ENGLISH  # no letters, or a script not listed: nothing to tell
            else:
                rows.extend(self.rows(text))
                by_words.append(i)
                scripts.append(script)
                ends.append(len(rows))
        if by_words:
            cumulative = np.zeros((len(rows) + 1, self.zipf.shape[1]))
            np.cumsum(self.zipf[np.array(rows, dtype=np.int64)], axis=0, out=cumulative[1:])
            bounds = np.array([0] + ends)
            totals = cumulative[bounds[1:]] - cumulative[bounds[:-1]]
            for i, script, total, words in zip(by_words, scripts, totals, np.diff(bounds)):
                found[i] = self._by_totals(script, total, int(words))
        return found

    def _by_totals(self, script: str, totals: np.ndarray, words: int) -> str:
        """The language of a text of ``script`` whose ``words`` table words total ``totals``."""
        columns = self._columns[script]
        if not words:
            return ENGLISH if script == "Latin" else WORD_LIST_LANGUAGES[columns[0]]
        totals = totals[columns]
        if script != "Latin":
            return WORD_LIST_LANGUAGES[columns[int(np.argmax(totals))]]
        best = int(np.argmax(totals[1:])) + 1  # column 0 of the Latin languages is English
        return WORD_LIST_LANGUAGES[columns[best]] if totals[best] - totals[0] > MARGIN else ENGLISH

    def english_lead(self, vocabulary: Mapping[str, int]) -> np.ndarray:
        """float64 per vocabulary id: how far the entry's word leads English over the Latin-script
        language it leads least (Zipf; negative where some language is likelier; 0 where no
        list holds the word, for id 0, the unknown word, and in the one entry past the
        vocabulary's ids, where :func:`english_screen` reads any id beyond them)."""
        lead = np.zeros(max(vocabulary.values(), default=0) + 2)  # the last: any id beyond the vocabulary
        latin = self._columns["Latin"]
        least = self.zipf[:, latin[0]] - np.max(self.zipf[:, latin[1:]], axis=1)
        for word, i in vocabulary.items():
            if i:
                row = self.index.get(word.lower() if word.isascii() else fold(word))
                if row is not None:
                    lead[i] = least[row]
        return lead


def _dominant_script(text: str) -> str:
    """The script (as :func:`_script_of`) of most of ``text``'s letters; "" without letters.
    ASCII letters are counted at once, others one by one."""
    if text.isascii():
        return "Latin" if _LETTER.search(text) else ""
    counts: dict[str, int] = {}
    for letter in _LETTER.findall(text):
        script = "Latin" if letter.isascii() else _script_of(letter)
        counts[script] = counts.get(script, 0) + 1
    if not counts:
        return ""
    return max(counts, key=lambda s: (counts[s], s == "Latin"))  # a tie goes to Latin


_TABLE: WordTable | None = None
_TABLE_LOCK = threading.Lock()
_LEADS: "weakref.WeakKeyDictionary[TokenIds, np.ndarray]" = weakref.WeakKeyDictionary()


def word_table() -> WordTable:
    """The shipped :class:`WordTable`, read once on first use (a few tenths of a second)."""
    global _TABLE
    with _TABLE_LOCK:
        if _TABLE is None:
            _TABLE = WordTable.read()
        return _TABLE


def language_of(text: str) -> str:
    """``text``'s language code ("en", "fr", ...; :data:`NAMES` names it).

    Examples
    --------
    >>> [language_of(s) for s in ["Le président a annoncé une réforme des retraites mardi.",
    ...                           "Aspirin irreversibly inhibits cyclooxygenase-1 by acetylating serine 530."]]
    ['fr', 'en']
    """
    return word_table().language(text)


def english_screen(token_ids: "TokenIds", ids: np.ndarray, offsets: np.ndarray, counted: np.ndarray,
                   known: np.ndarray) -> np.ndarray:
    """Whether each sentence is English by its vocabulary ids alone, without reading its text:
    at most a third of its ``counted`` tokens are unknown to the model (``counted`` and
    ``known``: :func:`probsent.text.token_ids.coverage_counts`), and the sum of its known words' :meth:`WordTable.english_lead`
    is at least ``-MARGIN``. The sum bounds from below English's lead over every Latin-script
    language on those words (a sum of minima is at most the minimum of the sums), so another
    language could lead only by the unknown words, which are few. A sentence in another
    language has most of its words unknown to an English model (the sets: 0 of 90 pass);
    98.5 % of 100,000 English training sentences pass (benchmarks/bench_language.py)."""
    table = word_table()
    with _TABLE_LOCK:
        lead = _LEADS.get(token_ids)
        if lead is None:
            lead = _LEADS[token_ids] = table.english_lead(token_ids.index)
    ids = np.asarray(ids, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    running = np.zeros(len(ids) + 1)
    np.cumsum(lead[np.minimum(ids, len(lead) - 1)], out=running[1:])  # an id past the vocabulary: no lead
    counted, known = np.asarray(counted), np.asarray(known)
    return (running[offsets[1:]] - running[offsets[:-1]] >= -MARGIN) & (3 * (counted - known) <= counted)


def sentence_languages(token_ids: "TokenIds", ids: np.ndarray, offsets: np.ndarray, counted: np.ndarray,
                       known: np.ndarray, sentences: Sequence[str | None] | "Utf8Texts") -> np.ndarray:
    """Each sentence's language as an index into :data:`LANGUAGES` (int16; 0: English), from its
    token ids and offsets (``token_ids(sentences)``) and coverage counts: :func:`english_screen`
    first, then :meth:`WordTable.languages` on the text of those it does not pass. None and
    blank are English."""
    out = np.zeros(len(offsets) - 1, dtype=np.int16)
    unsure = np.flatnonzero(~english_screen(token_ids, ids, offsets, counted, known) & (np.diff(offsets) > 0))
    texts = [(i, sentences[i]) for i in unsure.tolist()]
    texts = [(i, text) for i, text in texts if isinstance(text, str)]
    if texts:
        for (i, _), code in zip(texts, word_table().languages([text for _, text in texts])):
            out[i] = _NUMBER[code]
    return out
