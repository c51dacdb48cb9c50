"""probsent.text.tokenize must give exactly NLTK's Treebank tokens of the lowercased text.

The reference is ``nltk.tokenize.TreebankWordTokenizer().tokenize(text.lower())``
(NLTK 3.10.x, a test-only dependency).  Compared here:

* every sentence of the shared evaluation sets and a deterministic sample of
  about 50,000 training pairs (both sides), read from ``../shared/data``
  (or ``$PROBSENT_DATA_DIR``); these tests are skipped when the data is absent;
* hand-written edge cases and seeded random strings.

The fast tokenizer (``probsent.text.piece_tokenize``, which tokenizes whitespace-separated pieces
once and caches them) must give exactly the reference's tokens: compared here on every
sentence of the training pairs (2.5 million), of the evaluation sets, and
on the edge cases and random strings, in batches, where a piece's context matters.

NLTK is slow (a few thousand sentences per second), so the reference tokens
for the data sets are computed once per distinct sentence, in a small process
pool when more than one CPU is available.
"""
from __future__ import annotations

import ast
import gzip
import multiprocessing
import os
import random
import re
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from helpers import evaluation_sets
from probsent.text.piece_tokenize import PieceTokenizer
from probsent.text.tokenize import tokenize, tokenize_many

TOKENIZE_PY = Path(__file__).resolve().parents[1] / "probsent" / "text" / "tokenize.py"


