"""The training mixture: source caps and filters, checked against hand-computed cases."""
from __future__ import annotations

import numpy as np
import pytest

from probsent import ProbsentError
from probsent.data.mapped_pairs import load_mapped_pairs
from probsent.data.mixture import apply_mixture, select_pairs, source_counts, word_overlap

LINES = [
    ("the cat sat", "the cat sat", "bible"),  # identical: overlap 1
    ("a dog ran", "the dog ran fast", "bible"),  # {a,dog,ran} vs {the,dog,ran,fast}: 2/5
    ("one", "two words", "bible"),  # shortest side 1 token, overlap 0
    ("sat the cat", "the cat sat", "bible"),  # reordered copy: overlap 1
    ("big red bus", "a red bus", "captions"),  # 2/4
    ("zebra zebra", "zebra", "captions"),  # repeated word counts once: 1/1
]


@pytest.fixture
def mapped(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("".join(f"{a}\t{b}\t{s}\n" for a, b, s in LINES))
    return load_mapped_pairs(path, cache_dir=tmp_path / "cache")


def test_sources_are_read(mapped) -> None:
    assert mapped.sources == ["bible", "captions"]
    assert mapped.pair_sources.tolist() == [0, 0, 0, 0, 1, 1]
    assert source_counts(mapped) == {"bible": 4, "captions": 2}


def test_word_overlap_by_hand(mapped) -> None:
    assert np.allclose(word_overlap(mapped), [1, 2 / 5, 0, 1, 2 / 4, 1])


def test_filters(mapped) -> None:
    assert select_pairs(mapped).tolist() == [0, 1, 2, 3, 4, 5]
    assert select_pairs(mapped, max_overlap=0.99).tolist() == [1, 2, 4]
    assert select_pairs(mapped, min_overlap=0.45).tolist() == [0, 3, 4, 5]
    assert select_pairs(mapped, min_overlap=0.45, max_overlap=0.99).tolist() == [4]
    assert select_pairs(mapped, min_tokens=2).tolist() == [0, 1, 3, 4]
    # four bible pairs capped at two: the first and the last, evenly spaced
    assert select_pairs(mapped, max_per_source=2).tolist() == [0, 3, 4, 5]
    assert select_pairs(mapped, max_per_source=1, max_overlap=0.99).tolist() == [1, 4]


def test_a_mixture_recounts_words(mapped) -> None:
    mixture = apply_mixture(mapped, source_caps="bible=1,captions=1", max_overlap=0.99)  # pairs 1 and 4
    assert mixture.pairs.tolist() == [1, 4] and mixture.num_pairs == 2
    # the mixture reads the mapped pairs' own arrays (nothing copied): its sentences by the words it recounted
    ids, offsets = mixture.sentences(np.arange(4), mixture.ranks)
    assert [[mixture.words[t] for t in ids[offsets[k]:offsets[k + 1]]] for k in range(4)] == \
        [["a", "dog", "ran"], ["the", "dog", "ran", "fast"], ["big", "red", "bus"], ["a", "red", "bus"]]
    assert mixture.mapped.tokens is mapped.tokens
    small = mixture.as_mapped_pairs()
    assert small.num_pairs == 2
    sentences = [[small.words[t] for t in small.tokens[small.offsets[k]:small.offsets[k + 1]]]
                 for k in range(4)]
    assert sentences == [["a", "dog", "ran"], ["the", "dog", "ran", "fast"],
                         ["big", "red", "bus"], ["a", "red", "bus"]]
    # a, bus, dog, ran, red twice (alphabetical among ties), then big, fast, the once
    assert small.words == ["a", "bus", "dog", "ran", "red", "big", "fast", "the"]
    assert small.counts.tolist() == [2, 2, 2, 2, 2, 1, 1, 1]
    assert small.pair_sources.tolist() == [0, 1]


def test_apply_mixture_reports_what_is_trained_on(mapped) -> None:
    mixed = apply_mixture(mapped, source_caps="*=1")
    assert mixed.report["mixture"]["pairs_per_source"] == {"bible": 1, "captions": 1}
    assert mixed.report["mixture"]["max_per_source"] == 1 and mixed.report["mixture"]["source_caps"] == {}
    unfiltered = apply_mixture(mapped)
    assert unfiltered.num_pairs == 6 and unfiltered.report["mixture"]["pairs"] == 6
    assert "mixture" not in mapped.report  # the input pairs are left as they were


def test_source_caps(mapped) -> None:
    assert select_pairs(mapped, source_caps={"bible": 0}).tolist() == [4, 5]
    assert select_pairs(mapped, max_per_source=1, source_caps={"captions": 2}).tolist() == [0, 4, 5]
    mixed = apply_mixture(mapped, source_caps="bible=2, captions=0")
    assert mixed.report["mixture"]["pairs_per_source"] == {"bible": 2}
    # *=N caps every source not named (the named caps win), as select_pairs' max_per_source
    assert apply_mixture(mapped, source_caps="captions=2,*=1").report["mixture"]["pairs_per_source"] == \
        {"bible": 1, "captions": 2}


@pytest.mark.parametrize("caps,fragment", [("bible", "not NAME=COUNT"), ("bible=x", "not NAME=COUNT"),
                                           ("koran=3", "no source named koran"),
                                           ("bible=0,captions=0", "keeps 0 pair")])
def test_bad_source_caps(mapped, caps, fragment) -> None:
    with pytest.raises(ProbsentError, match=fragment):
        apply_mixture(mapped, source_caps=caps)
