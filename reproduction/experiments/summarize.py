"""Write docs/RESULTS.md from the committed evaluation JSONs (no model is needed).

    python -m reproduction.experiments.summarize

Reads results/<run>/evaluation.json (one per run of experiments/plan.py: its best/ and
best-news/ models), results/shipped/evaluation.json (the model inside the package) and
docs/results/ (the paper's tables for the main models, written by ``probsent eval``).
Every number in the output comes from those files.
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

from scipy import stats

from reproduction.evaluation.results import SystemResult
from probsent.files.atomic_writes import write_text
from probsent.models import model_class
from reproduction.evaluation.paper import TABLE2, TABLE7_PRIOR_ABLATION as TABLE7
from probsent.training import TrainConfig
from reproduction.experiments.paths import LOG, REPO, WING, REPORT_DIR, RESULTS_DIR, SHIPPED_BEFORE
from reproduction.experiments.plan import EVAL_EVERY, LSTM_STEPS, MIXTURE, MODELS, RUNS, STEPS, Run, runs_by_name
from reproduction.experiments.design_report import render as design_section
from reproduction.experiments.generality_report import generality_section
from reproduction.experiments.probability_report import report_lines as probability_section
from reproduction.experiments.model_card import generality_lines
from reproduction.experiments.representation_report import render as representation_section
from reproduction.experiments.recipe_summary import mean_sd, sections as recipe_sections
from reproduction.experiments.selection import SELECTABLE, best_run, dev_news, dev_sts, load_json, load_run, run_results
from reproduction.experiments.table_columns import DOMAINS

# the plan's shipping choice (every WLO run of the plan x each vocabulary size), kept when
# the recipe study shipped another model
PLAN_CHOICE = SHIPPED_BEFORE / "choice.json"
OUT = WING / "docs" / "RESULTS.md"
PAPER_WLO_NEWS = next(row.numbers["news"] for row in TABLE2 if row.label == "WLO")
DIM = TrainConfig().dim
INIT_STD = TrainConfig().scale_init_std
MEGABATCH_SENTENCES = 2 * TrainConfig().batch_size * TrainConfig().megabatch  # both sides of its pairs
LABELS = {model: model_class(model).label for model in MODELS}  # the registry's labels



def _fmt(value: float | None, digits: int = 1) -> str:
    return "—" if value is None or value != value else f"{value:.{digits}f}"


def _test(entry: SystemResult | None) -> list[float | None]:
    if entry is None:
        return [None] * 4
    spec = entry.specificity
    return [spec.news.accuracy, *(spec.domain(d).spearman for d in DOMAINS)]


def _sts_test(entry: SystemResult | None) -> float | None:
    if entry is None or entry.sts is None:
        return None
    return entry.sts.pearson["cosine"].sets_mean


def _steps(entry: SystemResult | None) -> str:
    return f"{entry.training['step']:,}" if entry else "—"


HEADER = ("| Run | Setting | STS17 r (dev) | News-train acc (dev) | News acc | Twitter ρ | Yelp ρ | "
          "Movie ρ | STS12-16 r | News acc of best-news/ |")


def _run_row(name: str, result: dict[str, Any]) -> str:
    run = runs_by_name()[name]
    best, news = result["best"], result["news"]
    setting = run.note or ", ".join(f"{k}={v}" for k, v in run.flags.items() if k != "model") or "defaults"
    cells = [f"`{name}`", setting, _fmt(dev_sts(best), 3), _fmt(dev_news(news)),
             *(_fmt(v) for v in _test(best)), _fmt(_sts_test(best)),
             _fmt(_test(news)[0])]
    return "| " + " | ".join(cells) + " |"


def _with_seeds(base: str) -> list[str]:
    """Run ``base`` and its ``-seed<N>`` twins of the plan."""
    return [base] + [r.name for r in RUNS if r.name.startswith(base + "-seed")]


def _seed_table(found: dict[str, dict[str, Any]]) -> list[str]:
    """Mean and spread over seeds of every run that has ``-seed<N>`` twins in the plan."""
    bases = list(dict.fromkeys(r.name.rsplit("-seed", 1)[0] for r in RUNS if r.group == "seed"))
    lines = ["| Run (seeds 1, 2, 3) | Seeds found | News acc | Twitter ρ | Yelp ρ | Movie ρ | STS17 r (dev) |",
             "|---|---|---|---|---|---|---|"]
    for base in bases:
        names = _with_seeds(base)
        have = [found[n]["best"] for n in names if n in found and found[n]["best"]]
        columns = list(zip(*[_test(e) for e in have])) if have else [[]] * 4
        cells = [f"`{base}`", str(len(have)), *(mean_sd([v for v in col if v is not None]) for col in columns),
                 mean_sd([100 * dev_sts(e) for e in have])]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Mean ± sample standard deviation over the seeds (STS17 r ×100) of the `best/` models of "
              "each run and its `-seed2`, `-seed3` twins (same settings, other seed)."]
    return lines


def _mixture_lines(entry: SystemResult | None) -> list[str]:
    if entry is None:
        return ["(no evaluated run)"]
    report = entry.training.get("data_report", {})
    mixture = report.get("mixture")
    if not mixture:
        return ["(the run's config records no mixture)"]
    caps = ", ".join(f"{name} {n:,}" for name, n in mixture.get("source_caps", {}).items()) or "none"
    lines = [f"{mixture['pairs']:,} pairs; per-source cap: {mixture['max_per_source'] or 'none'}; "
             f"single-source caps: {caps} (0 = left out); sides of at least {mixture['min_tokens']} token(s); "
             f"word overlap at least {mixture.get('min_overlap', 0.0)} and at most "
             f"{mixture['max_overlap']}.", "", "| Source | Pairs |", "|---|---|"]
    by_size = sorted(mixture["pairs_per_source"].items(), key=lambda item: -item[1])
    lines += [f"| {name} | {count:,} |" for name, count in by_size]
    return lines


def _shipped_lines() -> list[str]:
    evaluation = load_run(RESULTS_DIR / "shipped" / "evaluation.json")
    if evaluation is None:
        return ["No shipped model has been evaluated (`python -m reproduction.experiments.reproduce --ship`)."]
    entry = evaluation.results.first_model()
    export = entry.training.get("export", {})
    news, *rho = _test(entry)
    vocab = REPO / "probsent" / "pretrained" / "wlo" / "vocab.txt"  # <unk>, then a word a line
    words = len(vocab.read_text(encoding="utf-8").splitlines()) - 1
    kept = (f"every one of its {words:,} trained words" if export.get("max_words") is None else
            f"the {min(words, export['max_words']):,} most frequent words (at most {export['max_words']:,} "
            f"were allowed)")
    choice = load_json(RESULTS_DIR / "shipped" / "choice.json") or {}
    chosen = (f" Chosen by the ship rule (`{choice['rule']}`; the next section)." if choice.get("rule") else "")
    return [f"`probsent/pretrained/wlo`: exported from `{export.get('from')}` with {kept}, "
            f"{export.get('dtype')} weights.{chosen} "
            f"News accuracy {_fmt(news)}, Twitter / Yelp / Movie ρ {' / '.join(_fmt(r) for r in rho)}; "
            f"STS12-16 mean r {_fmt(_sts_test(entry))}. Its model card is "
            f"`probsent/pretrained/wlo/MODEL_CARD.md`.{_shipped_engine_note(entry)}",
            *_word_count_rows(evaluation), *generality_lines(evaluation), *_first_rule_lines()]


def similarity_readout_lines() -> list[str]:
    """The pre-registered choice of ``similarity()``'s default read-out: its development record
    and its one test number (``experiments/similarity_readout.py``)."""
    dev = load_json(RESULTS_DIR / "similarity-readout" / "dev.json")
    test = load_json(RESULTS_DIR / "similarity-readout" / "test.json")
    if dev is None:
        return []
    splits = list(dev["pearson_x100"])
    measures = list(dev["pearson_x100"][splits[0]])
    lines = ["### The default similarity read-out", "",
             "`similarity()` returns, by default, the read-out that a rule committed before any of its numbers "
             "(commit 1b398fc, `experiments/similarity_readout.py`) chose on development sets: among the bounded "
             "read-outs under which a sentence is closest to itself, the best mean of STS Benchmark dev and "
             f"STS 2017 Pearson, the simpler one within {dev['tie_points']:.1f} point "
             "(`python -m reproduction.experiments.similarity_readout --stage dev`; the expected inner product is shown, "
             "not eligible):", "",
             "| read-out | " + " | ".join(splits) + " | mean | eligible |", "|---|" + "---|" * (len(splits) + 2)]
    for measure in measures:
        values = [dev["pearson_x100"][split][measure] for split in splits]
        lines.append(f"| `{measure}` | " + " | ".join(f"{v:.1f}" for v in values)
                     + f" | {sum(values) / len(values):.1f} | {'yes' if measure in dev['candidates'] else 'no'} |")
    lines += ["", f"Chosen: `{dev['chosen']}`."]
    if test is not None:
        value = test["pearson_x100"]["STSB-test"][test["chosen"]]
        lines[-1] += (f" Its STS Benchmark test Pearson, read once after the choice "
                      f"(`--stage test`): {value:.1f}. Said plainly: the test numbers of the cosine of the means "
                      f"and of concat(mean, var) had been seen before the rule (round 4 below). Both records "
                      f"are of the model shipped now: recomputed when its open vocabulary shipped (issue 49), the "
                      f"choice unchanged; the rule chose, and first read the test, on the model shipped before.")
    return lines + [""]


WORD_COUNT_BASELINES = ("Length", "Word Freq", "Information content")
"""The baselines that count words (their number, their frequency rank, their information content)."""


def _word_count_rows(evaluation) -> list[str]:
    """The shipped model beside the baselines that count words, on every test table they share
    (from results/shipped/evaluation.json, with the command that wrote it)."""
    systems = evaluation.results.systems
    names = [next(iter(n for n, e in systems.items() if e.kind == "model"))]
    names += [n for n, e in systems.items() if e.kind == "baseline" and n.startswith(WORD_COUNT_BASELINES)]
    rows = []
    for name in names:
        entry = systems[name]
        spec, snli = entry.specificity, entry.snli
        cells = [spec.news.accuracy, *(spec.domain(d).spearman for d in DOMAINS),
                 entry.length_normalized_news.accuracy if entry.length_normalized_news else None,
                 *((snli.entailment, snli.neutral, snli.contradiction) if snli else (None,) * 3),
                 entry.shorter_specific.accuracy if entry.shorter_specific else None]
        rows.append(f"| {name} | " + " | ".join(_fmt(c) for c in cells) + " |")
    information = next((n for n in names if n.startswith("Information content")), None)
    note = next((line for line in evaluation.notes if line.startswith("Information content")), "")
    return ["", f"The shipped model beside the baselines that count words, on the test sets (`{evaluation.command}`; "
                "`results/shipped/report.md` has every table). News: accuracy; Twitter / Yelp / Movie: Spearman ρ; "
                "length-normalized News: accuracy (Table 3); SNLI: % of equal-length test pairs whose hypothesis scores "
                "less specific (Table 4); shorter specific: % of probsent's pairs whose short specific sentence scores "
                "higher." + (f" {note}" if information else ""), "",
            "| System | News | Twitter | Yelp | Movie | Length-normalized News | SNLI entailment | SNLI neutral | "
            "SNLI contradiction | Shorter specific |", "|" + "---|" * 10, *rows]


def _shipped_engine_note(entry: SystemResult) -> str:
    """Where the shipped model's training engine differs from the runs now in results/: they
    were retrained after it was chosen, and the choice was not redone."""
    shipped = entry.training.get("config", {}).get("engine", "torch")
    now = {result["best"].training.get("config", {}).get("engine", "torch")
           for name, result in run_results().items() if result["best"] and _model_of(name) == "wlo"}
    if now == {shipped}:
        return ""
    return (f" It was trained with the {shipped} engine and chosen among the WLO runs as they were "
            f"then; the WLO runs now in `results/` were retrained since with the "
            f"{' / '.join(sorted(now))} engine, and the choice has not been redone "
            f"(`python -m reproduction.experiments.reproduce --ship-only` redoes it).")


def _first_rule_lines() -> list[str]:
    """What the first shipping rule (every WLO run competing) chose, kept in
    results/shipped-first-rule/ because it is why the rule changed."""
    evaluation = load_run(RESULTS_DIR / "shipped-first-rule" / "evaluation.json")
    choice = load_json(RESULTS_DIR / "shipped-first-rule" / "choice.json")
    if evaluation is None or choice is None:
        return []
    news, *rho = _test(evaluation.results.first_model())
    length_system = evaluation.results.systems.get("Length")
    length = length_system.specificity.news if length_system else None
    dev = choice["news_train_accuracy"][choice["run"]][str(choice["max_words"])]
    return ["", f"The shipping rules before the ship rule, in full: at first every WLO run competed. With the whole-epoch runs "
            f"added, that rule picked `{choice['run']}` with {choice['max_words']:,} words (news-train "
            f"accuracy {_fmt(dev)} after trimming, the highest of {len(choice['news_train_accuracy'])} runs), "
            f"whose evaluation then gave News {_fmt(news)}"
            + (f", below the Length baseline's {_fmt(length.accuracy)}" if length else "")
            + f", and Twitter / Yelp / Movie ρ {' / '.join(_fmt(r) for r in rho)} "
            f"(`results/shipped-first-rule/`). A run's best-news/ checkpoint is the best of its "
            f"validations, and the whole-epoch runs have up to {max(_validations(n) for n in choice['news_train_accuracy'])} "
            f"of them against {STEPS // EVAL_EVERY} for the others, so their news-train maxima are the most inflated "
            f"by the noise of that development set. That rule then compared only runs trained for the common "
            f"budget of {STEPS:,} steps. We changed it after seeing that test result, which the reader should "
            f"weigh; the ship rule has replaced both since."]


def _validations(name: str) -> int:
    """How many validations a run made (its records in results/<run>/log.jsonl)."""
    return len(_validation_log(name))


def _report_tables() -> list[str]:
    report = REPORT_DIR / "report.md"
    if not report.is_file():
        return ["(docs/results/report.md is missing: run `python -m reproduction.experiments.reproduce --skip-train`)"]
    text = report.read_text(encoding="utf-8").splitlines()
    if text and text[0].startswith("# "):  # its title: the section's own heading stands for it
        text = text[2:] if len(text) > 1 and not text[1].strip() else text[1:]
    # demote its headings one level and point its relative links (plots) into docs/results/
    return [("#" + line if line.startswith("#") else line).replace("](plots/", "](results/plots/")
            for line in text]


def _length_news(found: dict[str, dict[str, Any]]) -> float | None:
    main_eval = load_run(REPORT_DIR / "evaluation.json")
    length = main_eval.results.systems.get("Length") if main_eval else None
    return length.specificity.news.accuracy if length else None


def _news(found: dict[str, dict[str, Any]], name: str, which: str = "best") -> str:
    return _fmt(_test(found[name][which])[0]) if name in found and found[name][which] else "—"


def _caption_share(found: dict[str, dict[str, Any]]) -> str:
    """The share of image-caption pairs in the main runs' mixture, e.g. "72%"."""
    if "wlo" not in found or not found["wlo"]["best"]:
        return "mostly"
    counts = found["wlo"]["best"].training["data_report"]["mixture"]["pairs_per_source"]
    captions = sum(n for name, n in counts.items() if "caption" in name)
    return f"{100 * captions / sum(counts.values()):.0f}%"


