"""The research wing: the reproduction of Chen & Gimpel (ACL 2020) with probsent.

It holds the evaluation harness (:mod:`reproduction.evaluation`, run as ``probsent eval``), the
paper's tables, baselines, analyses and design rounds (:mod:`reproduction.experiments`), their
records (``reproduction/results/``, ``reproduction/docs/``) and their tests
(``reproduction/tests/``). The door is one-way: the wing imports probsent's public API and the
declared facade :mod:`probsent.integrations.research_facade`; no probsent module imports the wing
(``tests/test_architecture.py`` enforces both). It is a project of its own
(``reproduction/pyproject.toml``), installed by ``make setup`` and never part of probsent's wheel.
"""
