"""Every training run behind docs/RESULTS.md, as ``probsent train`` flags.

All runs share one step budget (``STEPS``; 100 pairs a step) so that they compare at equal
training, and stop at a step count rather than a time so that the plan gives the same models
on any machine. Each run keeps two models: ``best/`` (highest STS 2017 Pearson, the paper's
selection) and ``best-news/`` (highest accuracy on the news training rows, our second
selection). The test sets are never used for any choice.
"""
from __future__ import annotations

from dataclasses import dataclass, field

PAIRS = "../shared/data/paraphrase/pairs.tsv.gz"
STEPS = 1200  # 120,000 pairs: about a quarter of an epoch of the main mixture
LSTM_STEPS = 600  # the LSTMs are ~10x slower per pair on a CPU
EVAL_EVERY = 200

# The training mixture and settings of the main models, chosen on STS 2017 by the sweeps below.
MIXTURE = {"source_caps": "bible_parallel_versions=0"}
TEXT_ONLY = ("bible_parallel_versions=0,multi30k_flickr30k_captions=0,mscoco_val2017_captions=0,"
             "flickr8k_captions=0")
MAIN_WLO = {"prior_weight": 1e-4, "scale_init_mean": 1.0, "scale_init_std": 0.1}
# the five models of the paper's tables: the runs of each compete for its selection (seed runs
# only report spread)
MODELS = ("wlo", "wordsum", "wordavg", "lstmavg", "lstmgaussian")


@dataclass
class Run:
    """One ``probsent train`` run: ``runs/<name>``."""

    name: str
    group: str  # main | seed | prior | negatives | mixture | model-mixture | init | long | vocab | l2
    flags: dict[str, object] = field(default_factory=dict)
    note: str = ""

    def train_args(self, out: str, data: str = PAIRS) -> list[str]:
        """The ``probsent train`` arguments of this run."""
        args = ["train", "--data", data, "--out", out, "--eval-every", str(EVAL_EVERY), "--resume"]
        lstm = str(self.flags.get("model", "")).startswith("lstm")
        settings = {"max_steps": LSTM_STEPS if lstm else STEPS, **self.flags}
        for key, value in settings.items():
            if value is not None:  # None: the flag's default
                args += ["--" + key.replace("_", "-"), str(value)]
        return args


def _wlo(name: str, group: str, note: str = "", **overrides: object) -> Run:
    return Run(name, group, {"model": "wlo", **MIXTURE, **MAIN_WLO, **overrides}, note)


def _model(name: str, model: str, group: str, note: str = "", **overrides: object) -> Run:
    return Run(name, group, {"model": model, **MIXTURE, **overrides}, note)


def _seeds(base: Run, *seeds: int) -> list[Run]:
    """``base`` again with other seeds: runs ``<base>-seed<N>``."""
    return [Run(f"{base.name}-seed{seed}", "seed", {**base.flags, "seed": seed}, f"{base.name}, seed {seed}")
            for seed in seeds]


WLO = _wlo("wlo", "main")
WORDSUM = _model("wordsum", "wordsum", "main")
WLO_EPOCH = _wlo("wlo-epoch", "long", "one full epoch of the main mixture", max_steps=None)
WLO_EPOCH3 = _wlo("wlo-epoch3", "long", "three epochs of the main mixture", epochs=3, max_steps=None)
TEXT_NOTE, MINI_NOTE = "no Bible, no image captions", "negatives mined within each mini-batch"
WORDSUM_TEXT = _model("wordsum-text", "wordsum", "model-mixture", TEXT_NOTE, source_caps=TEXT_ONLY)
LONG_NOTE = "main mixture, mini-batch negatives, 3 epochs"
WORDSUM_LONG = _model("wordsum-minibatch-long", "wordsum", "long", LONG_NOTE, megabatch=1, epochs=3,
                      max_steps=None)
# the four other models, with the flags they always take
OTHER_MODELS: dict[str, dict[str, object]] = {
    "wordsum": {}, "wordavg": {}, "lstmavg": {}, "lstmgaussian": {"prior_weight": MAIN_WLO["prior_weight"]}}