def _news_value(found: dict[str, dict[str, Any]], name: str) -> float | None:
    return _test(found[name]["best"])[0] if name in found and found[name]["best"] else None


def seed_spread(found: dict[str, dict[str, Any]], base: str = "wlo") -> float | None:
    """Sample sd of the test News accuracy over ``base`` and its seed twins: the bar a
    single-seed difference must clear to be called one."""
    values = [v for v in (_news_value(found, n) for n in _with_seeds(base)) if v is not None]
    return statistics.stdev(values) if len(values) > 1 else None


def verdict(a: float | None, b: float | None, spread: float | None, higher: str, lower: str,
            same: str) -> str:
    """``higher`` if a - b exceeds ``spread`` (a seed sd), ``lower`` if b - a does, else ``same``;
    "not measured" where a number is missing."""
    if a is None or b is None or spread is None:
        return "not measured"
    return higher if a - b > spread else lower if b - a > spread else same


def _ranks_alike(xs: list[float | None], ys: list[float | None]) -> str:
    """Whether two lists order their items the same way, the other way, or neither."""
    pairs = [(x, y) for x, y in zip(xs, ys) if x is not None and y is not None]
    if len(pairs) < 3:
        return "not measured"
    rho = stats.spearmanr(*zip(*pairs)).statistic
    return "the same way" if rho >= 0.8 else "the other way" if rho <= -0.8 else "differently"


