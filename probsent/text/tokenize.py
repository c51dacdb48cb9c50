"""Tokenization used everywhere in probsent (training, evaluation, API).

:func:`tokenize` lowercases a sentence and splits it into Penn Treebank style
tokens.  The output is meant to be *identical* to::

    nltk.tokenize.TreebankWordTokenizer().tokenize(text.lower())

for NLTK 3.10.x (default arguments), but NLTK is not needed at run time: this
module only uses the standard library, and on typical sentences it is 10 to 25
times faster than NLTK (``benchmarks/bench_tokenize.py``).  ``tests/test_tokenize.py`` checks
the equality against NLTK on every sentence of the evaluation data, a large
sample of the training pairs, fuzzed strings and hand-written edge cases.

How it works
------------
The Treebank tokenizer is a fixed sequence of regular-expression rewrites,
each of which only inserts spaces (or turns a double quote into two back- or
single quotes), followed by a split on whitespace.  The rewrites interact: a
rule sees the spaces that earlier rules inserted, and a match consumes the
characters it covers, so in general they can be neither reordered nor merged.

* :func:`_treebank` (the general path) runs the whole sequence, in order, on
  any string.  It skips a rule only when a substring test on the current
  string shows that the rule cannot match (no ``","`` -> no comma rule), and
  uses ``str.replace`` where the rule is a literal or single-character
  rewrite (same left-to-right, non-overlapping semantics as ``re.sub``).
* :func:`_tokenize_lowered` handles the large majority of real sentences
  (plain ASCII or not) with a handful of string operations and falls back to
  :func:`_treebank` for the rest.  The conditions for this fast path, and why
  it gives the same result, are written next to it.

Regular-expression engines: NLTK compiles most rules with the third-party
``regex`` engine, whose ``\\d`` and ``\\s`` differ from the standard ``re``'s
on a few code points; those two classes are spelled out below to match
``regex``.  Everything else used here (literals, explicit classes, ``^``,
``$``, greedy ``*``) behaves the same in both engines.  NLTK compiles the
contraction rules with ``re`` itself (``IGNORECASE``), so they are reproduced
with ``re`` and the same flag, including its case-insensitive matches of
``"ı"`` (U+0131) for ``i`` and ``"ſ"`` (U+017F) for ``s``.

Known, deliberate difference: NLTK abandons a regular-expression match that
runs longer than 5 s (``TimeoutError``); this module has no such limit.

The first N tokens of a sentence, without tokenizing the rest of it.

A sentence counts its first ``MAX_TOKENS`` tokens (``probsent.api``). Tokenizing a 50 MB line
whole to keep 10,000 tokens cost 1.26 GB and half a minute; :func:`first_tokens` tokenizes a
prefix instead, so memory and time are bounded by the cap, not by the line.

Why a prefix gives the same tokens: the tokenizer's rewrites only insert spaces or turn a
quote into other non-space characters, and its final split is ``str.split()``, so every token
lies inside one whitespace-separated word of the text and every such word gives at least one
token: the first N tokens come from the first N words. A rewrite looks at most at the word
next to the one it changes (and the end-of-text rules at the last word), so cutting the text
after word N + 2 leaves the tokens of words 1..N as they were. ``tests/test_token_cap.py``
checks the equality on generated texts of every kind.
"""
from __future__ import annotations

import re
from typing import Iterable

__all__ = ["tokenize", "tokenize_many"]

# ---------------------------------------------------------------------------
# Character classes of the ``regex`` engine (the one most NLTK rules run on).
# ---------------------------------------------------------------------------

# ``regex``'s \d is Unicode general category Nd from its own, newer Unicode
# database.  ``re``'s \d (str.isdecimal) follows the Unicode version of the
# running Python (14.0 for 3.11); the digit blocks added in Unicode 15-17 are
# listed explicitly.  A test compares the resulting class with the installed
# ``regex`` module on every code point.
_EXTRA_DIGITS = (
    "\U00010d40-\U00010d49"  # Garay
    "\U000116d0-\U000116e3"  # Myanmar Extended-C
    "\U00011bf0-\U00011bf9"  # Sunuwar
    "\U00011de0-\U00011de9"  # Tolong Siki
    "\U00011f50-\U00011f59"  # Kawi
    "\U00016130-\U00016139"  # Gurung Khema
    "\U00016d70-\U00016d79"  # Kirat Rai
    "\U0001ccf0-\U0001ccf9"  # Outlined digits
    "\U0001e4f0-\U0001e4f9"  # Nag Mundari
    "\U0001e5f1-\U0001e5fa"  # Ol Onal
)
_DIGIT = "[\\d" + _EXTRA_DIGITS + "]"
_NOT_DIGIT = "[^\\d" + _EXTRA_DIGITS + "]"

