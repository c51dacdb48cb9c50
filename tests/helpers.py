"""Shared test utilities: where the shared data lives, tiny pair files."""
from __future__ import annotations

import csv
import gzip
from pathlib import Path
from typing import Callable

import pytest
import torch

from probsent.api import SentenceModel
from probsent.data.vocab import UNKNOWN, Vocabulary
from probsent.models import build_model

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
PAIRS = DATA / "paraphrase" / "pairs.tsv.gz"


def require_data() -> Path:
    """The shared data directory, or skip the test."""
    if not PAIRS.is_file():
        pytest.skip(f"shared data not found at {DATA}")
    return DATA


def slice_of_pairs(path: Path, count: int, start: int = 0, stride: int = 1) -> Path:
    """Write ``count`` lines of the shared pairs (every ``stride``-th line from ``start``) to ``path``."""
    require_data()
    written = 0
    with gzip.open(PAIRS, "rt", encoding="utf-8") as source, open(path, "w", encoding="utf-8") as out:
        for number, line in enumerate(source):
            if written >= count:
                break
            if number >= start and (number - start) % stride == 0:
                out.write(line)
                written += 1
    return path


TOY_PAIRS = [
    ("a man is playing a guitar .", "a person plays the guitar ."),
    ("the cat sat on the mat", "a cat is sitting on a mat"),
    ("two dogs run in the park", "dogs are running outside"),
    ("she bought 3 apples for $ 2", "she paid two dollars for three apples"),
    ("it is raining", "rain is falling"),
    ("the president spoke to congress on tuesday", "on tuesday the president addressed congress"),
    ("a child eats an ice cream", "a kid is eating ice cream"),
    ("the stock market fell 5 %", "stocks dropped by five percent"),
]


def write_toy_pairs(path: Path, repeat: int = 25) -> Path:
    """A small, well-formed pair file."""
    with open(path, "w", encoding="utf-8") as out:
        for _ in range(repeat):
            for a, b in TOY_PAIRS:
                out.write(f"{a}\t{b}\ttoy\n")
    return path


TINY_WORDS = "the a cat dog sat on mat ran in park . , man woman plays guitar 3 apples".split()


def tiny_model(kind: str, seed: int = 0) -> SentenceModel:
    """A randomly initialized model of type ``kind`` (dim 8) over :data:`TINY_WORDS`."""
    torch.manual_seed(seed)
    vocab = Vocabulary([UNKNOWN] + TINY_WORDS)
    settings = {"type": kind, "vocab_size": len(vocab), "dim": 8}
    if kind == "wlo":
        settings.update(scale_init_std=0.3, shift_init_std=0.5)
    if kind.startswith("lstm"):
        settings["hidden"] = 6
    return SentenceModel(build_model(settings), vocab)


def wlo_recurrence(scale, shift, start_variance: float = 1.0):
    """The oracle of the WLO tests: the paper's recurrence run word by word in float64, from
    z_0 ~ N(0, s_0 I): mu_i = A_i (mu_{i-1} + B_i), Sigma_i = A_i Sigma_{i-1} A_i (diagonal).

    ``scale`` and ``shift`` are the rows A_w and B_w of the sentence's words in order (n x k,
    NumPy or torch). Returns ``(means, variances)``, float64 arrays of (n + 1) x k: row i is the
    Gaussian after i words (row 0 the start, so row -1 is the sentence's, even when n = 0)."""
    import numpy as np

    def rows(x):
        return np.asarray(x.detach().double().numpy() if isinstance(x, torch.Tensor) else x, dtype=np.float64)

    a, b = rows(scale), rows(shift)
    means, variances = [np.zeros(a.shape[1])], [np.full(a.shape[1], float(start_variance))]
    for a_i, b_i in zip(a, b):
        means.append(a_i * (means[-1] + b_i))
        variances.append(a_i * variances[-1] * a_i)
    return np.stack(means), np.stack(variances)


