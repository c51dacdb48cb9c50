"""WordNet 3.0's direct hypernym pairs, read from the standard database files (wndb(5WN)).

``data.noun`` and ``data.verb`` hold one synset a line::

    offset lex_filenum ss_type w_cnt (word lex_id){w_cnt} p_cnt (symbol offset pos source/target){p_cnt} ... | gloss

with ``w_cnt`` in hexadecimal and ``p_cnt`` in decimal; the licence header's lines start with two
spaces. A pointer ``@`` names a hypernym, ``@i`` an instance hypernym (Africa -> continent). A
*direct hypernym pair* is (a word of a synset, a word of one of its direct hypernyms): the first
word is the more specific one by WordNet's construction.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass

from probsent.errors import InvalidValueError
from reproduction.evaluation.datasets import DataDir

HYPERNYM_POINTERS = ("@", "@i")
PARTS_OF_SPEECH = ("noun", "verb")


@dataclass(frozen=True)
class HypernymPair:
    """One direct hypernym pair: ``specific`` is a word of ``synset``, ``general`` a word of a
    direct hypernym of it; ``half`` is "dev" or "test" (by the specific word's synset)."""

    specific: str
    general: str
    synset: str  # "n:00001930" -- part of speech and offset of the specific word's synset
    half: str


def synset_half(synset: str) -> str:
    """The half a synset belongs to ("dev" or "test"): the parity of the CRC-32 of its key, so
    that every pair of one synset falls in one half and the split never depends on reading order."""
    return "dev" if zlib.crc32(synset.encode("ascii")) % 2 == 0 else "test"


def _synset_lines(data: DataDir, pos: str) -> list[tuple[int, str]]:
    relative = f"wordnet/data.{pos}"
    return [(number, line) for number, line in enumerate(data.read_lines(relative), start=1)
            if line and not line.startswith("  ")]


def _parse(line: str, where: str) -> tuple[str, list[str], list[tuple[str, str]]]:
    """(key, words, [(pointer symbol, target key)]) of one synset line."""
    fields = line.split(" | ", 1)[0].split()
    try:
        offset, pos = fields[0], fields[2]
        word_count = int(fields[3], 16)
        words = [fields[4 + 2 * i] for i in range(word_count)]
        at = 4 + 2 * word_count
        pointer_count = int(fields[at])
        pointers = [(fields[at + 1 + 4 * i], f"{fields[at + 3 + 4 * i]}:{fields[at + 2 + 4 * i]}")
                    for i in range(pointer_count)]
    except (IndexError, ValueError):
        raise InvalidValueError(f"{where}: not a WordNet synset line") from None
    key_pos = "v" if pos == "v" else "n"  # 's' and 'a' do not occur in the noun and verb files
    return f"{key_pos}:{offset}", words, pointers


def _single_word(lemma: str) -> str | None:
    """The lowercased lemma if it is one word (WordNet joins a compound's words with '_')."""
    if "_" in lemma:
        return None
    return lemma.lower()


def single_word_lemmas(data: DataDir) -> set[str]:
    """Every single-word noun and verb lemma of WordNet (``index.noun``, ``index.verb``; first
    field of each line), lowercased."""
    found: set[str] = set()
    for pos in PARTS_OF_SPEECH:
        for line in data.read_lines(f"wordnet/index.{pos}"):
            if line and not line.startswith("  "):
                word = _single_word(line.split(" ", 1)[0])
                if word is not None:
                    found.add(word)
    return found


def hypernym_pairs(data: DataDir) -> list[HypernymPair]:
    """Every direct hypernym pair of single-word nouns and verbs, each (specific, general) word
    pair once (at its first synset in file order), a word never paired with itself."""
    synsets: dict[str, list[str]] = {}
    hypernyms: list[tuple[str, str]] = []
    for pos in PARTS_OF_SPEECH:
        for number, line in _synset_lines(data, pos):
            key, words, pointers = _parse(line, f"{data.root / f'wordnet/data.{pos}'}:{number}")
            synsets[key] = [word for word in map(_single_word, words) if word is not None]
            hypernyms.extend((key, target) for symbol, target in pointers if symbol in HYPERNYM_POINTERS)
    pairs: list[HypernymPair] = []
    seen: set[tuple[str, str]] = set()
    for key, target in hypernyms:
        half = synset_half(key)
        for specific in synsets[key]:
            for general in synsets.get(target, []):
                if specific != general and (specific, general) not in seen:
                    seen.add((specific, general))
                    pairs.append(HypernymPair(specific, general, key, half))
    return pairs
