"""When a sentence's percentile and P(specific) are withheld, and why.

The score (minus the entropy) is always given: it is the model's reading, whatever the text.
The percentile for the sentence's length and P(specific) compare that score with *sentences*
of the reference sample and of the news labels, and four kinds of text are not what those
hold. For them both numbers are NaN and :func:`notes` says why, so that no such text is called
the most specific there is:

``looks French`` (or German, Spanish, ...: a language of :data:`probsent.text.language_id.NAMES`)
    the language identifier (:mod:`probsent.text.language_id`) reads a sentence (in Latin
    letters, of at least ``MIN_WORDS`` words) as another language than English: the model
    and its reference sentences are English, and a French sentence's words are read as the English entries they
    happen to share (or as unknown words), so its score reads nothing about how specific it
    is. Technical English (drug names, code, chemical names) is English to the identifier:
    the words no language's list holds decide nothing, its English words decide. An English
    sentence made mostly of a foreign title or quote is called that language ("La La Land
    won six Oscars.": French; "Ich bin ein Berliner, said Kennedy in 1963.": German).
``low coverage``
    fewer than ``LOW_COVERAGE`` (half) of its words have an entry of their own (a URL, emoji,
    code, a language the identifier does not name): a word without an entry reads as its open
    vocabulary class's estimated term (a guess from its English frequency, number shape or form)
    or, without that table, as the shared ``<unk>`` term, which the model learnt from rare
    training words; a text read mostly by guesses says little about how specific it is. The rule
    counts the model's own entries (``model_coverage``), not ``coverage``, which counts English too.
``repetition``
    at least ``MAX_REPEATED`` (half) of its token trigrams repeat an earlier trigram of the
    same text (one sentence said six times), or at least half of its tokens repeat the token
    just before them ("yes yes yes", "the the the ..."): each word adds its term again however
    often it is said, so a repetition scores as a long, specific sentence, which it is not.
    Ordinary sentences repeat almost no trigram (words like "the" repeat, trigrams seldom) and
    seldom a word twice in a row ("very very" is a third of "very very good"); the check reads
    vocabulary entries, so unknown words count as one.
``too short``
    fewer than ``MIN_WORDS`` (three) words (tokens with a letter or digit, or unknown): the
    score of one or two words is how rare those words were in the training text ("lol ok":
    both rare there), not how specific a sentence is.

A text without tokens (blank) has no score at all: its note is ``no tokens``. What the rules
do not catch: a sentence of three or more words that are common in chat but rare in the
training text (Bible verses, captions, news) still reads as specific ("lol ok thanks"), because
the score reads how rare its words were there; the model card and docs/USE_WITH.md say so. The rules read
the text only (its tokens and which have an entry), never a model's weights, so they hold for
any model. Every number here is documented in docs/RELIABILITY.md and tested in
tests/test_degenerate_inputs.py.
"""
from __future__ import annotations

import numpy as np

from typing import TYPE_CHECKING, Sequence

from probsent.text.language_id import FIRST_NON_LATIN, LANGUAGES, NAMES, sentence_languages
from probsent.text.token_ids import LOW_COVERAGE, coverage_counts
from probsent.text.utf8_texts import Utf8Texts

if TYPE_CHECKING:
    from probsent.readouts.percentiles import PercentileTable
    from probsent.text.token_ids import TokenIds

__all__ = ["EXPLAINED", "LOW_COVERAGE", "MAX_REPEATED", "MIN_WORDS", "NOTES", "READ", "language_note", "notes",
           "percentiles_read", "repeated_trigram_share", "stutter_share", "withheld", "withheld_codes", "withholding"]

MIN_WORDS = 3  # fewer words than this: "too short"
MAX_REPEATED = 0.5  # at least this share of a text's trigrams repeating an earlier one: "repetition"

READ = ""  # the note of a sentence whose percentile and P(specific) are given
_RULES = (READ, "no tokens", "low coverage", "repetition", "too short")