def wlo_specificity_reference(model, sentences: list[str]) -> list[float]:
    """Minus the entropy of each sentence's WLO Gaussian, from its closed form in float64:
    k/2 log(2 pi e) (the prior N(0, I)) plus sum_d log|A_w,d| for every token (independent of
    the encoder's batched forward pass)."""
    import math

    import numpy as np

    from probsent.text.tokenize import tokenize

    scales = model.encoder.scale.weight.detach().double().numpy()
    terms = np.log(np.abs(scales)).sum(axis=1)
    prior = 0.5 * scales.shape[1] * math.log(2 * math.pi * math.e)
    index = model.vocab.index
    return [-(prior + sum(terms[index.get(token, 0)] for token in tokenize(s))) for s in sentences]


def evaluation_sets(data_dir: Path) -> dict[str, tuple[Callable[[], list[str]], int | None]]:
    """Name -> (a loader of every sentence of that evaluation set, or of a deterministic sample
    of about 50,000 training pairs (both sides); how many sentences it holds, duplicates
    counted, where fixed), read from ``data_dir``."""
    def _lines(path: Path, errors: str = "strict") -> list[str]:
        lines = path.read_text(encoding="utf-8", errors=errors).split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return lines

    def _tab_fields(path: Path, fields: tuple[int, ...]) -> list[str]:
        out = []
        for line in _lines(path):
            parts = line.split("\t")
            out.extend(parts[i] for i in fields)
        return out

    def _news_train() -> list[str]:
        return _lines(data_dir / "specificity" / "news-train" / "data.txt")

    def _news_test() -> list[str]:
        # Line 651 holds a broken UTF-8 sequence.
        return _lines(data_dir / "specificity" / "news-test" / "tknsents.txt", errors="replace")

    def _ko2019() -> list[str]:
        folder = data_dir / "specificity" / "ko2019"
        return [s for domain in ("twitter", "yelp", "movie") for s in _lines(folder / f"{domain}s.txt")]

    def _sts_benchmark() -> list[str]:
        folder = data_dir / "sts" / "stsbenchmark"
        return [s for part in ("train", "dev", "test") for s in _tab_fields(folder / f"sts-{part}.csv", (5, 6))]

    def _sts17() -> list[str]:
        return _tab_fields(data_dir / "sts" / "sts17-track5-en-en" / "STS.input.track5.en-en.txt", (0, 1))

    def _sts12_16() -> list[str]:
        files = sorted((data_dir / "sts" / "senteval-sts12-16").glob("*/STS.input.*.txt"))
        assert len(files) == 24, files
        return [s for path in files for s in _tab_fields(path, (0, 1))]

    def _snli_test() -> list[str]:
        path = data_dir / "snli" / "snli_1.0_test.untok.tsv"
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle, delimiter="\t"))
        return [s for row in rows for s in (row["premise"], row["hypothesis"])]

    stride = 25  # every 25th line of 1,263,076: 50,524 pairs

    def _paraphrase_sample() -> list[str]:
        out = []
        with gzip.open(data_dir / "paraphrase" / "pairs.tsv.gz", "rt", encoding="utf-8", newline="\n") as handle:
            for number, line in enumerate(handle):
                if number % stride == 0:
                    s1, s2 = line.rstrip("\n").split("\t")[:2]
                    out += [s1, s2]
        return out

    return {
        "news-train": (_news_train, 4342),
        "news-test": (_news_test, 885),
        "ko2019": (_ko2019, 984 + 845 + 920),
        "stsbenchmark": (_sts_benchmark, 2 * (5749 + 1500 + 1379)),
        "sts17": (_sts17, 2 * 250),
        "sts12-16": (_sts12_16, None),
        "snli-test": (_snli_test, 2 * 9824),
        "paraphrase-sample": (_paraphrase_sample, 2 * 50524),
    }


def run_specificity(capsys, *args: str) -> tuple[int, str, str]:
    """``probsent specificity ARGS`` through the CLI's main: (exit status, stdout, stderr)."""
    from probsent.cli import main

    code = main(["specificity", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_error(err: str, *parts: str) -> None:
    """``err`` is one ``probsent: error:`` line, no traceback, holding every one of ``parts``."""
    assert err.startswith("probsent: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for part in parts:
        assert part in err, err