def _data_dir() -> Path:
    env = os.environ.get("PROBSENT_DATA_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1].parent / "shared" / "data"


DATA_DIR = _data_dir()


# ---------------------------------------------------------------------------
# Reference: NLTK
# ---------------------------------------------------------------------------

_reference_cache: dict[str, list[str]] = {}
_executor: ProcessPoolExecutor | None = None


# NLTK runs its regular expressions under a 5-second wall-clock limit (a ReDoS
# guard) that costs about a sixth of its time and could fire on the long test
# strings on a busy machine.  It never changes a result, so it is switched off
# for the reference, here and in the worker processes.
_NO_TIMEOUT = "import nltk.redos; nltk.redos.DEFAULT_TIMEOUT = None"


def _treebank():
    nltk_treebank = pytest.importorskip("nltk.tokenize.treebank", reason="nltk (test dependency) is not installed")
    exec(_NO_TIMEOUT)
    return nltk_treebank.TreebankWordTokenizer()


def _workers() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


def nltk_tokens(texts: list[str]) -> list[list[str]]:
    """NLTK's tokens of each ``text.lower()``, cached per distinct text."""
    global _executor
    tokenizer = _treebank()
    todo = list(dict.fromkeys(t for t in texts if t not in _reference_cache))
    if todo:
        lowered = [t.lower() for t in todo]
        if len(todo) > 5000 and _workers() > 1:
            if _executor is None:
                _executor = ProcessPoolExecutor(
                    _workers(),
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=exec,
                    initargs=(_NO_TIMEOUT,),
                )
            results = list(_executor.map(tokenizer.tokenize, lowered, chunksize=500))
        else:
            results = [tokenizer.tokenize(t) for t in lowered]
        _reference_cache.update(zip(todo, results))
    return [_reference_cache[t] for t in texts]


@pytest.fixture(scope="module", autouse=True)
def _shutdown_pool():
    yield
    global _executor
    if _executor is not None:
        _executor.shutdown()
        _executor = None


def assert_same_as_nltk(texts: list[str], what: str) -> None:
    texts = list(dict.fromkeys(texts))  # each distinct sentence once
    expected = nltk_tokens(texts)
    got = tokenize_many(texts)
    bad = [(t, e, g) for t, e, g in zip(texts, expected, got) if e != g]
    if bad:
        lines = [f"{len(bad)} of {len(texts)} {what} differ from NLTK, e.g.:"]
        for text, exp, res in bad[:5]:
            lines.append(f"  {text!r}\n    nltk:     {exp}\n    probsent: {res}")
        pytest.fail("\n".join(lines))


# ---------------------------------------------------------------------------
# Hand-written cases
# ---------------------------------------------------------------------------

EDGE_CASES = [
    # empty and whitespace
    "", " ", "   ", "\t", "\n", " \t\n ", "a\tb", "a\nb", "a\r\nb.", "\x0b\x0c", "a\x1cb.", "end.\x1c",
    "end,\x1c", "a\xa0b.", "a\u2003b.", "a\u3000b", "\x85", "end.\x85", "a\u2028b.",
    # double quotes
    '"Hello," he said.', '"', '""', '"""', '" "', '""x', 'He said "hi"', 'He said "hi".', '"hi."',
    'x"y', 'say "x"y "z', '("x")', '["x"]', '{"x"}', '<"x">', '"(x)"', 'a "b" c, "d".',
    "\"'x'\"", "\"'\"", 'end."', 'end.")', 'end. "', '"end".',
    # single quotes and pairs
    "''", "''x''", "x '' y", "'' x", "x ''", "x ''y", "x'' y", "'''", "x ''' y", "(''x'')", "''\"",
    "'quoted'", "'quoted' word", "a 'quoted' word.", "students' books", "the students'", "the students' ",
    "it's'", "it's' ", "it's')", "' x", "x '", "x ' y", "x' ' y", "'", "' '", "x''s", "'90s", "the '90s.",
    # backquotes
    "``", "```", "````", "``x''", "`x'", "x`y", "``hello'' he said", "` `",
    # clitics and contractions
    "can't", "Can't", "CAN'T", "cannot", "Cannot", "CANNOT", "can not", "cannot.", "(cannot)",
    "cannot's", "cannot'tis", "gonna", "gotta", "gimme", "lemme", "wanna go", "wanna", "wanna.",
    "wanna\tgo", "wannabe", "gonna's", "more'n", "d'ye", "D'ye", "x-gonna", "gonna_x", "gonna1",
    "'tis", "'Tis the season", "'twas", "twas", "'tisn't", "x 'tis", "('tis)", "x'tis", "'T is",
    "he's", "He'S", "I'm", "I'd", "they'll", "we're", "you've", "isn't", "don't", "ain't", "y'all",
    "o'clock", "rock'n'roll", "x'll's", "x'n't", "n't", "'s", "'ll", "'re x", "it 's", "do n't",
    "they 'll go", "'s'", "x's.", "x's,", "x's)", "x's--y", "x's?", "x's\"", "x'S", "x'LL", "DON'T",
    # periods
    "...", "wait...", "wait... what", "wait....", "a...b", "....", ".....", "......", "a . . .",
    "etc.", "U.S.", "the U.S. army.", "Mr. Smith went.", "end.)", 'end.")', "end.')", "end.'",
    "end. )", "end.;", "end;.", "end.?", "end?.", "a .", ".", "..", "x..", "end.  ", "end.\n",
    "end.\n\n", "end. \n", ".)", ".x", "3.5", "pi is 3.14.", "a.b.c.", "x.)]}>", 'x.")',
    # dashes
    "--", "a--b", "a---b", "a -- b", "----", "-", "-x-", "x--.", "--.",
    # brackets and symbols
    "(a)", "[a]", "{a}", "<a>", "f(x)", "((a))", "a)(b", "$5", "$3.50", "US$5", "50%", "a&b",
    "AT&T", "#tag", "@user", "a;b", "a;", "a?", "why?!", "!!!", "a*b", "a/b", "a+b=c", "a_b", "~x^y|z\\",
    # commas and colons
    "1,000", "1,000,000", "a,b", "a, b", "a,", ",a", ",1", "a,,b", ",,", ", ,", "a,,", "a:b", "10:30",
    "a:", "a::b", ":,", ",:", "a ,1", "a,\"", "a,'", "a,(b)", "x,\u0663", "x,\U00010d40", "x:\U0001e5f1",
    # unicode
    "Hello World", "ÀÉÎ ÕÜ.", "İstanbul", "KELVIN \u212a", "ſtraße", "gımme", "GIMME", "'tıs", "'tiſ",
    "naïve café.", "日本語。", "emoji 😀.", "’s", "x’s", "—dash—", "\u200b", "\ufeff", "\x00", "a\x00b.",
    "\ud800", "x\udcff.", "\u0663,\u0664", "ǅ", "ΣΑΣ.",
]

LONG_CASES = [
    "word " * 20000,
    "a, " * 5000 + "end.",
    "x. " * 5000,
    ("he said \"it's\" (really) -- 1,000 times; ok? " * 1000) + "fine.",
    "." * 3000,
    "a" * 50000 + ".",
    "'" * 1000,
    '"' * 1000,
    " " * 10000 + "x." + " " * 10000,
]


@pytest.mark.parametrize("text", EDGE_CASES, ids=[f"edge{i}" for i in range(len(EDGE_CASES))])
def test_edge_cases_match_nltk(text):
    assert tokenize(text) == nltk_tokens([text])[0]


@pytest.mark.parametrize("text", LONG_CASES, ids=[f"long{i}" for i in range(len(LONG_CASES))])
def test_long_strings_match_nltk(text):
    assert tokenize(text) == nltk_tokens([text])[0]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", []),
        (" \t\n", []),
        ("They'll save and invest more.", ["they", "'ll", "save", "and", "invest", "more", "."]),
        ("hi, my name can't hello,", ["hi", ",", "my", "name", "ca", "n't", "hello", ","]),
        ('"Hi," she said.', ["``", "hi", ",", "''", "she", "said", "."]),
        ("Good muffins cost $3.88\nin New York.  Please buy me\ntwo of them.\nThanks.",
         ["good", "muffins", "cost", "$", "3.88", "in", "new", "york.", "please", "buy", "me",
          "two", "of", "them.", "thanks", "."]),
        ("1,000 people, 10:30: go", ["1,000", "people", ",", "10:30", ":", "go"]),
        ("I cannot... gonna wanna", ["i", "can", "not", "...", "gon", "na", "wan", "na"]),
        ("'Tis the students' books", ["'t", "is", "the", "students", "'", "books"]),
        ("a--b (c) [d]", ["a", "--", "b", "(", "c", ")", "[", "d", "]"]),
        ("the U.S. army.", ["the", "u.s.", "army", "."]),
    ],
)
def test_known_outputs(text, expected):
    # Needs no NLTK: documents the behaviour (taken from NLTK 3.10).
    assert tokenize(text) == expected


