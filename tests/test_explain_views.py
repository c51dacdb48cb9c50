"""Explanations people can look at (issue 33, item 5): ``probsent explain`` with several
sentences, --input, --format json and --html; ``Explanation`` as rows, a DataFrame and HTML
(checked with a parser: escaped, one shaded span per token, the total and the prior)."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

import probsent
from probsent.cli import main

TRICKY = 'A <b>bold</b> & "quoted" claim about <script>alert(1)</script> zzzunknownzzz.'
SENTENCES = ["The Dow fell 2.3 % to 10,421.67 on Tuesday.", "It is good.", TRICKY]


class _Spans(HTMLParser):
    """The token spans (their text, data and background colour) and the texts of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.spans: list[dict] = []
        self.tags: list[str] = []
        self.totals: list[str] = []
        self.stats: list[dict] = []
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if "probsent-token" in classes and "data-entropy" in attrs:
            color = re.search(r"background: (rgb\([^)]*\))", attrs["style"]).group(1)
            self.spans.append({"text": "", "entropy": float(attrs["data-entropy"]), "color": color,
                               "unknown": attrs["data-unknown"] == "true" and "probsent-unknown" in classes,
                               "estimate": attrs["data-estimate"] if "probsent-estimated" in classes else None})
            self._in = "span"
        elif "probsent-total" in classes:
            self.totals.append("")
            self._in = "total"
        elif "probsent-stats" in classes and "data-specificity" in attrs:
            self.stats.append(attrs)
        elif tag != "sup":
            self._in = None

    def handle_endtag(self, tag):
        if tag != "sup":
            self._in = None

    def handle_data(self, data):
        if self._in == "span":
            self.spans[-1]["text"] += data
        elif self._in == "total":
            self.totals[-1] += data


def _parsed(page: str) -> _Spans:
    parser = _Spans()
    parser.feed(page)
    parser.close()
    return parser


@pytest.fixture(scope="module")
def model():
    return probsent.load()


def _typed(explanation) -> list[str]:
    return [w.typed + ("?" if w.unknown else "~" if w.estimate is not None else "") for w in explanation.words]


def test_html_is_escaped_on_one_scale_and_totalled(model) -> None:
    explanation = model.explain(TRICKY)
    parsed = _parsed(explanation._repr_html_())
    assert "script" not in parsed.tags and "b" not in parsed.tags  # the sentence's markup is text
    # as typed; a word read as <unk> marked "?", one whose term the open vocabulary estimated "~"
    assert [s["text"] for s in parsed.spans] == _typed(explanation)
    assert "<script>alert(1)</script" in "".join(s["text"] for s in parsed.spans)  # shown as typed, as text
    assert [s["entropy"] for s in parsed.spans] == [w.entropy for w in explanation.words]
    assert [s["unknown"] for s in parsed.spans] == [w.unknown for w in explanation.words]
    assert [s["estimate"] for s in parsed.spans] == [w.estimate for w in explanation.words]
    assert "form" in explanation.words[-2].estimate  # the shipped model's open vocabulary: zzzunknownzzz
    scale = explanation.scale
    for span in parsed.spans:  # the colour is the term itself on the side's end, by hand
        term = span["entropy"]
        strength = min(1.0, term / scale.specific_end if term < 0 else term / scale.general_end)
        end = (67, 147, 195) if term < 0 else (214, 96, 77)
        expected = tuple(round(n + (e - n) * strength) for n, e in zip((247, 247, 247), end))
        assert span["color"] == "rgb({}, {}, {})".format(*expected)
    (total,) = parsed.totals
    assert f"entropy {explanation.entropy:.3f}" in total and f"prior {explanation.prior_entropy:.3f}" in total
    (stats,) = parsed.stats
    assert float(stats["data-specificity"]) == pytest.approx(model.specificity(TRICKY))
    assert float(stats["data-percentile"]) == pytest.approx(model.percentile(TRICKY))
    assert float(stats["data-probability"]) == pytest.approx(model.probability(TRICKY))
    assert "font-family" in explanation._repr_html_() and "probsent-legend" in explanation._repr_html_()


