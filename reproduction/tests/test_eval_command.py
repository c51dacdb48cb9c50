"""``probsent eval`` end to end on tiny models built here, its errors and its output protection."""
import json
import math
import shutil
from pathlib import Path

import pytest
import torch

from tests.helpers import write_toy_pairs
from probsent.api import SentenceModel
from probsent.api import load as probsent_load
from probsent.cli import main
from probsent.training import load_mapped_pairs
from probsent.training import apply_mixture
from reproduction.evaluation import paper
from reproduction.evaluation.command import JSON_NAME, REPORT_NAME
from reproduction.evaluation.results import load_evaluation
from probsent.models import build_model
from probsent.training import build_vocabulary

def tiny_model(directory: Path, pairs: Path, model_type: str, prior_weight: float = 1e-4, seed: int = 0) -> Path:
    """A randomly initialized model whose config names ``pairs`` as its training data."""
    torch.manual_seed(seed)
    vocab, _, _ = build_vocabulary(apply_mixture(load_mapped_pairs(pairs)), 100, 1)
    encoder = build_model({"type": model_type, "vocab_size": len(vocab), "dim": 8})
    training = {"config": {"data": str(pairs), "max_pairs": None, "prior_weight": prior_weight}}
    SentenceModel(encoder, vocab, {"training": training}).save(directory)
    return directory


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """Three tiny models (WLO, WLO without prior, Wordsum) and a private pairs cache."""
    root = tmp_path_factory.mktemp("eval")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PROBSENT_CACHE", str(root / "cache"))
        pairs = write_toy_pairs(root / "pairs.tsv")
        models = {
            "wlo": tiny_model(root / "wlo", pairs, "wlo"),
            "wlo0": tiny_model(root / "wlo0", pairs, "wlo", prior_weight=0.0, seed=1),
            "wordsum": tiny_model(root / "wordsum", pairs, "wordsum"),
        }
        yield root, models


@pytest.fixture(scope="module")
def full_run(workspace, data_dir):
    """One run of the whole command: two models, the ablation model and the Length baseline."""
    root, models = workspace
    out = root / "out"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PROBSENT_CACHE", str(root / "cache"))
        status = main(["eval", "--model", str(models["wlo"]), "--model", str(models["wordsum"]),
                       "--ablation-model", str(models["wlo0"]), "--baseline", "length",
                       "--baseline", "information-content", "--data-dir", str(data_dir), "--out", str(out), "--min-count", "1", "--quiet"])
    return status, out


def test_json_holds_every_part(full_run):
    status, out = full_run
    assert status == 0
    raw = json.loads((out / JSON_NAME).read_text())
    assert raw["format"] == "probsent-eval" and raw["format_version"] == 1
    information = "Information content (training counts of WLO)"
    assert raw["results"]["system_order"] == ["Majority", "SPECITELLER", "WLO", "Wordsum", "Length", information]
    evaluation = load_evaluation(out / JSON_NAME)
    assert evaluation.probsent_version == __import__("probsent").__version__
    assert "specificity/news-test/tknsents.txt" in evaluation.data_sha256
    assert all(len(h) == 64 for h in evaluation.data_sha256.values())
    systems = evaluation.results.systems
    assert list(systems) == ["Majority", "SPECITELLER", "WLO", "Wordsum", "Length", information]
    wlo = systems["WLO"]
    assert wlo.config["model"]["type"] == "wlo"
    assert None not in (wlo.length_normalized_news, wlo.snli, wlo.sts, wlo.lexical, wlo.sentential)
    assert systems["Wordsum"].lexical is None and systems["Length"].sts is None
    assert wlo.lexical.n_words > 0 and set(wlo.lexical.lists) == {
        "small_norm_small_abs_entropy", "small_norm_small_entropy",
        "large_norm_small_abs_entropy", "large_norm_small_entropy"}
    assert wlo.sentential.measure == "entropy" and systems["Wordsum"].sentential.measure == "norm"
    ablation = evaluation.results.ablation
    assert ablation.with_prior.prior_weight == 1e-4 and ablation.without_prior.prior_weight == 0.0
    assert ablation.with_prior.accuracy == wlo.specificity.news.accuracy
    assert systems["Majority"].specificity.news.accuracy == pytest.approx(54.576, abs=0.01)


def test_every_model_has_a_generality_row_with_its_baselines(full_run):
    _, out = full_run
    evaluation = load_evaluation(out / JSON_NAME)
    systems = evaluation.results.systems
    for name in ("WLO", "Wordsum"):
        generality = systems[name].generality
        assert generality.dev.n + generality.test.n > 0, name  # the toy words have WordNet hypernyms
        assert generality.dev_general_rarer.n <= generality.dev.n
        assert generality.dev.information_content_training is not None  # the toy pairs' counts
    assert systems["Length"].generality is None  # baselines are read on each model's own pairs
    text = (out / REPORT_NAME).read_text()
    section = text[text.index("## Lexical generality"):]
    half = "dev" if systems["WLO"].generality.dev.n else "test"
    share = getattr(systems["WLO"].generality, half)
    assert f"| WLO | {half}, all | {share.n:,} | {share.model:.1f} |" in section