# ``regex``'s \s is the Unicode White_Space property, which (unlike ``re``'s
# \s and str.isspace) excludes the information separators U+001C..U+001F.
_SPACE = "[\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"

# ---------------------------------------------------------------------------
# The rules, in the order they are applied.
# ---------------------------------------------------------------------------

# A double quote (or two single quotes) after a space or an opening bracket
# opens a quotation and becomes ``.  (A double quote at the very start of the
# string is handled before this rule.)
_OPENING_QUOTE = re.compile(r"""([ (\[{<])("|'')""")

# A comma or colon is split off when a non-digit follows (1,000 and 10:30 stay
# whole).  The match includes that next character, so of two adjacent commas
# only the first one is split off by this rule.
_COMMA_COLON = re.compile("([:,])(" + _NOT_DIGIT + ")")
# A comma or colon at the end ($: the very end, or before a final "\n").
_COMMA_COLON_END = re.compile(r"([:,])$")

# The sentence-final period: a period not preceded by another period, then
# any closing brackets and quotes, then only whitespace up to the end.
_FINAL_PERIOD = re.compile(r"""([^.])(\.)([\])}>"']*)""" + _SPACE + "*$")

# A single quote before a space (closing quote, plural possessive).
_QUOTE_BEFORE_SPACE = re.compile(r"([^'])' ")

# Clitics before a space.  Two separate passes: a space inserted by the first
# pass can complete a match of the second ("x'll's" -> "x 'll 's").
_CLITIC_SMD = re.compile(r"([^' ])('[sS]|'[mM]|'[dD]|') ")
_CLITIC_LL_RE_VE_NT = re.compile(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ")

# Words split in two (R. MacIntyre's contraction list), one rule after the
# other, with ``re`` semantics: IGNORECASE, Unicode \b and \s.
_SPLIT_WORDS = [
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"\b(can)(not)\b",
        r"\b(d)('ye)\b",
        r"\b(gim)(me)\b",
        r"\b(gon)(na)\b",
        r"\b(got)(ta)\b",
        r"\b(lem)(me)\b",
        r"\b(more)('n)\b",
        r"\b(wan)(na)(?=\s)",
    )
]
# One of these substrings is present whenever a _SPLIT_WORDS rule can match a
# lowercased ASCII string.
_SPLIT_WORDS_HINTS = ("cannot", "d'ye", "gimme", "gonna", "gotta", "lemme", "more'n", "wanna")

# 'tis and 'twas, after a space.
_T_IS_WAS = [re.compile(pattern, re.IGNORECASE) for pattern in (r" ('t)(is)\b", r" ('t)(was)\b")]

# Characters always surrounded by spaces, in the three groups the rules pad
# them (the groups are applied at different points of the sequence).
_PAD_SYMBOLS = tuple((c, f" {c} ") for c in ";@#$%&")
_PAD_QUESTION_EXCLAMATION = (("?", " ? "), ("!", " ! "))
_PAD_BRACKETS = tuple((c, f" {c} ") for c in "[](){}<>")