def test_tokenize_many_equals_tokenize():
    texts = EDGE_CASES + ["A man is riding a bike.", "Don't stop, please!"]
    assert tokenize_many(texts) == [tokenize(t) for t in texts]
    assert tokenize_many(iter(texts)) == [tokenize(t) for t in texts]
    assert tokenize_many([]) == []


def test_does_not_mutate_or_keep_state():
    text = "It's a \"test\"."
    first = tokenize(text)
    first.append("x")
    assert tokenize(text) == ["it", "'s", "a", "``", "test", "''", "."]


# ---------------------------------------------------------------------------
# Random strings
# ---------------------------------------------------------------------------

_ATOMS = list("ab1 .,:;'\"`()[]{}<>?!-$%&@#*/") + [
    "''", "``", "--", "...", "'s", "'S", "n't", "'ll", "'re", "'ve", "'m", "'d", "'t", "can", "not",
    "cannot", "gonna", "wanna", "gimme", "lemme", "gotta", "d'ye", "more'n", "'tis", "'twas", "is",
    "was", " ", "  ", "\t", "\n", "\x1c", "\x85", "\xa0", "ı", "ſ", "İ", "K", "é", "’", "—", "٣",
    "\U00010d40", "1,000", "10:30", "U.S.", "mr.", "A", "S", "T", "I",
]
_WORDS = [
    "a", "xy", "it's", "don't", "can't", "they'll", "we're", "i've", "i'm", "he'd", "x'll's", "ab'n't",
    "n't", "'s", "'ll", "'re", "'tis", "o'clock", "90's", "1", "3.5", "u.s.", "1,000", "10:30", "e.g.",
    "mr.", "x-y", "a*b", "é", "über", "٣", "k", "na", "cannot", "gonna", "wanna", "d'ye", "more'n",
    "'hello'", "students'", "'", "''", "ı", "cannot'tis",
]
_PUNCT = list(",.;:?!()[]{}<>\"`$%&@#-*/'") + [
    "--", "``", ".", ". ", "..", "...", "....", '."', ".)", '")', ",1", ":2", ",٣", "' ", " '", " ''",
    "'' ",
]