def _observations(found: dict[str, dict[str, Any]]) -> list[str]:
    """What the sweeps show, each claim with the numbers it rests on (test News accuracy of
    the STS-selected best/ models unless said otherwise; reported, not used to choose)."""
    sts = lambda name: _fmt(dev_sts(found[name]["best"]), 3) if name in found else "—"  # noqa: E731
    spread = seed_spread(found)
    mixtures = ["wlo", "wlo-allpairs", "wlo-text", "wlo-closepairs"]
    sts_order = _ranks_alike([_news_value(found, n) for n in mixtures],
                             [dev_sts(found[n]["best"]) if n in found and found[n]["best"] else None for n in mixtures])
    bar = (f"the bar for a difference is the sd of `wlo` over seeds 1-3, {_fmt(spread)} points; these runs "
           f"have one seed")
    return [
        f"- **The mixture**: News {_news(found, 'wlo')} "
        f"on the main mixture (no Bible; {_caption_share(found)} image captions), {_news(found, 'wlo-allpairs')} on "
        f"every pair, {_news(found, 'wlo-text')} without captions and Bible, {_news(found, 'wlo-closepairs')} "
        f"on close paraphrases (word overlap >= 0.4); {bar}. STS 2017 ranks them {sts_order} "
        f"({sts('wlo')}, {sts('wlo-allpairs')}, {sts('wlo-text')}, {sts('wlo-closepairs')}). Our reading, "
        f"from inspecting the trained word terms: loose caption pairs teach semantic similarity but give "
        f"frequent function words positive entropy terms, so longer sentences look more general.",
        f"- **Mini-batch negatives** against mega-batch ones at this budget: News "
        f"{_news(found, 'wlo-minibatch')} vs {_news(found, 'wlo')}, "
        + verdict(_news_value(found, 'wlo-minibatch'), _news_value(found, 'wlo'), spread, "better",
                  "worse", "no difference beyond the seed spread")
        + f" ({bar}); STS 2017 {sts('wlo-minibatch')} vs {sts('wlo')}.",
        f"- **The prior**: News {_news(found, 'wlo-lambda0')} without it, {_news(found, 'wlo-lambda1e-5')} / "
        f"{_news(found, 'wlo')} / {_news(found, 'wlo-lambda1e-3')} / {_news(found, 'wlo-lambda1e-2')} with "
        f"λ = 1e-5 / 1e-4 / 1e-3 / 1e-2. The paper's gap ({TABLE7['with_prior']['accuracy']} with, "
        f"{TABLE7['without_prior']['accuracy']} without): at this budget ({STEPS:,} steps) the prior "
        + verdict(_news_value(found, 'wlo'), _news_value(found, 'wlo-lambda0'), spread, "helps",
                  "hurts", "makes no difference beyond the seed spread")
        + f" ({bar}); the 3-seed comparison over one epoch is in the recipe study's sections (Table 7 at its budget).",
        "- **Rare words**: a word seen a few times in training keeps a term close to its random "
        f"initialization (a sum of {DIM} values log|A|, with A ~ N(1, {INIT_STD}^2): standard deviation "
        f"about {INIT_STD * DIM ** 0.5:.1f}), which is noise for "
        "specificity. Trimming the vocabulary so that such words share the trained `<unk>` term helps: "
        f"{_trim_share()} (the plan's shipping choice, `{PLAN_CHOICE.relative_to(WING).as_posix()}`). "
        f"{_small_vocab_line(found)}",
        f"- **Hard negatives from loose pairs make the other models drift or collapse**: with negatives from "
        f"the mega-batch on the main mixture, Wordsum's STS 2017 falls from the untrained model's "
        f"{_untrained(found, 'wordsum-minibatch')} (its best checkpoint: {sts('wordsum')}). Hard negatives "
        f"among the {MEGABATCH_SENTENCES:,} sentences of a mega-batch of captions are often closer than the partner caption, and making every sentence "
        f"alike lowers the loss. Negatives from the mini-batch ({sts('wordsum-minibatch')}) or leaving out the "
        f"captions ({sts('wordsum-text')}) avoid it. LSTMavg collapses within {EVAL_EVERY} steps (its first validation) on the main mixture "
        f"whatever the negatives (every sentence gets nearly one direction and the loss stays at twice the "
        f"margin; STS 2017 {sts('lstmavg')} and {sts('lstmavg-minibatch')}, untrained "
        f"{_untrained(found, 'lstmavg-minibatch')}) and trains without captions and with mini-batch negatives "
        f"({sts('lstmavg-text-minibatch')}). With PyTorch's default initialization LSTMGaussian collapses to the prior in the three settings tried: every "
        f"sentence's Gaussian stays near N(0, I), so partner and negative score alike and the loss stays near "
        f"twice the margin (STS 2017 of its runs: {sts('lstmgaussian')}, {sts('lstmgaussian-minibatch')}, "
        f"{sts('lstmgaussian-text-minibatch')}; untrained {_untrained(found, 'lstmgaussian-minibatch')}); "
        f"a mean map initialized {runs_by_name()['lstmgaussian-text-minibatch-gain10'].flags['mean_init_gain']:g} "
        f"times larger (the initial means spread out) escapes it "
        f"({sts('lstmgaussian-text-minibatch-gain10')} without captions, with mini-batch negatives). WLO, whose means and "
        f"variances start spread out by its word operators, does not collapse.",
        "- **Wordsum and Wordavg train identically**: the cosine does not see the average's 1/n, so the "
        "two runs of each setting learn the same vectors (equal STS 2017 up to rounding) and differ only "
        "in their specificity score: the norm of a sum grows with length and tracks specificity, the norm "
        "of an average anti-tracks it, as in the paper.",
    ]


