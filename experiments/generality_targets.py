"""The word targets of the generality rounds (``--rarity-from FILE``) and the word halves they keep apart.

The target files, each ``word<TAB>log frequency`` for the shipped model's vocabulary words:

- **wordfreq** (``english-log-frequencies.tsv``): log(p_wordfreq(w) x N), p from wordfreq's English
  frequencies and N the training mixture's token count, so that the values sit on the scale of
  the log training counts they replace; words wordfreq gives no frequency (punctuation, tokens it
  does not know) are not listed and keep their training counts.
- **none** (``no-words.tsv``): no word listed, so that only ``<unk>`` moves (the option's own part);
- **correction** (``generality-correction-<weight>.tsv``, round G2): for WordNet's single-word noun
  and verb lemmas only (the words the generality score was fitted on the kind of), the log training
  count plus ``weight`` x (generality - English log frequency): the mixture's rarity kept, and the part
  of generality that frequency does not say added; other words keep their training counts;
- **generality** (``generality-log-frequencies.tsv``): a linear score s(w) = v . [GloVe(w), zipf(w)]
  fitted (logistic loss, L2) so that s(specific) > s(general) on the WordNet hypernym pairs of the
  benchmark's *development* half whose two words are both in the *anchor half* of the words
  (:data:`ANCHOR_HALF`); the other half of the words is never seen, and the rounds judge generality
  on pairs of those words only. s is mapped onto the log-frequency scale (minus s, then the mean and
  sd of the wordfreq values over the same words, weighted by training counts); a word without a
  GloVe vector keeps its wordfreq value (or its training count).

    python -m experiments.generality_targets  # writes them all into results/generality/
"""
from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import numpy as np

from experiments.paths import GENERALITY_TARGETS_DIR as TARGETS_DIR, SHIPPED

WORDFREQ_TARGETS = TARGETS_DIR / "english-log-frequencies.tsv"
GENERALITY_TARGETS = TARGETS_DIR / "generality-log-frequencies.tsv"
FIT_RECORD = TARGETS_DIR / "fit.json"  # what the generality fit saw and how it ranks unseen words' pairs
EMPTY_TARGETS = TARGETS_DIR / "no-words.tsv"  # lists no word (round G1: only <unk> moved then)
CORRECTION_WEIGHTS = (0.25, 0.5)  # round G2's lists: the training count's log plus this much of (generality - English)


def correction_targets(weight: float) -> Path:
    """Round G2's list with the generality correction at ``weight``."""
    return TARGETS_DIR / f"generality-correction-{weight:g}.tsv"
GLOVE = "glove/glove.6B.50d.txt.gz"
ANCHOR_HALF = 0  # a word w is in the anchor half when crc32(w) % 2 == ANCHOR_HALF
L2 = 1e-4  # the score's L2 weight (fixed before any fit; the diagnostic's 1e-2 x 0.01)


def word_half(word: str) -> int:
    """0 or 1: which half of the words ``word`` is in (the CRC-32 of its UTF-8 bytes, mod 2)."""
    return zlib.crc32(word.encode("utf-8")) % 2


def held_out(word: str) -> bool:
    """Whether no target was fitted on ``word`` (it is outside the anchor half)."""
    return word_half(word) != ANCHOR_HALF


def glove_vectors(data_root: Path, wanted: set[str]) -> dict[str, np.ndarray]:
    """The GloVe 6B 50d vectors of the ``wanted`` words it has."""
    found: dict[str, np.ndarray] = {}
    with gzip.open(data_root / GLOVE, "rt", encoding="utf-8") as handle:
        for line in handle:
            word, _, rest = line.partition(" ")
            if word in wanted:
                found[word] = np.array(rest.split(), dtype=np.float64)
    return found


def fit_generality_score(pairs: list, features: dict[str, np.ndarray]) -> np.ndarray:
    """v minimizing mean log(1 + exp(-v . (f(specific) - f(general)))) + L2 |v|^2 over ``pairs``."""
    from scipy.optimize import minimize

    differences = np.stack([features[p.specific] - features[p.general] for p in pairs])

    def loss(v: np.ndarray) -> tuple[float, np.ndarray]:
        margin = differences @ v
        gradient = -(differences.T @ (1.0 / (1.0 + np.exp(margin)))) / len(differences) + 2 * L2 * v
        return float(np.mean(np.logaddexp(0.0, -margin)) + L2 * v @ v), gradient

    return minimize(loss, np.zeros(differences.shape[1]), jac=True, method="L-BFGS-B").x


