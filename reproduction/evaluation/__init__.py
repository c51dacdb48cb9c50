"""The paper's evaluation: data loaders, metrics, baselines, experiments and ``probsent eval``.

datasets (loaders, sha256 record) -> metrics -> experiments (Tables 2, 3, 4, 8) and the
analyses lexical (Table 5) and sentential (Table 6), each returning its typed result (results,
which alone reads and writes evaluation.json); baselines (untrained scorers); suite runs them all
on a set of systems; report renders the Markdown, plots the PNGs; command is the CLI.
"""