def _untrained(found: dict[str, dict[str, Any]], name: str) -> str:
    """STS 2017 Pearson of run ``name``'s model before its first step."""
    entry = found.get(name, {}).get("best")
    value = entry.training.get("untrained_sts17_pearson") if entry else None
    return _fmt(value, 3)


def _trim_share() -> str:
    """For how many WLO runs the smallest vocabulary tried was the best on the news training rows."""
    choice = load_json(PLAN_CHOICE)
    if not choice:
        return "it raised the news-train accuracy of the shipped model's checkpoint"
    tried = choice["news_train_accuracy"]
    smallest = min(int(w) for w in next(iter(tried.values())))
    best_small = sum(max(acc, key=lambda w: acc[w]) == str(smallest) for acc in tried.values())
    return (f"of the {len(tried)} WLO runs, {best_small} reach their best news-train accuracy with "
            f"{smallest:,} words, the fewest tried")


def _small_vocab_line(found: dict[str, dict[str, Any]]) -> str:
    """Training with a small vocabulary against trimming a trained one (news-train accuracy of
    best-news/ models, the development set)."""
    runs = [name for name in ("wlo-vocab5k", "wlo-vocab2k") if name in found and found[name]["news"]]
    choice = load_json(PLAN_CHOICE)
    trimmed = (choice or {}).get("news_train_accuracy", {}).get("wlo")
    if not runs or "wlo" not in found or not trimmed:
        return ""
    words = min(trimmed, key=int)
    sizes = " / ".join(f"{runs_by_name()[name].flags['vocab_size']:,}" for name in runs)
    return (f"Training with a small vocabulary is not the same: news-train accuracy "
            f"{' / '.join(_fmt(dev_news(found[name]['news'])) for name in runs)} with {sizes} words in "
            f"training, against {_fmt(dev_news(found['wlo']['news']))} for `wlo` ({TrainConfig().vocab_size:,} words) and "
            f"{_fmt(trimmed[words])} for `wlo` trimmed to {int(words):,} words after training; STS 2017 "
            f"{' / '.join(_fmt(dev_sts(found[name]['best']), 3) for name in runs)} against "
            f"{_fmt(dev_sts(found['wlo']['best']), 3)}.")