def test_report_has_the_tables_in_order_beside_the_paper(full_run):
    _, out = full_run
    text = (out / REPORT_NAME).read_text()
    evaluation = load_evaluation(out / JSON_NAME)
    section = text[text.index("## Table 2"):text.index("## Table 3")]
    for name in ("WLO", "Wordsum", "Length", "Majority"):
        # | name | news acc | paper | twitter rho | paper | yelp | paper | movie | paper | F1 | note |
        cells = next(line for line in section.splitlines() if line.startswith(f"| {name} |")).split(" | ")
        spec = evaluation.results.systems[name].specificity
        assert cells[1] == f"{spec.news.accuracy:.1f}" and cells[9] == f"{spec.news.f1:.1f}", name
        if spec.twitter is not None:
            assert cells[3::2][:3] == [f"{spec.domain(d).spearman:.1f}" for d in ("twitter", "yelp", "movie")], name
    titles = [f"## Table {n}" for n in (2, 3, 4, 5, 6, 7, 8)]
    positions = [text.index(title) for title in titles]
    assert positions == sorted(positions)
    assert "probsent eval --model" in text and f"--out {out}" in text  # the command that made it
    assert "News acc paper" in text and paper.CITATION in text
    for row in paper.TABLE2:
        assert f"| {row.label} |" in text or any(f"| {alias} |" in text for alias in row.aliases)
    assert "| InferSent | not run |" in text
    assert "| WLO without the prior | WLO (no prior) | 0 |" in text
    assert "| 77.4 |" in text and "| 73.7 |" in text  # paper numbers of Tables 2/7 and 8


def test_information_content_has_a_row_wherever_word_counts_stand(full_run):
    _, out = full_run
    text = (out / REPORT_NAME).read_text()
    evaluation = load_evaluation(out / JSON_NAME)
    name = "Information content (training counts of WLO)"
    entry = evaluation.results.systems[name]
    assert entry.kind == "baseline" and entry.sts is None
    assert any(note.startswith("Information content: -log p(w)") and "pairs.tsv" in note for note in evaluation.notes)
    for title, cell in (("## Table 2", entry.specificity.news.accuracy), ("## Table 3", entry.length_normalized_news.accuracy),
                        ("## Table 4", entry.snli.entailment), ("## When length misleads", entry.shorter_specific.accuracy)):
        section = text[text.index(title):]
        section = section[:section.index("\n## ", 1)]
        assert f"| {name} | {cell:.1f} |" in section, title
    table2 = text[text.index("## Table 2"):text.index("## Table 3")]
    assert table2.index("| Length |") < table2.index(f"| {name} |")  # placed with the word-count rows


def test_plots_are_pngs(full_run):
    _, out = full_run
    evaluation = load_evaluation(out / JSON_NAME)
    expected = {f"plots/specificity-{d}.png" for d in ("twitter", "yelp", "movie")} | {"plots/lexical-wlo.png"}
    assert set(evaluation.plots) == expected
    for relative in expected:
        assert (out / relative).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "lexical-wlo.tsv").read_text().startswith("word\tcount\tnorm\tentropy\n")
    assert not [p.name for p in out.rglob("*") if p.name.startswith(".")]  # no temporaries left


