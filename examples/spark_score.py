"""Score a Parquet corpus with Spark: the text column gets specificity and P(specific).

    spark-submit [--master URL] examples/spark_score.py INPUT OUTPUT [TEXT_COLUMN [MODEL_DIR]]

INPUT and OUTPUT are Parquet paths Spark can reach (a local path, hdfs://, s3a://, ...). Without
MODEL_DIR the model shipped with probsent scores; a model directory on the driver's machine is
sent to the executors by probsent.
"""
import sys

from pyspark.sql import SparkSession

from probsent.spark import add_specificity

source, target = sys.argv[1], sys.argv[2]
column = sys.argv[3] if len(sys.argv) > 3 else "text"
model = sys.argv[4] if len(sys.argv) > 4 else None

spark = SparkSession.builder.appName("probsent-specificity").getOrCreate()
corpus = spark.read.parquet(source)
add_specificity(corpus, column=column, model=model, probability=True).write.parquet(target)
spark.stop()