RUNS: list[Run] = [
    # the five models of the paper (seed 1)
    WLO,
    WORDSUM,
    _model("wordavg", "wordavg", "main"),
    _model("lstmavg", "lstmavg", "main"),
    _model("lstmgaussian", "lstmgaussian", "main", **OTHER_MODELS["lstmgaussian"]),
    # seeds: of the main runs at equal training, and of the STS-selected WLO and Wordsum
    *_seeds(WLO, 2, 3),
    *_seeds(WORDSUM, 2, 3),
    *_seeds(WLO_EPOCH, 2, 3),
    *_seeds(WLO_EPOCH3, 2, 3),
    *_seeds(WORDSUM_TEXT, 2, 3),
    *_seeds(WORDSUM_LONG, 2, 3),
    # the prior: lambda over several orders of magnitude, and none at all (Table 7)
    _wlo("wlo-lambda0", "prior", "no prior (the paper's ablation)", prior_weight=0.0),
    _wlo("wlo-lambda1e-5", "prior", prior_weight=1e-5),
    _wlo("wlo-lambda1e-3", "prior", prior_weight=1e-3),
    _wlo("wlo-lambda1e-2", "prior", prior_weight=1e-2),
    # negatives from the mini-batch only instead of the mega-batch of 20
    _wlo("wlo-minibatch", "negatives", "negatives mined within each mini-batch", megabatch=1),
    # the data mixture (the main runs leave out the Bible verse versions)
    _wlo("wlo-allpairs", "mixture", "every pair of the file (three fifths Bible)", source_caps=None),
    _wlo("wlo-cap30k", "mixture", "every source capped at 30,000 pairs (Bible included)",
         source_caps="*=30000"),
    _wlo("wlo-text", "mixture", "no Bible, no image captions", source_caps=TEXT_ONLY),
    _wlo("wlo-closepairs", "mixture", "pairs whose word overlap is >= 0.4 (Bible included)",
         source_caps=None, min_overlap=0.4),
    _wlo("wlo-filtered", "mixture", "no Bible; sides of >= 3 tokens, word overlap <= 0.8",
         min_tokens=3, max_overlap=0.8),
    # the mixture and the negatives of the other models: on the caption-heavy main mixture the
    # hardest negatives of a mega-batch are often closer than the partners, and the cosine
    # models drift towards one direction for every sentence (STS 2017 falls below the
    # untrained model's; the LSTMs collapse within a few hundred steps)
    WORDSUM_TEXT,
    _model("wordavg-text", "wordavg", "model-mixture", TEXT_NOTE, source_caps=TEXT_ONLY),
    *(_model(f"{model}-minibatch", model, "model-mixture", MINI_NOTE, megabatch=1, **extra)
      for model, extra in OTHER_MODELS.items()),
    *(_model(f"{model}-text-minibatch", model, "model-mixture", f"{TEXT_NOTE}; {MINI_NOTE}",
             source_caps=TEXT_ONLY, megabatch=1, **extra)
      for model, extra in OTHER_MODELS.items()),
    # LSTMGaussian collapses to its prior in the three settings above; means spread out at the
    # start let it escape
    _model("lstmgaussian-text-minibatch-gain10", "lstmgaussian", "model-mixture",
           f"{TEXT_NOTE}; {MINI_NOTE}; mean map initialized x10", source_caps=TEXT_ONLY, megabatch=1,
           mean_init_gain=10.0, **OTHER_MODELS["lstmgaussian"]),
    # the initialization of A
    _wlo("wlo-init-tight", "init", "A ~ N(1, 0.01^2): little initial noise",
         scale_init_mean=1.0, scale_init_std=0.01),
    _wlo("wlo-init-shrink", "init", "A ~ N(0.99, 0.01^2): every word starts equally specific",
         scale_init_mean=0.99, scale_init_std=0.01),
    # the initialization of B
    _wlo("wlo-init-b-small", "init", "B ~ N(0, 0.01^2): means start near 0", shift_init_std=0.01),
    _wlo("wlo-init-b-large", "init", "B ~ N(0, 1): means start spread out", shift_init_std=1.0),
    # longer: the two settings that did best on the news training rows, for 5,000 steps
    _wlo("wlo-close-mini-long", "long", "close paraphrases, mini-batch negatives, 5,000 steps",
         source_caps=None, min_overlap=0.4, megabatch=1, max_steps=5000),
    WLO_EPOCH,
    _wlo("wlo-minibatch-epoch", "long", "one epoch of the main mixture, mini-batch negatives",
         megabatch=1, max_steps=None),
    WLO_EPOCH3,
    _wlo("wlo-closepairs-epoch", "long", "one epoch of the close paraphrases (word overlap >= 0.4, Bible included)",
         source_caps=None, min_overlap=0.4, max_steps=None),
    WORDSUM_LONG,
    _model("wordavg-minibatch-long", "wordavg", "long", LONG_NOTE, megabatch=1, epochs=3, max_steps=None),
    # the LSTMs for a full epoch of their mixture (about 1,400 steps instead of 600)
    _model("lstmavg-text-minibatch-epoch", "lstmavg", "long", f"{TEXT_NOTE}; {MINI_NOTE}; one epoch",
           source_caps=TEXT_ONLY, megabatch=1, max_steps=None),
    _model("lstmgaussian-text-minibatch-gain10-epoch", "lstmgaussian", "long",
           f"{TEXT_NOTE}; {MINI_NOTE}; mean map initialized x10; one epoch", source_caps=TEXT_ONLY,
           megabatch=1, mean_init_gain=10.0, max_steps=None, **OTHER_MODELS["lstmgaussian"]),
    # the vocabulary size (rarer words share <unk>)
    _wlo("wlo-vocab20k", "vocab", "20,000 words", vocab_size=20_000),
    _wlo("wlo-vocab5k", "vocab", "5,000 words", vocab_size=5_000),
    _wlo("wlo-vocab2k", "vocab", "2,000 words", vocab_size=2_000),
    # L2 of the deterministic models
    _model("wordsum-l2-1e-5", "wordsum", "l2", l2_weight=1e-5),
]


def runs_by_name() -> dict[str, Run]:
    """The plan as a name -> run mapping (names are unique)."""
    named = {run.name: run for run in RUNS}
    assert len(named) == len(RUNS), "run names must be unique"
    return named