def test_non_empty_out_dir_is_refused(full_run, capsys, data_dir):
    _, out = full_run
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    assert main(["eval", "--baseline", "length", "--data-dir", str(data_dir), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("probsent: error: ") and err.count("\n") == 1 and "--force" in err
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before


def test_force_replaces_only_report_files(tmp_path, data_dir):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / REPORT_NAME).write_text("old report")
    assert main(["eval", "--baseline", "length", "--data-dir", str(data_dir), "--out", str(out), "--force",
                 "--quiet"]) == 0
    assert (out / "notes.txt").read_text() == "mine"
    text = (out / REPORT_NAME).read_text()
    assert text.startswith("# probsent evaluation report") and "--force" in text
    assert "No WLO model was evaluated." in text


def one_line_error(capsys, argv, *needles):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("probsent: error: ") and err.count("\n") == 1, err
    for needle in needles:
        assert needle in err
    return err


def test_missing_data_dir(tmp_path, capsys):
    one_line_error(capsys, ["eval", "--baseline", "length", "--data-dir", str(tmp_path / "absent"),
                            "--out", str(tmp_path / "out")], str(tmp_path / "absent"))
    assert not (tmp_path / "out").exists()


def test_missing_data_file(tmp_path, capsys, data_dir):
    copy = tmp_path / "data"
    shutil.copytree(data_dir / "specificity", copy / "specificity", ignore=shutil.ignore_patterns("yelpv.txt"))
    for name in ("sts", "snli"):
        (copy / name).symlink_to(data_dir / name)
    one_line_error(capsys, ["eval", "--baseline", "length", "--data-dir", str(copy), "--out", str(tmp_path / "out")],
                   "yelpv.txt")
    assert not (tmp_path / "out").exists()


def test_missing_model_and_wrong_ablation(workspace, tmp_path, capsys, data_dir):
    _, models = workspace
    one_line_error(capsys, ["eval", "--model", str(tmp_path / "nomodel"), "--data-dir", str(data_dir),
                            "--out", str(tmp_path / "out")], "nomodel")
    one_line_error(capsys, ["eval", "--model", str(models["wordsum"]), "--ablation-model", str(models["wlo0"]),
                            "--data-dir", str(data_dir), "--out", str(tmp_path / "out")], "WLO")


def test_nothing_to_evaluate(tmp_path, capsys):
    one_line_error(capsys, ["eval", "--out", str(tmp_path / "out")], "--model")


def test_baseline_all_is_every_untrained_scorer(data_dir):
    from probsent.cli import build_parser
    from reproduction.evaluation.command import baseline_systems
    from reproduction.evaluation.datasets import DataDir

    args = build_parser().parse_args(["eval", "--baseline", "all", "--skip-transformer"])
    systems, notes = baseline_systems(args.baseline, args.skip_transformer, DataDir(data_dir))
    assert [s.name for s in systems] == ["Length", "Word Freq (sum)", "Word Freq (avg)", "Information content (wordfreq)",
                                         "GloVe (sum)", "GloVe (avg)"]
    assert [s.paper_label for s in systems] == ["Length", None, None, None, "GloVe sum", "GloVe avg"]
    assert [s.encoder is not None for s in systems] == [False, False, False, False, True, True]  # STS: vectors only
    assert len(notes) == 2 and "--skip-transformer" in notes[0] and "no --model was given" in notes[1]
    assert systems[0].scorer.specificity(["It isn't."]).tolist() == [4.0]  # it / is / n't / .
    # names given one by one keep their order, once each
    repeated, notes = baseline_systems(["glove-sum", "length", "glove-sum"], False, DataDir(data_dir))
    assert [s.name for s in repeated] == ["GloVe (sum)", "Length"] and notes == []


def test_unknown_baseline_is_a_usage_error(capsys):
    from probsent.cli import build_parser

    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["eval", "--baseline", "bert"])
    assert exit_info.value.code == 2 and "invalid choice: 'bert'" in capsys.readouterr().err


def test_information_content_counts_the_first_models_training_pairs(workspace, data_dir):
    from collections import Counter

    from reproduction.evaluation.command import information_content
    from reproduction.evaluation.datasets import DataDir
    from reproduction.evaluation.suite import Options, SharedTrainingPairs, System
    from probsent.api import tokenize
    from tests.helpers import TOY_PAIRS

    root, models = workspace
    model = probsent_load(models["wlo"])
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PROBSENT_CACHE", str(root / "cache"))
        shared_pairs = SharedTrainingPairs(Options(progress=False), DataDir(data_dir).root)
        scorer, note = information_content((System("WLO", "model", None, model=model), shared_pairs))  # type: ignore[arg-type]
    assert scorer.name == "Information content (training counts of WLO)" and "add-one smoothed" in note
    # by hand: every side of the toy file (25 copies of TOY_PAIRS), counted token by token
    counts = Counter(t for pair in TOY_PAIRS for side in pair for t in tokenize(side))
    counts = Counter({w: 25 * c for w, c in counts.items()})
    total = sum(counts.values()) + len(counts) + 1  # N + V + 1
    word = next(iter(counts))
    expected = math.log(total / (counts[word] + 1)) + math.log(total)  # the word, then an unseen one
    assert scorer.specificity([f"{word} qzxqzxqzx"])[0] == pytest.approx(expected, rel=1e-12)


def test_information_content_falls_back_to_wordfreq_without_the_training_file(tmp_path, workspace, data_dir):
    from reproduction.evaluation.command import information_content
    from reproduction.evaluation.datasets import DataDir
    from reproduction.evaluation.suite import Options, SharedTrainingPairs, System

    root, models = workspace
    model = probsent_load(models["wlo"])
    model.config["training"]["config"]["data"] = str(tmp_path / "gone.tsv")
    shared_pairs = SharedTrainingPairs(Options(progress=False), DataDir(data_dir).root)
    scorer, note = information_content((System("WLO", "model", None, model=model), shared_pairs))  # type: ignore[arg-type]
    assert scorer.name == "Information content (wordfreq)"
    assert "WLO's training counts are not at hand" in note and "gone.tsv" in note
