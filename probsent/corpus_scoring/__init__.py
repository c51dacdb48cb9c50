"""Scoring corpora: ``probsent specificity`` over text, JSON Lines and Parquet, and Spark.

formats (readers and writers of the three formats, chunk by chunk) -> workers (a list of texts
to scores, in this process or over worker processes) -> score (a corpus, chunk by chunk, into a
sink: the command's engine); spark (pandas UDFs over the same workers; users import it as
``probsent.spark``). All of them score with a model's scoring engine (:mod:`probsent.readouts.scoring_engine`),
which needs no torch for a WLO model.
"""
