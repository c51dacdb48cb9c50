"""Fuzz: 10,000 generated inputs through the tokenizer, the Python API (encode, entropy,
specificity, similarity, explain) and ``probsent specificity`` (standard input and arguments),
with the shipped model.

Asserted for every input: no exception or traceback, every number finite, one output line
per input line. Half the inputs come from a fixed seed, half from a fresh one
(``PROBSENT_FUZZ_SEED`` replays it), shown in the test's name and in every failure message.
"""
from __future__ import annotations

import math
import os
import random
import subprocess
import sys

import numpy as np
import pytest

import probsent
from probsent.api import MAX_TOKENS
from probsent.text.tokenize import tokenize

pytestmark = pytest.mark.slow

COUNT = 5_000  # per seed
FIXED_SEED = 13
SEEDS = [FIXED_SEED, int(os.environ.get("PROBSENT_FUZZ_SEED") or random.SystemRandom().randrange(2**32))]

# pools of code points: ASCII, whitespace and controls, Latin, combining marks, CJK, RTL,
# emoji (outside the BMP), lone surrogates, the replacement character
POOLS = [
    [chr(c) for c in range(0x20, 0x7F)],
    list(" \t\r\n\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u2028\u2029\u3000\ufeff\x00\x07\x1b"),
    [chr(c) for c in range(0xA1, 0x250)],
    [chr(c) for c in range(0x300, 0x370)],
    [chr(c) for c in range(0x4E00, 0x4E80)],
    [chr(c) for c in range(0x5D0, 0x5EB)] + [chr(c) for c in range(0x627, 0x64B)],
    [chr(c) for c in range(0x1F600, 0x1F650)],
    [chr(c) for c in range(0xD800, 0xD810)] + [chr(c) for c in range(0xDC80, 0xDC90)] + ["\ufffd"],
    list("\"'`.,;:!?()[]{}<>-\u2014\u2026%$#@&*/\\|~^_+="),
]


@pytest.fixture(scope="module")
def model():
    return probsent.load()


def extreme_words(model, count: int = 6) -> list[str]:
    """The words whose operators grow (and shrink) the spread fastest: long runs of them push
    every quantity out of float32's range."""
    with np.errstate(divide="ignore"):
        log_scale = np.log(np.abs(model.encoder.scale.weight.detach().numpy()))
    growth = log_scale.max(1)
    growth[0] = -np.inf
    shrink = log_scale.min(1)
    shrink[0] = np.inf
    words = model.vocab.words
    return [words[i] for i in np.argsort(-growth)[:count]] + [words[i] for i in np.argsort(shrink)[:count]]


def generate(seed: int, count: int, vocab: list[str], extremes: list[str]) -> list[str]:
    """``count`` inputs of every kind: random characters, vocabulary sentences, blanks,
    punctuation runs, and (1 in 200) long runs of extreme words, up to past MAX_TOKENS."""
    rng = random.Random(seed)
    inputs = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.005:
            words = [rng.choice(extremes) for _ in range(rng.randint(1, 3))]
            repeat = rng.choice([150, 400, 1500, MAX_TOKENS + 7])
            inputs.append(" ".join(words[i % len(words)] for i in range(repeat)))
        elif kind < 0.35:
            length = int(rng.expovariate(1 / 15)) + 1
            text = " ".join(rng.choice(vocab) for _ in range(length))
            inputs.append(text.capitalize() + rng.choice(["", ".", " ?", "!", " ...", '"']))
        elif kind < 0.40:
            inputs.append(rng.choice(["", " ", "\t", "  \t ", "\r", "\u3000", "\x0b", "\ufeff"]))
        else:
            pool_weights = [8, 2, 2, 1, 1, 1, 1, 0.3, 2]
            length = int(rng.expovariate(1 / 30))
            text = []
            for _ in range(length):
                pool = rng.choices(POOLS, weights=pool_weights)[0]
                text.append(rng.choice(pool))
            inputs.append("".join(text))
    return inputs


def stdin_bytes(inputs: list[str]) -> bytes:
    """The inputs as lines of bytes (lone surrogates become bytes that are not UTF-8)."""
    return b"".join(text.encode("utf-8", "surrogatepass") + b"\n" for text in inputs)


