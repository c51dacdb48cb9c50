"""The one door between probsent and its research wing (``reproduction/``): the internal names
the paper's reproduction needs beyond the public API, each declared here once.

The wing imports only probsent's public modules (``probsent``, ``probsent.api``,
``probsent.errors``, ``probsent.version``, ``probsent.data.development_sets``, ``probsent.cli``'s ``main``)
and this module; ``tests/test_architecture.py`` enforces it, and that no probsent module imports
the wing. An internal refactor that moves one of these names changes this file, not the wing.
Nothing in probsent imports this module.
"""
from __future__ import annotations

# training a model and reading its run: the harness's training corpus, the experiments' runs
from probsent.data.mapped_pairs import MappedPairs, load_mapped_pairs
from probsent.data.mixture import apply_mixture
from probsent.settings import SCRAMBLE, TrainConfig
from probsent.training.checkpoint import LAST, LOG, STATE
from probsent.training.diagnostics import DiagnosticSample, diagnose
from probsent.training.losses.rarity_anchor import rarity_terms
from probsent.training.trainer import Trainer
from probsent.training.training_data import vocabulary_counts
# models as the experiments open them (word terms, entropies, batching by length)
from probsent.gaussian import expected_inner_product
from probsent.inference.arrays import gaussian_entropy
from probsent.models import SentenceEncoder, model_class, with_word_entropy_terms
from probsent.models.batching import encode_by_length
# the read-outs' pieces the probability and coverage studies refit or re-read
from probsent.readouts.calibration import _expit as expit, feature_matrix, fit_logistic_features
from probsent.training.model_calibration import FEATURES, news_training_rows
from probsent.readouts.withheld import language_note
from probsent.text.token_ids import counts_for_coverage
# text: the tokenizer and the language identifier (whose sets and word table the wing builds)
from probsent.text.language_id import (MIN_ZIPF, WORD_LIST_LANGUAGES, WORDS_FILE, fold, is_one_word,
                                       language_of, word_table)
from probsent.text.tokenize import tokenize
# training's model selection measures (written once, in the product)
from probsent.training.model_selection import (NewsValidator, accuracy_at_tuned_threshold, pearson, predict_specific,
                                      tune_threshold)
# what the wing's tests build their cases from (a vocabulary, a model, the settings, the
# diagnostics' rank statistics)
from probsent.data.vocab import Vocabulary
from probsent.models import WLO, build_model
from probsent.settings import SETTINGS
from probsent.training.diagnostics import average_ranks, rank_correlation, word_term_statistics
from probsent.training.training_data import build_vocabulary
# files and arguments as every probsent command writes and checks them
from probsent.inputs import positive_int
from probsent.export import export_model
from probsent.files.atomic_writes import atomic_path, write_json, write_text

__all__ = [
    "MappedPairs", "load_mapped_pairs", "apply_mixture", "SCRAMBLE", "TrainConfig", "LAST", "LOG", "STATE",
    "DiagnosticSample", "diagnose", "rarity_terms", "Trainer", "vocabulary_counts",
    "expected_inner_product", "gaussian_entropy", "SentenceEncoder", "model_class", "with_word_entropy_terms",
    "encode_by_length", "expit", "feature_matrix", "fit_logistic_features", "FEATURES", "news_training_rows",
    "language_note", "counts_for_coverage",
    "MIN_ZIPF", "WORD_LIST_LANGUAGES", "WORDS_FILE", "fold", "is_one_word", "language_of", "word_table",
    "tokenize", "NewsValidator", "accuracy_at_tuned_threshold", "pearson", "predict_specific", "tune_threshold",
    "positive_int", "export_model", "atomic_path", "write_json", "write_text",
    "Vocabulary", "WLO", "build_model", "SETTINGS", "average_ranks", "rank_correlation", "word_term_statistics",
    "build_vocabulary",
]