def _random_strings(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        if i % 2:  # free mix of awkward pieces
            text = "".join(rng.choice(_ATOMS) for _ in range(rng.randint(0, 12)))
        else:  # sentence-like: words and punctuation, mostly single spaces
            parts = []
            for _ in range(rng.randint(0, 10)):
                parts.append(rng.choice(_WORDS) if rng.random() < 0.55 else rng.choice(_PUNCT))
                if rng.random() < 0.6:
                    parts.append(" ")
            text = "".join(parts)
        if rng.random() < 0.3:
            text = text.upper()
        out.append(text)
    return out


@pytest.mark.slow
def test_random_strings_match_nltk():
    assert_same_as_nltk(_random_strings(seed=20240601, count=6000), "random strings")


# ---------------------------------------------------------------------------
# Invariants the implementation relies on
# ---------------------------------------------------------------------------

_ALL_CHARS = "".join(map(chr, range(0x110000)))


def test_character_classes_match_the_regex_engine():
    """The \\d and \\s classes written out in probsent.text.tokenize equal those of ``regex``."""
    regex = pytest.importorskip("regex", reason="regex (installed with nltk) is not available")
    from probsent.text import tokenize as module

    digits = "".join(regex.findall(r"\d", _ALL_CHARS))
    assert "".join(re.findall(module._DIGIT, _ALL_CHARS)) == digits
    assert re.sub(module._NOT_DIGIT, "", _ALL_CHARS) == digits
    assert "".join(re.findall(module._SPACE, _ALL_CHARS)) == "".join(regex.findall(r"\s", _ALL_CHARS))


def test_whitespace_is_not_printable():
    """The fast path treats ``str.isprintable()`` as "no whitespace except ' '"."""
    spaces = set(filter(str.isspace, _ALL_CHARS)) | set(re.findall(r"\s", _ALL_CHARS))
    assert {c for c in spaces if c.isprintable()} == {" "}


def test_ignorecase_partners_of_contraction_letters():
    """Only U+0130, U+0131 and U+017F match the contraction rules' letters case-insensitively."""
    letters = "".join(sorted(set("cannotdyegimmegonnagottalemmemorenwannatiswas")))
    partners = set(re.findall(f"(?i)[{letters}]", _ALL_CHARS)) - set(letters) - set(letters.upper())
    assert partners <= {"\u0130", "\u0131", "\u017f"}


def test_runtime_code_does_not_import_nltk():
    tree = ast.parse(TOKENIZE_PY.read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported <= {"__future__", "re", "typing"}
    # And loading the module on its own pulls in neither nltk nor regex.
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('tok', {str(TOKENIZE_PY)!r})\n"
        "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)\n"
        "assert mod.tokenize(\"Don't.\") == ['do', \"n't\", '.']\n"
        "assert 'nltk' not in sys.modules and 'regex' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------------------
# The shared data sets
# ---------------------------------------------------------------------------


DATASETS = evaluation_sets(DATA_DIR)


@pytest.mark.data
@pytest.mark.parametrize("name", list(DATASETS))
def test_dataset_matches_nltk(name):
    if not DATA_DIR.is_dir():
        pytest.skip(f"shared data not found at {DATA_DIR} (set PROBSENT_DATA_DIR to use another copy)")
    loader, expected_count = DATASETS[name]
    texts = loader()
    if expected_count is not None:
        assert len(texts) == expected_count
    assert texts and all(isinstance(t, str) for t in texts)
    assert_same_as_nltk(texts, f"sentences of {name}")


# ---------------------------------------------------------------------------
# The fast tokenizer against the reference
# ---------------------------------------------------------------------------


def _fast_differences(texts: list[str], batch: int = 4096, tokenizer: PieceTokenizer | None = None) -> list[str]:
    """The texts whose tokens from PieceTokenizer (in batches of ``batch``) differ from tokenize's."""
    tokenizer = PieceTokenizer() if tokenizer is None else tokenizer
    bad = []
    for start in range(0, len(texts), batch):
        part = texts[start:start + batch]
        pieces = tokenizer.split(part)
        tokens = list(map(tokenizer.tokens.__getitem__, pieces.numbers.tolist()))
        expected = tokenize_many(part)
        assert len(pieces.ends) == len(part)
        begin = 0
        for text, end, want in zip(part, pieces.ends.tolist(), expected):
            if [t for piece in tokens[begin:end] for t in piece] != want:
                bad.append(text)
            begin = end
    return bad


@pytest.mark.data
def test_piece_tokenizer_equals_the_reference_on_every_training_sentence():
    # 2,526,152 sentences, 606,823 distinct (captions repeat across pairs): each distinct one
    # once, in batches of the file's order
    if not (DATA_DIR / "paraphrase" / "pairs.tsv.gz").is_file():
        pytest.skip(f"shared data not found at {DATA_DIR}")
    with gzip.open(DATA_DIR / "paraphrase" / "pairs.tsv.gz", "rt", encoding="utf-8", newline="\n") as handle:
        sentences = [s for line in handle for s in line.rstrip("\n").split("\t")[:2]]
    assert len(sentences) == 2 * 1_263_076
    bad = _fast_differences(list(dict.fromkeys(sentences)), batch=16384)
    assert bad == [], f"{len(bad)} training sentences differ, e.g. {bad[:5]}"


@pytest.mark.data
@pytest.mark.parametrize("name", [n for n in DATASETS if n != "paraphrase-sample"])
def test_piece_tokenizer_equals_the_reference_on_evaluation_sets(name):
    if not DATA_DIR.is_dir():
        pytest.skip(f"shared data not found at {DATA_DIR}")
    assert _fast_differences(DATASETS[name][0]()) == []


def _in_context(texts: list[str], seed: int) -> list[str]:
    """Each text alone, and joined with its neighbours by one or two spaces (so that each
    piece is seen first, in the middle and last), with leading and trailing spaces."""
    rng = random.Random(seed)
    out = list(texts)
    for i in range(len(texts)):
        parts = [texts[(i + k) % len(texts)] for k in range(rng.randint(2, 4))]
        out.append(rng.choice(["", " ", "  "]) + rng.choice([" ", "  "]).join(parts) + rng.choice(["", " ", "  "]))
    return out


@pytest.mark.slow
def test_piece_tokenizer_equals_the_reference_on_edge_cases_and_random_strings():
    texts = _in_context(EDGE_CASES + LONG_CASES[:4] + _random_strings(seed=25, count=20000), seed=25)
    tokenizer = PieceTokenizer()
    assert _fast_differences(texts, batch=1000, tokenizer=tokenizer) == []
    # again with every piece cached, in other batches
    assert _fast_differences(texts[::-1], batch=777, tokenizer=tokenizer) == []


def test_piece_tokenizer_starts_afresh_past_its_bound_and_takes_any_batch():
    tokenizer = PieceTokenizer(max_pieces=50)
    texts = _random_strings(seed=3, count=3000)
    assert _fast_differences(texts, batch=100, tokenizer=tokenizer) == []
    assert tokenizer.generation > 1
    assert tokenizer.tokenize_many([]) == [] and len(tokenizer.split([]).ends) == 0
    assert tokenizer.tokenize_many(["", " ", "a\nb", "x\x02y."]) == [[], [], ["a", "b"], ["x\x02y", "."]]