def _other_models_line(found: dict[str, dict[str, Any]], chosen: dict[str, str]) -> str:
    """How the STS-selected run (``chosen``) of each of the four other models compares with the paper."""
    paper = {row.label: row.numbers for row in TABLE2}
    cells = []
    for model, name in chosen.items():
        if model == "wlo":
            continue
        news, *rho = _test(found[name]["best"])
        cells.append(f"{LABELS[model]} (`{name}`) News {_fmt(news)} vs the paper's {paper[LABELS[model]]['news']}, "
                     f"Twitter / Yelp / Movie ρ {' / '.join(_fmt(r) for r in rho)} vs "
                     f"{' / '.join(str(paper[LABELS[model]][d]) for d in DOMAINS)}")
    return ("- **The four other models follow the paper's pattern** once each is selected on STS 2017 over its "
            "own sweeps: " + "; ".join(cells) + ". A sum's norm tracks specificity and an average's "
            "anti-tracks it (Wordavg, LSTMavg); our LSTMGaussian's entropy anti-tracks it too, where the "
            "paper's is flat.")


def _whole_epoch_runs(found: dict[str, dict[str, Any]]) -> list[Run]:
    """The evaluated runs of the plan that train for whole epochs (no step budget)."""
    return [r for r in RUNS if r.group == "long" and r.flags.get("max_steps", 0) is None and r.name in found]