def test_the_same_word_has_the_same_colour_in_every_sentence(model) -> None:
    vague = "There are many things that people do in many different ways every day."
    precise = "Einstein published relativity in 1905 in different ways."
    spans = {}
    for sentence in (vague, precise, vague):
        for span in _parsed(model.explain(sentence)._repr_html_()).spans:
            spans.setdefault(span["text"], set()).add(span["color"])
    assert all(len(colors) == 1 for colors in spans.values())
    scale = model.explain(vague).scale
    # the vague sentence's strongest blue is paler than the precise one's: one scale, not each its own
    strongest = [max(scale.strength(w.entropy) for w in model.explain(s).words if w.entropy < 0)
                 for s in (vague, precise)]
    assert strongest[0] < 0.5 < strongest[1]


def test_the_scale_ends_are_the_model_s_own_terms(model) -> None:
    """Issue 49 item 4: full red at the model's highest term, full blue at the term of its entry
    more specific than 99 % of the others; both are terms of named entries (each explained alone
    gives that term), and the legend names them."""
    from probsent.readouts.explanation import legend_html
    from probsent.api import scoring_engine
    scale = model.explain("It is good.").scale
    ordered = sorted(scoring_engine(model).term_table("explain").terms[1:].tolist())  # the entries, <unk> left out
    assert scale.general_end == ordered[-1] > 0
    assert scale.specific_end == ordered[int(0.01 * len(ordered))] < 0
    more_specific = sum(t < scale.specific_end for t in ordered) / len(ordered)
    assert 0.0095 <= more_specific <= 0.0105  # the most specific 1 % saturate, no more
    for word, end in ((scale.general_word, scale.general_end), (scale.specific_word, scale.specific_end)):
        (alone,) = [w for w in model.explain(word).words if w.word == word]
        assert alone.entropy == end
    legend = legend_html(scale)
    assert f"term {scale.general_end:+.2f} (&#x27;{scale.general_word}&#x27;): more general" in legend
    assert f"{scale.specific_end:+.2f} (&#x27;{scale.specific_word}&#x27;): more specific" in legend


def test_both_ends_show_on_the_readme_examples(model) -> None:
    """On the README's example sentences (examples/sentences.txt), some word is full red and
    some word at least 80 % blue; on the old symmetric scale (+-2.87) red reached 17 %."""
    sentences = (Path(__file__).resolve().parents[1] / "examples" / "sentences.txt").read_text().splitlines()
    words = [w for sentence in sentences for w in model.explain(sentence).words]
    scale = model.explain(sentences[0]).scale
    assert max(scale.strength(w.entropy) for w in words if w.entropy > 0) == 1.0
    assert max(scale.strength(w.entropy) for w in words if w.entropy < 0) >= 0.8
    old_unit = -scale.term_at(0.9)
    assert max(w.entropy for w in words) / old_unit < 0.2


def test_bidirectional_controls_are_escaped_visibly_in_the_html(model, tmp_path) -> None:
    """Issue 50 item 15: a right-to-left override in a sentence is written as its escape, so the
    page shows the text in its order."""
    sentence = "Pay the invoice \u202egnp.exe\u202c today, \u2066please\u2069."
    page = tmp_path / "bidi.html"
    assert main(["explain", sentence, "--html", str(page)]) == 0
    written = page.read_text(encoding="utf-8")
    assert not any(ch in written for ch in "\u202e\u202c\u2066\u2069")
    assert "\\u202egnp" in written or "\\u202e" in written
    shown = "".join(span["text"] for span in _parsed(written).spans)
    assert "\\u202e" in shown and "gnp.exe" in shown


def test_withheld_numbers_say_why_in_the_html_and_json(model, capsys) -> None:
    (stats,) = _parsed(model.explain("lol ok")._repr_html_()).stats
    assert stats["data-percentile"] == "nan" and stats["data-note"] == "too short"
    assert "too short" in model.explain("lol ok").summary()
    assert main(["explain", "--format", "json", "lol ok", "It is good."]) == 0
    withheld, read = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert (withheld["percentile"], withheld["probability"], withheld["note"]) == (None, None, "too short")
    assert read["percentile"] == pytest.approx(model.percentile("It is good.")) and read["note"] == ""
    assert read["probability"] == pytest.approx(model.probability("It is good."))
    assert [w["text"] for w in read["words"]] == ["It", "is", "good", "."]