def _treebank(s: str) -> list[str]:
    """Apply the full Treebank rule sequence to the (lowercased) string ``s``."""
    # -- opening quotes ------------------------------------------------------
    if s[:1] == '"':
        s = "``" + s[1:]
    if "``" in s:
        s = s.replace("``", " `` ")
    if '"' in s or "''" in s:
        s = _OPENING_QUOTE.sub(r"\1 `` ", s)

    # -- punctuation ---------------------------------------------------------
    if "," in s or ":" in s:
        s = _COMMA_COLON.sub(r" \1 \2", s)
        s = _COMMA_COLON_END.sub(r" \1 ", s)
    if "..." in s:
        s = s.replace("...", " ... ")
    for char, padded in _PAD_SYMBOLS:
        if char in s:
            s = s.replace(char, padded)
    if "." in s:
        s = _FINAL_PERIOD.sub(r"\1 \2\3 ", s)
    for char, padded in _PAD_QUESTION_EXCLAMATION:
        if char in s:
            s = s.replace(char, padded)
    if "' " in s:
        s = _QUOTE_BEFORE_SPACE.sub(r"\1 ' ", s)
    for char, padded in _PAD_BRACKETS:
        if char in s:
            s = s.replace(char, padded)
    if "--" in s:
        s = s.replace("--", " -- ")

    # -- closing quotes and clitics ------------------------------------------
    s = " " + s + " "
    if "''" in s:
        s = s.replace("''", " '' ")
    if '"' in s:
        s = s.replace('"', " '' ")
    if "'" in s:  # (the closing-quote rewrite above may have created one)
        s = _CLITIC_SMD.sub(r"\1 \2 ", s)
        s = _CLITIC_LL_RE_VE_NT.sub(r"\1 \2 ", s)

    # -- contractions ----------------------------------------------------------
    # Outside ASCII, IGNORECASE lets e.g. "gımme" match, so no substring test.
    if not s.isascii() or any(hint in s for hint in _SPLIT_WORDS_HINTS):
        for rule in _SPLIT_WORDS:
            s = rule.sub(r" \1 \2 ", s)
    if " 't" in s:  # ("t" has no case-insensitive partner besides "T")
        for rule in _T_IS_WAS:
            s = rule.sub(r" \1 \2 ", s)

    return s.split()


# ---------------------------------------------------------------------------
# Fast path.
# ---------------------------------------------------------------------------
#
# ``_tokenize_lowered(s)`` returns ``_treebank(s)``.  For most sentences it
# gets there with a few string operations instead of the whole rule sequence.
# It does so when the lowercased string ``s``
#
#   (a) has no whitespace except " " -- checked with ``s.isprintable()``:
#       every other character that str.split or a \s class counts as
#       whitespace is non-printable (a test checks this on every code point);
#   (b) has each "'" either followed by an ASCII letter/digit and preceded by
#       one or by a space (or the start), or followed by a space and preceded
#       by an ASCII letter/digit or a space (or the start); a pair "''" is
#       allowed when it stands alone between two spaces (or a space and the
#       end); nothing else;
#   (c) has no comma or colon directly followed by a comma or colon.
#
# Then, in the Treebank order:
#
# * opening quotes: a double quote at the start, every "``", and every double
#   quote or pair "''" after a space or opening bracket become ``.  The rule
#   is a regular expression whose matches cannot overlap; by (b) a pair always
#   follows a space, and no rewrite creates a new match for a later one (the
#   ' "' rewrite, the only one whose output could precede a quote, comes
#   first), so plain replacements do the same;
# * "..." and then the quote-before-space rule: by (b) no quote precedes
#   another one here, so every "' " is padded (the Treebank rule may skip a
#   quote that already stands between two spaces, which changes no token);
# * the final period: the Treebank rule sees the string after commas, colons
#   and ;@#$%& have been padded, but that padding only inserts spaces next to
#   characters that are neither periods nor closers, so the decision can be
#   taken on the unpadded string: drop the trailing spaces, skip the closers
#   ])}>" at the end (by (b) no "'" stands there, and every remaining double
#   quote is a closing one), and split off the period in front of them if it
#   is not the first character and does not follow a period;
# * "--" and the (closing) double quotes: the same rewrites as the rules;
# * commas/colons followed by a non-digit (or by nothing), and the characters
#   ;@#$%&?![](){}<> become tokens of their own.  Whether a comma is followed
#   by a digit is not changed by the rewrites above (they insert a space after
#   a comma only where a non-digit followed it already), and by (c) the comma
#   rule never consumes another comma, so each one is decided on its own;
# * clitics: after all the padding every token is followed by a space, so the
#   two clitic rules can only split a token at its end: first 's/'m/'d, then
#   'll/'re/'ve/n't on what is left, each only if the character in front of
#   it exists and is not "'";
# * contractions: the words split by those rules (cannot, gimme, gonna,
#   gotta, lemme, wanna, d'ye, more'n) and " 't" are rare, so when one may be
#   present (a substring test, or any of U+0130 U+0131 U+017F, which
#   IGNORECASE matches to i, i, s) the rules are run on the tokens joined by
#   spaces.  Their matches never span a space, and only need to know whether
#   a neighbour is whitespace, so that gives the same result.  Under (b), no
#   rewrite puts a space in front of a "'t".

