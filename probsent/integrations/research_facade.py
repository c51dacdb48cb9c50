"""The one door between probsent and its research wing (``reproduction/``): the few internal
names the paper's reproduction needs beyond the public API, each with the reason it is not public.

The wing imports probsent's public modules (``probsent``, ``probsent.api``, ``probsent.training``,
``probsent.models``, ``probsent.gaussian``, ``probsent.export``, ``probsent.inputs``,
``probsent.files.atomic_writes``, ``probsent.errors``,
``probsent.version``, ``probsent.cli``, ``probsent.data.development_sets``), only the names of
their ``__all__`` where they declare one, and this module; ``tests/test_architecture.py``
enforces it, that this module stays small, and that no probsent module imports the wing.
Nothing in probsent imports this module.
"""
from __future__ import annotations

# what training measures inside a model, read again on a finished one by the harness's diagnostics
# (a user reads them in log.jsonl; the sample is drawn as training draws it)
from probsent.training.diagnostics import DiagnosticSample, diagnose
# the rarity anchor's word terms from training's word counts: the design round that weighed it
# sets them on a trained model (a training loss's part, no user call)
from probsent.training.losses.rarity_anchor import rarity_terms
from probsent.training.training_data import vocabulary_counts
# news-train accuracy of an encoder on vocabulary ids, exactly as training scores its checkpoints
# (the recipe study rebuilds an untrained model's; users read it in log.jsonl)
from probsent.training.model_selection import NewsValidator
# a torch encoder run on token-id sequences, batched by length: the harness scores training
# sentences already tokenized and mapped (the API takes text)
from probsent.models.batching import encode_by_length
# P(specific)'s logistic fit, its features and its sigmoid bit for bit (SciPy's expit differs in
# the last bit), refitted out of fold by the study that chose the features
from probsent.readouts.calibration import _expit as expit, feature_matrix, fit_logistic_features
# the note of a sentence in another language ("looks French"): the language sets' table checks it
from probsent.readouts.withheld import language_note
# the language identifier's word table and the rule that writes it from wordfreq (a wing-only
# dependency): the wing regenerates the shipped file
from probsent.text.language_id import WORDS_FILE, word_table_lines

__all__ = [
    "DiagnosticSample", "diagnose", "rarity_terms", "vocabulary_counts", "NewsValidator", "encode_by_length",
    "expit", "feature_matrix", "fit_logistic_features", "language_note", "WORDS_FILE", "word_table_lines",
]