def test_rows_and_frame(model) -> None:
    explanation = model.explain(TRICKY)
    rows = explanation.rows()
    assert [r["token"] for r in rows] == [w.token for w in explanation.words]
    # the shipped model estimates every word without an entry (its open vocabulary): none is <unk>
    assert any(r["word"] is None and r["estimate"] and not r["unknown"] for r in rows)
    assert not any(r["unknown"] for r in rows)
    frame = explanation.to_frame()
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == ["token", "text", "word", "unknown", "estimate",
                                                                       "entropy", "rank", "shift_norm"]
    assert explanation.prior_entropy + frame["entropy"].sum() == pytest.approx(model.entropy(TRICKY), abs=1e-9)


def test_cli_explains_several_sentences_as_json(model, capsys, tmp_path: Path) -> None:
    assert main(["explain", "--format", "json", *SENTENCES]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    for line, sentence in zip(lines, SENTENCES):
        record = json.loads(line)
        assert record["sentence"] == sentence
        assert record["entropy"] == pytest.approx(model.entropy(sentence), abs=1e-9)
        assert record["prior_entropy"] + sum(w["entropy"] for w in record["words"]) == pytest.approx(record["entropy"])
    listing = tmp_path / "sentences.txt"
    listing.write_text("\n".join(SENTENCES[:2]) + "\n\n", encoding="utf-8")
    assert main(["explain", "--input", str(listing), "--format", "json"]) == 0
    assert [json.loads(line)["sentence"] for line in capsys.readouterr().out.splitlines()] == SENTENCES[:2]
    assert main(["explain", *SENTENCES[:2]]) == 0  # text: each sentence, then its table
    text = capsys.readouterr().out
    assert text.count(" = prior ") == 2 and SENTENCES[0] in text


def test_cli_writes_the_html_page(model, capsys, tmp_path: Path) -> None:
    page = tmp_path / "explain.html"
    assert main(["explain", *SENTENCES, "--html", str(page)]) == 0
    parsed = _parsed(page.read_text(encoding="utf-8"))
    assert [s["text"] for s in parsed.spans] == [t for s in SENTENCES for t in _typed(model.explain(s))]
    assert len(parsed.totals) == 3 and "script" not in parsed.tags
    assert main(["explain", "It is good.", "--html", str(page)]) == 2  # never overwritten without --force
    assert "already exists" in capsys.readouterr().err
    assert main(["explain", "It is good.", "--html", str(page), "--force"]) == 0
    assert len(_parsed(page.read_text(encoding="utf-8")).totals) == 1


@pytest.mark.parametrize("argv,message", [(["explain"], "no sentence"),
                                          (["explain", "x", "--input", "-"], "not both")])
def test_cli_explain_errors_are_one_line(argv, message, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_text_output_escapes_control_sequences_and_aligns_columns(model, capsys) -> None:
    from probsent.readouts.explanation import display_width, fitted, printable

    sentence = "Evil \x1b]0;pwned\x07 \x1b[31mred\x1b[0m 日本語の文 😀😀 \u202eword and a-very-long-token-" + "x" * 60 + "."
    assert main(["explain", sentence, "It is good."]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out  # nothing a terminal would run
    assert "\\x1b]0;pwned\\x07" in out and "\\u202e" in out  # shown, escaped
    table = out.split("\n\n")[0].splitlines()[4:]  # the header, then one row a token
    assert len({display_width(line) for line in table}) == 1  # every row as wide: the columns line up
    assert printable("a\tb\x00c") == "a\tb\\x00c" and display_width("日本😀e\u0301") == 7  # a combining mark takes no cell
    assert fitted("日本語", 5) == "日本…" and fitted("ab", 4) == "ab  "