def language_note(code: str) -> str:
    """The note of a sentence in language ``code`` (not English): "looks French"."""
    return f"looks {NAMES[code]}"


# indexed by withheld_codes: the rules', then one per language other than English (LANGUAGES[1:])
NOTES = _RULES + tuple(language_note(code) for code in LANGUAGES[1:])
assert len(NOTES) <= 128  # the codes are int8
EXPLAINED = {"no tokens": "no words", "low coverage": "fewer than half its words are in the model's vocabulary",
             "repetition": "mostly the same words said again", "too short": f"fewer than {MIN_WORDS} words",
             **{language_note(code): f"its words read as {NAMES[code]}; the model and its reference sentences "
                                     f"are English" for code in LANGUAGES[1:]}}

# odd 64-bit multipliers that mix a trigram's three ids into one hash, of which the top _HASH_BITS are kept
_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9))
_HASH_BITS = 40
_SENTENCES_PER_SORT = 1 << (64 - _HASH_BITS - 1)  # the sentence's number fits the key's high bits


def repeated_trigram_share(ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each sentence's share of token trigrams that equal an earlier trigram of the same
    sentence (0 for a sentence of fewer than three tokens), from the flat ids and offsets of
    :class:`probsent.text.token_ids.TokenIds`; one sort, no loop over sentences.

    Each trigram is a 64-bit key: its sentence's number in the high bits, a 40-bit hash of its
    three ids below (two different trigrams of one sentence share a hash with odds of 2^-40 a
    pair), so that equal keys are equal trigrams of one sentence; a batch of more than 2^23
    sentences is taken in parts."""
    ids = np.asarray(ids, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    counts = np.diff(offsets)
    trigrams = np.maximum(counts - 2, 0)
    repeated = np.zeros(len(counts))
    word = ids.astype(np.uint64)
    for first in range(0, len(counts), _SENTENCES_PER_SORT):
        part = slice(first, first + _SENTENCES_PER_SORT)
        per = trigrams[part]
        if not per.any():
            continue
        owner = np.repeat(np.arange(len(per), dtype=np.uint64), per)
        starts = np.repeat(offsets[part.start:part.start + len(per)], per) + (
            np.arange(int(per.sum())) - np.repeat(np.cumsum(per) - per, per))
        with np.errstate(over="ignore"):
            mixed = word[starts] * _MIX[0] ^ word[starts + 1] * _MIX[1] ^ word[starts + 2] * _MIX[2]
        keys = np.sort((owner << np.uint64(_HASH_BITS)) | (mixed >> np.uint64(64 - _HASH_BITS)))
        same = keys[1:] == keys[:-1]
        repeated[part] = np.bincount((keys[1:][same] >> np.uint64(_HASH_BITS)).astype(np.int64), minlength=len(per))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(trigrams > 0, repeated / np.maximum(trigrams, 1), 0.0)


def stutter_share(ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each sentence's share of tokens equal to the token just before them (0 without tokens)."""
    ids = np.asarray(ids, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    counts = np.diff(offsets)
    same = np.zeros(len(ids) + 1, dtype=np.int64)
    same[2:] = np.cumsum(ids[1:] == ids[:-1])  # same[k]: repeats among positions 1..k-1
    # a sentence's own repeats: positions start+1 .. end-1 (its first token repeats nothing before it)
    inside = same[offsets[1:]] - same[np.minimum(offsets[:-1] + 1, offsets[1:])]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, inside / np.maximum(counts, 1), 0.0)


def withholding(tokens: np.ndarray, counted: np.ndarray, coverage: np.ndarray, repeated: np.ndarray,
                languages: np.ndarray) -> np.ndarray:
    """The withholding decision: each sentence's index into :data:`NOTES` (0: read), the
    first rule that applies in this order: no tokens; another language (``languages``, an
    index into :data:`probsent.text.language_id.LANGUAGES`, 0 English; in Latin letters only
    for a sentence of at least ``MIN_WORDS`` counted words, as a word or two tell little,
    while another script tells at once, and Chinese or Japanese has few tokens without
    spaces); low coverage (``coverage`` below ``LOW_COVERAGE``); repetition (``repeated`` at
    least ``MAX_REPEATED``); too short (``counted`` below ``MIN_WORDS``). All arguments
    are per sentence: ``tokens`` its tokens, ``counted`` the words coverage counts,
    ``coverage`` the share of them known, ``repeated`` :func:`repeated_trigram_share` or
    :func:`stutter_share`, whichever is larger."""
    tokens, counted, languages = np.asarray(tokens), np.asarray(counted), np.asarray(languages, dtype=np.int64)
    language_codes = np.where(languages > 0, len(_RULES) - 1 + languages, 0)  # "looks ...", by language
    rules = ((tokens == 0, NOTES.index("no tokens")),
             ((languages > 0) & ((counted >= MIN_WORDS) | (languages >= FIRST_NON_LATIN)), language_codes),
             (np.asarray(coverage) < LOW_COVERAGE, NOTES.index("low coverage")),
             (np.asarray(repeated) >= MAX_REPEATED, NOTES.index("repetition")),
             (counted < MIN_WORDS, NOTES.index("too short")))
    out = np.zeros(len(tokens), dtype=np.int8)
    for applies, code in reversed(rules):  # the first rule that applies is written last
        out[applies] = code[applies] if isinstance(code, np.ndarray) else code
    return out


def withheld_codes(ids: np.ndarray, offsets: np.ndarray, codes: np.ndarray,
                   languages: np.ndarray | None = None,
                   counts: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Each sentence's index into :data:`NOTES` (0: read) by :func:`withholding`, from its token
    ids and offsets, the model's coverage codes (:func:`probsent.text.token_ids.coverage_codes`),
    the sentences' languages (:func:`probsent.text.language_id.sentence_languages`; None: all
    English) and, if already counted, :func:`probsent.text.token_ids.coverage_counts`."""
    counted, known = counts if counts is not None else coverage_counts(ids, offsets, codes)
    tokens = np.diff(np.asarray(offsets, dtype=np.int64))
    with np.errstate(invalid="ignore", divide="ignore"):
        coverage = np.where(counted > 0, known / np.maximum(counted, 1), 1.0)
    repeated = np.maximum(repeated_trigram_share(ids, offsets), stutter_share(ids, offsets))
    if languages is None:
        languages = np.zeros(len(tokens), dtype=np.int16)
    return withholding(tokens, counted, coverage, repeated, languages)


def notes(codes: np.ndarray) -> list[str]:
    """The notes of :func:`withheld_codes` as strings ("" where the numbers are given)."""
    return [NOTES[c] for c in np.asarray(codes).tolist()]


def withheld(token_ids: "TokenIds", sentences: Sequence[str | None] | Utf8Texts) -> tuple[np.ndarray, np.ndarray]:
    """(:func:`withheld_codes`, token counts) of sentences (None: no tokens), from one tokenization."""
    if not isinstance(sentences, Utf8Texts):
        sentences = [s if isinstance(s, str) else "" for s in sentences]
    ids, offsets = token_ids(sentences)
    counts = coverage_counts(ids, offsets, token_ids.coverage_codes)
    languages = sentence_languages(token_ids, ids, offsets, *counts, sentences)
    return withheld_codes(ids, offsets, token_ids.coverage_codes, languages, counts), np.diff(offsets)


def percentiles_read(table: "PercentileTable", token_ids: "TokenIds", scores: np.ndarray,
                     sentences: Sequence[str | None] | Utf8Texts) -> np.ndarray:
    """The percentile for their length of sentences already scored, NaN where withheld."""
    codes, counts = withheld(token_ids, sentences)
    out = table.percentile(scores, counts)
    out[codes != 0] = np.nan
    return out