def _length_line(found: dict[str, dict[str, Any]]) -> str:
    """Which runs see whole epochs, and where in them their best STS 2017 checkpoint fell."""
    parts = []
    for run in _whole_epoch_runs(found):
        training = found[run.name]["best"].training
        epochs = int(run.flags.get("epochs", 1))
        parts.append(f"`{run.name}` ({epochs} epoch{'s' if epochs > 1 else ''}; best STS 2017 checkpoint at "
                     f"step {training['step']:,})")
    line = ("Whole epochs: " + ", ".join(parts) + "; every other run is a fraction of one epoch."
            if parts else "Every run is a fraction of one epoch.")
    return line + _wlo_length_trend(found)


def _wlo_length_trend(found: dict[str, dict[str, Any]]) -> str:
    """WLO's test News accuracy (mean over seeds) against its training length."""
    lengths = {"wlo": f"{STEPS:,} steps", "wlo-epoch": "1 epoch", "wlo-epoch3": "3 epochs"}
    cells = []
    for base, label in lengths.items():
        news = [_test(found[n]["best"])[0] for n in _with_seeds(base) if n in found and found[n]["best"]]
        if news:
            cells.append(f"{mean_sd(news)} after {label} ({len(news)} seeds)")
    return (" WLO's test News accuracy by training length (selected on STS 2017; mean ± sd over seeds): "
            + ", ".join(cells) + "." if len(cells) > 1 else "")


def _validation_log(name: str, results_dir: Path = RESULTS_DIR) -> list[dict[str, Any]]:
    """A run's validation records (results/<run>/log.jsonl), oldest first."""
    path = results_dir / name / LOG
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    return [json.loads(line) for line in lines if line.strip()]


def _curve_lines(found: dict[str, dict[str, Any]], points: int = 6) -> list[str]:
    """STS 2017 Pearson and news-train accuracy along each whole-epoch run (both dev sets)."""
    logs = {r.name: _validation_log(r.name) for r in _whole_epoch_runs(found)}
    logs = {name: records for name, records in logs.items() if records}
    if not logs:
        return []
    lines = ["### Validation along the whole-epoch runs", "",
             f"STS 2017 Pearson r / news-train accuracy at {points} evenly spaced validations of each "
             f"run (from `results/<run>/{LOG}`).", "",
             "| Run | " + " | ".join(["validation"] * points) + " |", "|---|" + "---|" * points]
    for name, records in logs.items():
        picked = [records[round(k * (len(records) - 1) / (points - 1))] for k in range(points)]
        cells = [f"step {r['step']:,}: {r['sts17_pearson']:.3f} / {_fmt(r.get('news_train_accuracy'))}"
                 for r in picked]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return lines + [""]


def _discussion(found: dict[str, dict[str, Any]], chosen: dict[str, str]) -> list[str]:
    """Where and why we differ from the paper; the numbers are read from the results."""
    selected = chosen.get("wlo")
    if not selected:
        return []
    news, *_ = _test(found[selected]["best"])
    length = _length_news(found)
    spec = found[selected]["best"].specificity.news
    news_sizes = (spec.n_test, spec.n_train)
    lines = ["## Where and why we differ from the paper", "",
             f"- **WLO is below the paper** (News {_fmt(news)} vs the paper's {PAPER_WLO_NEWS}"
             + (f"; the Length baseline computed here gives {_fmt(length)}" if length is not None else "")
             + "). The paper trained on 5M ParaNMT pairs (back-translations: close paraphrases of "
               "news-like text) for many epochs; we train on a few hundred thousand pairs of a "
               "very different mixture (Bible verse versions, image captions, simplification, "
               "Shakespeare, scientific and question paraphrases) within a CPU budget. A WLO "
               "sentence's entropy is a sum of per-word terms, so specificity can only be as good "
               "as those terms: words seen rarely in training keep terms near their random "
               "initialization, and the sources decide which words training makes 'specific'.",
             _other_models_line(found, chosen),
             *_observations(found),
             "- **GloVe 50d instead of 300d** for the GloVe baselines (only 50d is available here); "
             "the paper's GloVe numbers are beside ours.",
             f"- **News test set of {news_sizes[0]:,} sentences**, as the issue specifies; the threshold is "
             f"tuned on the PDTB-derived news training rows minus those equal to test sentences "
             f"({news_sizes[1]:,} rows).",
             "- **Pretrained baselines** (InferSent, Skip-thought, ELMo, BERT) cannot be obtained on "
             "these machines; all-MiniLM-L6-v2 stands in for BERT.",
             f"- **Training length**: {_length_line(found)} The paper's models saw far more pairs. "
             "`probsent train --epochs N` and `make reproduce` with a larger `STEPS` in "
             "`experiments/plan.py` train longer.", ""]
    return lines