# The characters that need attention, except commas and colons followed by a
# space (the usual case, which needs no more than padding).
_SPECIALS = re.compile("[;@#$%&?!\\[\\](){}<>,:'\"`](?!(?<=[,:]) )")
_SEPARATORS = frozenset(";@#$%&?![](){}<>,:")
_COMMA_COLON_SPECIAL = re.compile("[,:](?:[,:]|" + _DIGIT + ")")
_COMMA_COLON_RUN = re.compile("[,:][,:]")
_SEPARATORS_SPLIT = re.compile("([;@#$%&?!\\[\\](){}<>]|[,:](?!" + _DIGIT + "))")
_PADDED = {c: f" {c} " for c in _SEPARATORS}
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_ALNUM_SPACE = _ALNUM | {" "}
_QUOTE_OPENERS = tuple(c + '"' for c in " ([{<")  # ' "' first (see above)
_CLOSERS = frozenset('])}>"')
_CLITICS_SMD = frozenset(("'s", "'m", "'d"))
_CLITICS_LL_RE_VE_NT = frozenset(("'ll", "'re", "'ve", "n't"))


def _contractions(tokens: list[str]) -> list[str]:
    """Apply the contraction rules to ``tokens`` (see the notes above)."""
    s = " " + " ".join(tokens) + " "
    for rule in _SPLIT_WORDS:
        s = rule.sub(r" \1 \2 ", s)
    if " 't" in s:
        for rule in _T_IS_WAS:
            s = rule.sub(r" \1 \2 ", s)
    return s.split()


def _tokenize_lowered(s: str) -> list[str]:
    """Tokenize the lowercased string ``s``: ``_treebank(s)``, computed fast when possible."""
    if not s.isprintable():  # condition (a)
        return _treebank(s)
    contractions = (
        ("nn" in s or "mm" in s or "tt" in s)
        and (
            "cannot" in s
            or "gonna" in s
            or "wanna" in s
            or "gimme" in s
            or "lemme" in s
            or "gotta" in s
        )
    ) or (not s.isascii() and ("\u0130" in s or "\u0131" in s or "\u017f" in s))

    specials = _SPECIALS.findall(s)
    if not specials:
        # Letters, digits, periods, spaces, hyphens, inert symbols and
        # commas/colons followed by a space.
        if "," in s:
            s = s.replace(",", " , ")
        if ":" in s:
            s = s.replace(":", " : ")
        if "..." in s:
            s = s.replace("...", " ... ")
        if "--" in s:
            s = s.replace("--", " -- ")
        s = s.rstrip(" ")
        if s[-1:] == "." and len(s) > 1 and s[-2] != ".":
            tokens = s[:-1].split()
            tokens.append(".")
        else:
            tokens = s.split()
        return _contractions(tokens) if contractions else tokens

    # Condition (b).
    pairs = False
    if "'" in specials:
        if "d'ye" in s or "more'n" in s or " 't" in s or s[:2] == "'t":
            contractions = True
        last = len(s) - 1
        i = s.find("'")
        while i >= 0:
            if i == last:
                return _treebank(s)
            after = s[i + 1]
            if after == "'":
                if i == 0 or s[i - 1] != " " or s[i + 2 : i + 3] not in ("", " "):
                    return _treebank(s)
                pairs = True
                i = s.find("'", i + 2)
                continue
            if (after != " " and after not in _ALNUM) or (i and s[i - 1] not in _ALNUM_SPACE):
                return _treebank(s)
            i = s.find("'", i + 1)
    # Condition (c); and whether some comma or colon is followed by a digit.
    # (``specials`` lists only the commas and colons not followed by a space.)
    comma_digit = False
    if ("," in specials or ":" in specials) and _COMMA_COLON_SPECIAL.search(s):
        if _COMMA_COLON_RUN.search(s):
            return _treebank(s)
        comma_digit = True

    if '"' in specials or "`" in specials or pairs:
        if s[:1] == '"':
            s = "``" + s[1:]
        if "``" in s:
            s = s.replace("``", " `` ")
        if '"' in s:
            for opener in _QUOTE_OPENERS:
                if opener in s:
                    s = s.replace(opener, opener[0] + " `` ")
        if pairs:
            s = s.replace(" ''", "  `` ")
    # This branch (text with quotes or special commas) ends with the same replacements as the
    # plain-text branch above: each branch is straight-line code on purpose, the hot path.
    if "..." in s:
        s = s.replace("...", " ... ")
    if "' " in s:
        s = s.replace("' ", " ' ")

    s = s.rstrip(" ")
    k = len(s)
    while k and s[k - 1] in _CLOSERS:
        k -= 1
    if k > 1 and s[k - 1] == "." and s[k - 2] != ".":
        s = s[: k - 1] + " " + s[k - 1 :]
    if "--" in s:
        s = s.replace("--", " -- ")
    if '"' in s:
        s = s.replace('"', " '' ")

    if comma_digit:
        s = " ".join(_SEPARATORS_SPLIT.split(s))
    else:
        for char in set(specials):
            if char in _SEPARATORS:
                s = s.replace(char, _PADDED[char])
        # Commas and colons all followed by a space.
        if "," not in specials and "," in s:
            s = s.replace(",", " , ")
        if ":" not in specials and ":" in s:
            s = s.replace(":", " : ")
    tokens = s.split()

    if "'" in s:
        out: list[str] = []
        append = out.append
        for tok in tokens:
            if "'" not in tok or tok == "''":
                append(tok)
                continue
            clitic = tok[-2:]
            if clitic in _CLITICS_SMD and len(tok) > 2 and tok[-3] != "'":
                tok = tok[:-2]
            else:
                clitic = ""
            end = tok[-3:]
            if end in _CLITICS_LL_RE_VE_NT and len(tok) > 3 and tok[-4] != "'":
                append(tok[:-3])
                append(end)
            else:
                append(tok)
            if clitic:
                append(clitic)
        tokens = out
    return _contractions(tokens) if contractions else tokens


