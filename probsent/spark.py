"""probsent on Apache Spark DataFrames: the public names of
:mod:`probsent.corpus_scoring.spark_udfs`, where they live and are documented.

    from probsent.spark import add_specificity
    scored = add_specificity(spark.read.parquet("corpus/"), column="text", probability=True)
"""
from __future__ import annotations

from probsent.errors import needs_extra

with needs_extra("spark", "probsent.spark"):  # pandas and pyspark: the [spark] extra
    from probsent.corpus_scoring.spark_udfs import LOCAL_SETTINGS, add_encoding, add_specificity, local_session

__all__ = ["LOCAL_SETTINGS", "add_encoding", "add_specificity", "local_session"]