def _training_seconds(name: str, results_dir: Path) -> float | None:
    """Seconds of training of a run: its last validation record."""
    records = _validation_log(name, results_dir)
    return float(records[-1]["seconds"]) if records else None


def running_time(found: dict[str, dict[str, Any]], results_dir: Path = RESULTS_DIR,
                 report_dir: Path = REPORT_DIR, jobs: int = 2) -> dict[str, Any]:
    """What `make reproduce` costs with the current plan, from its measured parts (seconds):
    every run's training and evaluation (``found``: the results of :func:`run_results` on
    ``results_dir``; run with ``jobs`` at a time), then the shipped model's and the paper
    tables' evaluations (one at a time); and the runs not counted."""
    training = {run.name: _training_seconds(run.name, results_dir) for run in RUNS if run.name in found}
    train = sum(value for value in training.values() if value is not None)
    evaluations = sum(found[name]["evaluation"].seconds_command for name in training)
    after = [load_run(results_dir / "shipped" / "evaluation.json"), load_run(report_dir / "evaluation.json")]
    once = sum(evaluation.seconds_command for evaluation in after if evaluation)
    return {"training": train, "evaluation": evaluations, "once": once,
            "total": (train + evaluations) / jobs + once, "jobs": jobs,
            "missing": [run.name for run in RUNS if training.get(run.name) is None]}


def _running_time_lines(found: dict[str, dict[str, Any]]) -> list[str]:
    cost = running_time(found)
    line = (f"Running time of `make reproduce` with the current plan ({len(RUNS)} runs), from its "
            f"measured parts: the runs' training took {cost['training'] / 3600:.1f} CPU-hours in all "
            f"(sum of the training seconds in `results/<run>/{LOG}`, one thread each, mostly beside "
            f"another job), their evaluations {cost['evaluation'] / 3600:.1f} CPU-hours, and the "
            f"evaluations of the shipped model and of the paper's tables {cost['once'] / 60:.0f} minutes. "
            f"With {cost['jobs']} jobs at a time that is about {cost['total'] / 3600:.1f} hours on this "
            f"machine.")
    if cost["missing"]:
        line += " Not counted (not trained or no training log committed): " + ", ".join(
            f"`{name}`" for name in cost["missing"]) + "."
    engines = _engines(found)
    line += " Training engines, from each run's training record: " + "; ".join(
        f"{engine} for {len(names)} runs ({', '.join(sorted({_model_of(name) for name in names}))})"
        for engine, names in sorted(engines.items())) + "."
    return [line, ""]


def _model_of(name: str) -> str:
    return str(runs_by_name()[name].flags.get("model", ""))


