"""PNG scatter plots of the evaluation, drawn with matplotlib's Agg renderer.

Figures are built with :class:`matplotlib.figure.Figure` directly (no pyplot), so plotting
never changes the backend or global state of the calling program, and each file is written
atomically.
"""
from __future__ import annotations

import math
import os
from typing import Mapping

import numpy as np
from matplotlib.figure import Figure

from reproduction.evaluation.lexical import LISTS, WordTable
from reproduction.evaluation.results import LexicalWord
from probsent.files.atomic_writes import atomic_path

DPI = 110


def _save(figure: Figure, path: str | os.PathLike[str]) -> None:
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=DPI)


def specificity_scatter(path: str | os.PathLike[str], domain: str, ratings: np.ndarray,
                        scores: Mapping[str, np.ndarray], spearman: Mapping[str, float]) -> None:
    """One panel per system: its specificity score (x) against the mean human rating (y)."""
    names = list(scores)
    columns = min(4, max(1, len(names)))
    rows = max(1, math.ceil(len(names) / columns))
    figure = Figure(figsize=(3.6 * columns, 3.2 * rows), layout="constrained")
    figure.suptitle(f"{domain.capitalize()}: specificity score vs. human rating (Ko et al. 2019)")
    for k, name in enumerate(names):
        axes = figure.add_subplot(rows, columns, k + 1)
        axes.scatter(scores[name], ratings, s=6, alpha=0.35, linewidths=0)
        axes.set_title(f"{name}  (Spearman {spearman[name]:.1f})", fontsize=9)
        axes.set_xlabel("score (higher = more specific)", fontsize=8)
        axes.set_ylabel("human rating", fontsize=8)
        axes.tick_params(labelsize=7)
    _save(figure, path)


_LIST_STYLE = {
    "small_norm_small_abs_entropy": ("tab:green", "small norm, small |H|"),
    "small_norm_small_entropy": ("tab:blue", "small norm, small H"),
    "large_norm_small_abs_entropy": ("tab:orange", "large norm, small |H|"),
    "large_norm_small_entropy": ("tab:red", "large norm, small H"),
}


def lexical_scatter(path: str | os.PathLike[str], model_name: str, table: WordTable,
                    lists: Mapping[str, list[LexicalWord]], label_per_list: int = 5) -> None:
    """||B_w|| (x) against the single-word sentence entropy (y), with the top lists marked.

    Every eligible word is a grey point; the members of each top list are coloured and the
    first ``label_per_list`` of each are labelled.
    """
    figure = Figure(figsize=(8.0, 6.0), layout="constrained")
    axes = figure.add_subplot(1, 1, 1)
    axes.scatter(table.norms, table.entropies, s=5, c="0.6", alpha=0.5, linewidths=0, label="words")
    position = {w: i for i, w in enumerate(table.words)}
    for name in LISTS:
        colour, label = _LIST_STYLE[name]
        members = [position[item.word] for item in lists.get(name, [])]
        if not members:
            continue
        if name.endswith("abs_entropy"):  # hollow and larger, so a list equal to its neighbour still shows
            axes.scatter(table.norms[members], table.entropies[members], s=42, facecolors="none",
                         edgecolors=colour, linewidths=1.2, label=label)
        else:
            axes.scatter(table.norms[members], table.entropies[members], s=14, c=colour, label=label)
        for i in members[:label_per_list]:
            axes.annotate(table.words[i], (table.norms[i], table.entropies[i]), fontsize=7,
                          xytext=(3, 2), textcoords="offset points", color=colour)
    axes.set_xlabel("translation norm ||B_w||")
    axes.set_ylabel("entropy of the one-word sentence")
    axes.set_title(f"{model_name}: lexical analysis ({len(table.words):,} words)")
    axes.legend(fontsize=8, loc="best")
    _save(figure, path)


TRAINING_CURVES = [("news_train_accuracy", "news-train accuracy (dev, %)"),
                   ("sts17_pearson", "STS 2017 r (dev)"),
                   ("term_count_spearman", "Spearman(word term, log count)"),
                   ("frequent_term", "mean term of the 20 most frequent words"),
                   ("negatives_sharing_more", "negatives sharing more words than the partner"),
                   ("active_hinge", "active hinge terms"),
                   ("prior_gradient_share", "prior / margin gradient on A")]


def training_curves(path: str | os.PathLike[str], logs: Mapping[str, list[dict]]) -> None:
    """One panel per logged diagnostic (:mod:`probsent.training.diagnostics`) and validation
    score, one line per run (its ``log.jsonl`` records), against the training step."""
    columns = 4
    rows = math.ceil(len(TRAINING_CURVES) / columns)
    figure = Figure(figsize=(4.0 * columns, 3.0 * rows), layout="constrained")
    for k, (key, title) in enumerate(TRAINING_CURVES):
        axes = figure.add_subplot(rows, columns, k + 1)
        for i, (name, records) in enumerate(logs.items()):
            points = [(r["step"], r[key]) for r in records if key in r]
            if points:  # ten colours, then the next ten dashed, ...
                axes.plot(*zip(*points), label=name, linewidth=1, linestyle=("-", "--", ":")[i // 10 % 3])
        if key == "prior_gradient_share":
            axes.set_yscale("log")
        axes.set_title(title, fontsize=9)
        axes.set_xlabel("step", fontsize=8)
        axes.tick_params(labelsize=7)
    handles, labels = figure.axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower right", fontsize=7)
    _save(figure, path)