def build(data_root: Path) -> dict[str, object]:
    """Write the target files; returns what the fit saw (pairs, words, held-out shares)."""
    import wordfreq

    import probsent
    from probsent.data.corpus import load_corpus
    from probsent.evaluation.datasets import DataDir
    from probsent.evaluation.generality import share_right
    from probsent.evaluation.wordnet import hypernym_pairs, single_word_lemmas
    from experiments.plan import PAIRS

    words = probsent.load(SHIPPED).vocab.words[1:]
    corpus = load_corpus(Path(__file__).resolve().parents[1] / PAIRS, progress=False)
    counts = dict(zip(corpus.words, corpus.counts.tolist()))
    tokens = float(corpus.counts.sum())
    english = {w: float(np.log(wordfreq.word_frequency(w, "en") * tokens)) for w in words
               if wordfreq.word_frequency(w, "en") > 0}
    all_pairs = hypernym_pairs(DataDir(data_root))
    vectors = glove_vectors(data_root, set(words) | {w for p in all_pairs for w in (p.specific, p.general)})
    features = {w: np.concatenate([v, [wordfreq.zipf_frequency(w, "en")]]) for w, v in vectors.items()}
    fit_on = [p for p in all_pairs if p.half == "dev" and p.specific in features and p.general in features
              and not held_out(p.specific) and not held_out(p.general)]
    v = fit_generality_score(fit_on, features)
    judged = [p for p in all_pairs if p.half == "dev" and p.specific in features and p.general in features
              and held_out(p.specific) and held_out(p.general)]
    score_s = np.array([features[p.specific] @ v for p in judged])
    score_g = np.array([features[p.general] @ v for p in judged])
    rarer = np.array([wordfreq.word_frequency(p.general, "en") < wordfreq.word_frequency(p.specific, "en")
                      for p in judged])
    mapped_words = [w for w in words if w in features and w in english]
    weights = np.array([counts.get(w, 1) for w in mapped_words], dtype=np.float64)
    target = np.array([english[w] for w in mapped_words])
    raw = -np.array([features[w] @ v for w in mapped_words])
    mean_t, sd_t = np.average(target, weights=weights), np.sqrt(np.cov(target, aweights=weights))
    mean_r, sd_r = np.average(raw, weights=weights), np.sqrt(np.cov(raw, aweights=weights))
    generality = {**english, **dict(zip(mapped_words, (mean_t + (raw - mean_r) * sd_t / sd_r).tolist()))}
    TARGETS_DIR.mkdir(parents=True, exist_ok=True)
    lemmas = single_word_lemmas(DataDir(data_root))
    corrected = [w for w in words if w in lemmas and w in english and w in generality and w in features]
    for weight in CORRECTION_WEIGHTS:
        lines = [f"# log training count + {weight:g} x (WordNet-fitted generality - English log frequency), for "
                 "WordNet's single-word noun and verb lemmas (python -m experiments.generality_targets)"]
        lines += [f"{w}\t{np.log(max(counts.get(w, 1), 1)) + weight * (generality[w] - english[w]):.6f}" for w in corrected]
        correction_targets(weight).write_text("\n".join(lines) + "\n", encoding="utf-8")
    EMPTY_TARGETS.write_text("# no word: every word keeps its training count; <unk> counts as the average token\n",
                             encoding="utf-8")
    for path, values, what in ((WORDFREQ_TARGETS, english, "wordfreq English log frequency x training tokens"),
                               (GENERALITY_TARGETS, generality, "WordNet-fitted generality on the log-frequency "
                                                                "scale (python -m experiments.generality_targets)")):
        lines = [f"# {what}"] + [f"{w}\t{values[w]:.6f}" for w in words if w in values]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"fitted_pairs": len(fit_on), "judged_held_out_dev_pairs": len(judged),
            "score_on_held_out_dev_pairs": share_right(score_s, score_g),
            "score_on_held_out_dev_general_rarer": share_right(score_s[rarer], score_g[rarer]),
            "zipf_coefficient": float(v[-1]), "words_mapped": len(mapped_words), "wordfreq_words": len(english),
            "words_corrected": len(corrected)}


if __name__ == "__main__":
    import json

    from probsent.evaluation.datasets import resolve_data_dir
    from probsent.files.atomic_writes import write_json

    summary = build(resolve_data_dir(None))
    write_json(FIT_RECORD, summary)
    print(json.dumps(summary, indent=1))