def check_cli_rows(stdout: str, expected_lines: list[str], seed: int) -> None:
    rows = stdout.split("\n")
    assert rows[-1] == "", f"seed {seed}: output does not end with a line break"
    rows = rows[:-1]
    assert len(rows) == len(expected_lines), f"seed {seed}: {len(rows)} output lines for {len(expected_lines)} inputs"
    for row, text in zip(rows, expected_lines):
        score = float(row.split("\t", 1)[0])
        if text.strip():
            assert math.isfinite(score), f"seed {seed}: {row[:80]!r}"
        else:
            assert math.isnan(score), f"seed {seed}: blank line scored: {row[:80]!r}"


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed={s}")
def test_fuzz_python_api(seed: int, model) -> None:
    inputs = generate(seed, COUNT, model.vocab.words[1:5000], extreme_words(model))
    token_lists = [tokenize(text) for text in inputs]
    assert all(isinstance(t, str) and t for tokens in token_lists for t in tokens), f"seed {seed}"

    # a blank input (no tokens) is a missing sentence: NaN, like a null; every other number is finite
    blank = np.array([not tokens for tokens in token_lists])
    mean, variance = model.encode(inputs)
    long = [text for text in inputs if len(text) > 1000]
    _, log_variance = model.encode([t for t in long + inputs[:500] if t.strip()], log_variance=True)
    assert mean.shape == variance.shape == (COUNT, model.encoder.dim), f"seed {seed}"
    for name, values in (("mean", mean[~blank]), ("variance", variance[~blank])):
        bad = np.flatnonzero(~np.isfinite(values).all(1))
        assert not len(bad), f"seed {seed}: {name} not finite for {inputs[bad[0]][:80]!r}"
    assert np.isnan(variance[blank]).all() and (mean[blank] == 0).all(), f"seed {seed}"
    assert np.isfinite(log_variance).all(), f"seed {seed}"
    assert (variance[~blank] >= 0).all(), f"seed {seed}"

    entropy = model.entropy(inputs)
    specificity = model.specificity(inputs)
    assert np.isfinite(entropy[~blank]).all() and np.isnan(entropy[blank]).all(), f"seed {seed}"
    assert np.array_equal(specificity, -entropy, equal_nan=True), f"seed {seed}"
    partners = random.Random(seed).sample(inputs, len(inputs))
    for a, b in ((inputs, partners), (long, long)):
        similarity = model.similarity_pairwise(a, b)
        missing = np.array([not x.strip() or not y.strip() for x, y in zip(a, b)], dtype=bool)
        bad = np.flatnonzero(~np.isfinite(similarity) & ~missing)
        assert not len(bad), f"seed {seed}: similarity of {a[bad[0]][:60]!r} and {b[bad[0]][:60]!r}"
    matrix = model.similarity(inputs[:150], partners[:100])
    bad = np.argwhere(~np.isfinite(matrix[~blank[:150]][:, [bool(p.strip()) for p in partners[:100]]]))
    assert not len(bad), f"seed {seed}: similarity not finite"

    for i, text in enumerate(inputs):
        explanation = model.explain(text)
        assert len(explanation.words) == min(len(token_lists[i]), MAX_TOKENS), f"seed {seed}: {text[:80]!r}"
        assert math.isfinite(explanation.entropy) == (not blank[i]), f"seed {seed}: {text[:80]!r}"  # blank: NaN
        if not blank[i]:  # the word shares add up to the entropy computed from the encoding
            assert explanation.entropy == pytest.approx(float(entropy[i]), rel=1e-4, abs=1e-2), \
                f"seed {seed}: {text[:80]!r}"


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed={s}")
def test_fuzz_command_line(seed: int, model, tmp_path) -> None:
    inputs = generate(seed, COUNT, model.vocab.words[1:5000], extreme_words(model))
    data = stdin_bytes(inputs)
    result = subprocess.run([sys.executable, "-m", "probsent.cli", "specificity"], input=data,
                            capture_output=True)
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 0 and "Traceback" not in err, f"seed {seed}: {err[-2000:]}"
    lines = [raw.decode("utf-8", "replace").rstrip("\r\n") for raw in data.split(b"\n")[:-1]]
    lines = [line.removeprefix("\ufeff") for line in lines]  # a leading byte-order mark is dropped (RELIABILITY)
    check_cli_rows(result.stdout.decode("utf-8"), lines, seed)

    # arguments: any bytes but NUL, line breaks and tabs inside included
    argv = [text for text in inputs[:400] if "\x00" not in text]
    result = subprocess.run([sys.executable, "-m", "probsent.cli", "specificity", "--",
                             *[text.encode("utf-8", "surrogatepass") for text in argv]], capture_output=True)
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 0 and "Traceback" not in err, f"seed {seed}: {err[-2000:]}"
    shown = [text.encode("utf-8", "surrogatepass").decode("utf-8", "replace").removeprefix("\ufeff") for text in argv]
    check_cli_rows(result.stdout.decode("utf-8"), shown, seed)
