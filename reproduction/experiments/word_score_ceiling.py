"""How far a sum of per-word terms can go on the news training rows when it is fit to their
labels: a ceiling for WLO's entropy on that development set.

WLO's entropy is 1/2 sum_d log(2 pi e) + sum over the sentence's words of log|A_w,d|: one
fixed term per word, added up. Any such score is a linear function of the sentence's word
counts, so a logistic regression on word counts (L2-regularized, fit with 10-fold
cross-validation, the threshold tuned on the training folds as for every run) shows what the
form of the score allows on these rows when it learns from their labels; a trained WLO learns
its terms from paraphrases instead. The news test set is never read.

    python -m reproduction.experiments.word_score_ceiling
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

import numpy as np
import scipy.sparse
from scipy.optimize import minimize

L2_WEIGHTS = (1e-3, 1e-2, 1e-1)  # the reported ceiling is the best of them: slightly optimistic
FOLDS = 10


def word_count_matrix(sentences: Sequence[Sequence[str]], vocab: dict[str, int]) -> scipy.sparse.csr_matrix:
    """Row i: how often each word of ``vocab`` occurs in sentence i (other words are left out)."""
    rows, cols = [], []
    for i, tokens in enumerate(sentences):
        for token in tokens:
            if token in vocab:
                rows.append(i)
                cols.append(vocab[token])
    return scipy.sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(sentences), len(vocab)))


def fit_logistic(counts: scipy.sparse.csr_matrix, labels: np.ndarray, l2: float) -> tuple[np.ndarray, float]:
    """Per-word weights and a bias minimizing the mean logistic loss + l2/2 * |weights|^2."""
    y = labels.astype(np.float64)

    def loss_and_gradient(params: np.ndarray) -> tuple[float, np.ndarray]:
        weights, bias = params[:-1], params[-1]
        z = counts @ weights + bias
        loss = np.mean(np.logaddexp(0.0, z) - y * z) + 0.5 * l2 * weights @ weights
        residual = (1.0 / (1.0 + np.exp(-z)) - y) / len(y)  # d loss / d z
        return loss, np.concatenate([counts.T @ residual + l2 * weights, [residual.sum()]])

    params = minimize(loss_and_gradient, np.zeros(counts.shape[1] + 1), jac=True, method="L-BFGS-B").x
    return params[:-1], float(params[-1])


def cross_validated_accuracy(sentences: Sequence[Sequence[str]], specific: np.ndarray, l2: float,
                             folds: int = FOLDS) -> float:
    """Accuracy (%) of word-count logistic regression over ``folds`` folds (row i in fold i %
    folds): per fold, fit on the others (vocabulary: their words), tune the threshold on them and
    classify the held-out rows."""
    from reproduction.evaluation.metrics import predict_specific, tune_threshold

    specific = np.asarray(specific, dtype=bool)
    fold_of = np.arange(len(sentences)) % folds
    correct = 0
    for fold in range(folds):
        train, held_out = np.flatnonzero(fold_of != fold), np.flatnonzero(fold_of == fold)
        vocab = {w: i for i, w in enumerate(sorted({w for i in train for w in sentences[i]}))}
        x_train = word_count_matrix([sentences[i] for i in train], vocab)
        weights, _ = fit_logistic(x_train, specific[train], l2)
        threshold = tune_threshold(x_train @ weights, specific[train])
        scores = word_count_matrix([sentences[i] for i in held_out], vocab) @ weights
        correct += int(np.sum(predict_specific(scores, threshold) == specific[held_out]))
    return 100.0 * correct / len(sentences)


def news_dev_ceiling(data_dir: str | None = None) -> dict[str, object]:
    """The cross-validated accuracy on the cleaned news training rows for each of ``L2_WEIGHTS``
    and the best of them."""
    from reproduction.evaluation.datasets import as_data_dir, load_news_train
    from probsent.api import tokenize

    news = load_news_train(as_data_dir(data_dir))
    sentences = [tokenize(s) for s in news.sentences]
    per_l2 = {str(l2): cross_validated_accuracy(sentences, news.specific, l2) for l2 in L2_WEIGHTS}
    return {"folds": FOLDS, "per_l2": per_l2, "best": max(per_l2.values())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=None, help="the shared data directory (default: ../shared/data)")
    print(json.dumps(news_dev_ceiling(parser.parse_args().data_dir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
