"""The token cap is applied while tokenizing: `first_tokens(text, n)` equals
`tokenize(text)[:n]` on generated texts of every kind (fixed seed and a fresh one), and a
50 MB line costs memory and time bounded by the cap, not by the line."""
from __future__ import annotations

import os
import random
import time
import tracemalloc

import pytest

from probsent.api import MAX_TOKENS
from probsent.text.tokenize import tokenize

FIXED_SEED = 26
SEEDS = [FIXED_SEED, int(os.environ.get("PROBSENT_FUZZ_SEED") or random.SystemRandom().randrange(2**32))]
# pieces the tokenizer's rules react to: quotes, final periods, contractions, brackets,
# numbers with commas, every kind of whitespace (the information separators \x1c-\x1f are
# whitespace to str.split() but not to the rules), final sigma, case changes
PIECES = ['"', "''", "'", "``", ".", "...", "can", "not", "cannot", "'s", "n't", "'ll", "gonna", "(", ")", "[",
          "]", "{", "}", "<", ">", "--", ",", "1,000", ":", ";", "?", "!", "%", "$", "&", "word", "U.S.",
          "ΑΣ", "İ", "\u3000", "\x1c", "\x1d", "\x85", "\xa0", "\t", "\n", " ", " ", " ", "\ufeff", "'tis", "d'ye"]


def generated(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) + rng.choice(["", " ", " ", "\x1f", "\u2028"]) for _ in range(rng.randint(0, 60)))


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS, ids=lambda seed: f"seed{seed}")
def test_first_tokens_equal_the_full_tokenization_cut(seed) -> None:
    from probsent.text.tokenize import first_tokens

    rng = random.Random(seed)
    for case in range(20_000):
        text = generated(rng)
        cap = rng.randint(0, 25)
        assert first_tokens(text, cap) == tokenize(text)[:cap], f"seed {seed}, case {case}: {text!r} cap {cap}"


def test_a_50_mb_line_costs_what_the_cap_allows() -> None:
    from probsent.text.tokenize import capped_text, first_tokens

    line = "The cat sat on the mat, didn't it? " * 1_500_000  # 52 MB, 15 M tokens
    tracemalloc.start()
    tokens = first_tokens(line, MAX_TOKENS)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert tokens == tokenize(line[:200_000])[:MAX_TOKENS] and len(tokens) == MAX_TOKENS
    assert peak < 10e6, f"{peak / 1e6:.1f} MB for the first {MAX_TOKENS} tokens"

    def fastest(text: str) -> float:  # the least of 5 runs: the machine's load only adds
        times = []
        for _ in range(5):
            started = time.perf_counter()
            first_tokens(text, MAX_TOKENS)
            times.append(time.perf_counter() - started)
        return min(times)

    # no machine-fitted seconds: the time must not grow with the line's length. A line 100x
    # shorter (525 KB, still far more than MAX_TOKENS tokens) is the unit; a cost linear in the
    # length would be 100x it, one bounded by the cap about 1x; 10x separates the two anywhere
    short, long = fastest(line[:len(line) // 100]), fastest(line)
    assert long < 10 * short, f"{long:.4f} s for 52 MB against {short:.4f} s for 525 KB"
    assert len(capped_text(line, MAX_TOKENS)) < 60_000