def tokenize(text: str) -> list[str]:
    """Lowercase ``text`` and split it into Penn Treebank tokens.

    The result equals ``nltk.tokenize.TreebankWordTokenizer().tokenize(text.lower())``
    (NLTK 3.10.x, default arguments) for every input, without importing NLTK::

        >>> tokenize("They'll save and invest more.")
        ['they', "'ll", 'save', 'and', 'invest', 'more', '.']
        >>> tokenize('"Hi," she said -- I can\\'t (really).')
        ['``', 'hi', ',', "''", 'she', 'said', '--', 'i', 'ca', "n't", '(', 'really', ')', '.']

    Some properties of the scheme: only a period at the very end of ``text`` is
    split off (``"the u.s. army."`` gives ``['the', 'u.s.', 'army', '.']``);
    a comma or colon followed by a digit stays inside its token (``1,000``);
    opening double quotes become two backquotes and closing ones two single
    quotes; ``'s``, ``'ll``, ``n't`` and the like are split off a word only
    when a space (or the end of the text, or punctuation that is split off)
    follows them.
    """
    return _tokenize_lowered(text.lower())


def tokenize_many(texts: Iterable[str]) -> list[list[str]]:
    """:func:`tokenize` each string of ``texts``; returns one token list per string."""
    run = _tokenize_lowered
    return [run(text.lower()) for text in texts]


_WORD = re.compile(r"\S+")  # \s of str patterns is str.isspace(), what str.split() splits on
_MARGIN = 2  # words kept beyond the cap, so that no rewrite near the cut reaches the kept ones


def capped_text(text: str, max_tokens: int) -> str:
    """The prefix of ``text`` that ends with its word number ``max_tokens + 2`` (``text``
    itself if it has no more words): its first ``max_tokens`` tokens are ``text``'s."""
    words = max_tokens + _MARGIN
    if len(text) < 2 * words:  # too short to hold more words than that
        return text
    for count, match in enumerate(_WORD.finditer(text), 1):
        if count == words:
            return text[:match.end()]
    return text


def first_tokens(text: str, max_tokens: int) -> list[str]:
    """``tokenize(text)[:max_tokens]``, in time and memory bounded by ``max_tokens``."""
    return tokenize(capped_text(text, max_tokens))[:max_tokens]