def _engines(found: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """The runs of each training engine (records made before the fast engine existed: torch)."""
    engines: dict[str, list[str]] = {}
    for name, result in found.items():
        config = result["best"].training.get("config", {}) if result["best"] else {}
        engines.setdefault(config.get("engine", "torch"), []).append(name)
    return engines


def render() -> str:
    found = run_results()
    plan_models = {r.flags.get("model") for r in RUNS if r.name in found and r.group in SELECTABLE}
    chosen = {model: best_run(found, model) for model in MODELS if model in plan_models}
    main_eval = load_run(REPORT_DIR / "evaluation.json")
    lines = ["# Results", "",
             "Generated by `python -m reproduction.experiments.summarize` from the committed evaluation JSONs "
             "(`results/<run>/evaluation.json`, `docs/results/evaluation.json`). "
             "`make reproduce` retrains every run of `experiments/plan.py`, re-evaluates it and "
             "regenerates this page; do not edit it by hand.", ""]
    if main_eval:
        env = main_eval.environment
        lines += [f"Hardware: {env.platform}, {env.cpu_count} CPUs, no GPU; torch {env.torch}, "
                  f"one thread per training job (two jobs at a time).", ""]
    timing = load_json(RESULTS_DIR / "reproduce.json")
    if timing:
        lines += [f"The last complete `make reproduce` took {timing['seconds'] / 60:.0f} minutes "
                  f"({timing['runs']} runs, {timing['jobs']} training jobs at a time); runs added to the "
                  f"plan later were trained with `python -m reproduction.experiments.reproduce --only NAME`.", ""]
    lines += _running_time_lines(found)
    lines += ["## The paper's tables", "",
              "Written by the `probsent eval` command quoted at its top, on the STS-selected run of each "
              "of the five models (see Model selection) and every baseline. Its prior ablation "
              "(Table 7) compares the selected WLO with `wlo-lambda0`; the comparison at equal training "
              "is the λ table below.", ""]
    lines += _report_tables() + [""]
    lines += ["## How the models were trained", "",
              f"Every run trains for {STEPS:,} steps of 100 pairs unless its setting says otherwise (the longer runs) "
              f"({LSTM_STEPS:,} for the LSTMs, about ten "
              f"times slower per pair on a CPU), with validation every {EVAL_EVERY} steps: `best/` is the "
              f"checkpoint with the highest STS 2017 Pearson (the paper's selection) and `best-news/` the one "
              f"with the highest accuracy on the cleaned news training rows (a development set). "
              f"The test sets are never used for a choice. The paper trained on ParaNMT-50M (5M pairs used); "
              f"ours is far less training: the shared 1.26M pairs are not ParaNMT, and a CPU budget bounds "
              f"every run.", ""]
    for name in dict.fromkeys(chosen.values()):
        seconds = found[name]["best"].training.get("seconds")
        if seconds:
            lines.append(f"- `{name}`: best checkpoint after {seconds / 60:.1f} minutes of training "
                         f"(one thread, the other core busy).")
    lines += ["", "### Training mixture of the main runs", "", f"Settings: `{MIXTURE}`.", ""]
    lines += _mixture_lines(found.get("wlo", {}).get("best"))
    lines += ["", "## Model selection", "",
              "Per model, the run of the sweeps below (seed runs excluded) whose `best/` checkpoint has the "
              "highest STS 2017 Pearson (the paper's way), and the run whose `best-news/` checkpoint has the "
              "highest accuracy on the news training rows (our second selection); test numbers beside.", "",
              "| Model | Selected by STS 2017 | STS17 r (dev) | News acc (test) | Selected by news-train "
              "accuracy | News-train acc (dev) | News acc of its best-news/ (test) |",
              "|---|---|---|---|---|---|---|"]
    for model, name in chosen.items():
        by_news = best_run(found, model, by="news")
        lines.append(f"| {LABELS[model]} | `{name}` | {_fmt(dev_sts(found[name]['best']), 3)} | "
                     f"{_fmt(_test(found[name]['best'])[0])} | `{by_news}` | "
                     f"{_fmt(dev_news(found[by_news]['news']))} | {_fmt(_test(found[by_news]['news'])[0])} |")
    lines.append("")
    lines += ["## The shipped model", ""] + _shipped_lines() + [""] + similarity_readout_lines()
    lines += design_section().splitlines() + [""]
    lines += representation_section()
    lines += generality_section()
    lines += probability_section()
    lines += ["Some rounds on this page (the recipe study's rounds 1, 2, 3, 6 and 7, and the ship rule's resampling "
              "rounds) used `probsent train` settings that have since left the product; their records stay "
              "here as they were, and they are trained again at commit `2d16e26`, the last before they left: "
              "`git checkout 2d16e26 && make reproduce` (docs/EXPERIMENTS.md).", ""]
    lines += recipe_sections() + [""]
    lines += ["## Ablations and sweeps", "",
              "Dev columns choose; test columns (News accuracy on the 885 test sentences, Spearman ρ ×100 "
              "on Ko et al. 2019, Pearson r ×100 on STS12-16) only report. The last column is the test News "
              "accuracy of the run's `best-news/` model.", ""]
    titles = {"main": "The five models", "prior": "The prior weight λ (WLO)",
              "negatives": "Mega-batch vs mini-batch negatives (WLO)", "mixture": "Training mixture (WLO)",
              "model-mixture": "Training mixture and negatives (the four other models)",
              "init": "Initialization of A and B (WLO)", "long": "Longer training",
              "vocab": "Vocabulary size (WLO)",
              "l2": "L2 weight (Wordsum)"}
    for group, title in titles.items():
        names = [r.name for r in RUNS if r.group == group and r.name in found]
        if not names:
            continue
        if group != "main":  # the main run of each model (named after it) above that model's runs
            by_model = {model: [n for n in names if runs_by_name()[n].flags["model"] == model] for model in MODELS}
            names = [n for model, own in by_model.items() if own
                     for n in ([model] if model in found else []) + own]
        lines += [f"### {title}", "", HEADER, "|" + "---|" * 10]
        lines += [_run_row(n, found[n]) for n in names]
        lines.append("")
    lines += _curve_lines(found)
    lines += ["## Seeds", ""] + _seed_table(found) + [""]
    missing = [r.name for r in RUNS if r.name not in found]
    if missing:
        lines += ["Runs of the plan not evaluated yet: " + ", ".join(f"`{n}`" for n in missing) + ".", ""]
    lines += _discussion(found, chosen)
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    write_text(OUT, render())
    print(f"wrote {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
