"""What a model's numbers are read as, without torch: the scoring path's model (a per-word term
table where the model allows), a score's percentile for the sentence's length and P(specific)
(``model_calibration`` fits both for ``probsent calibrate``), when those are withheld, what
``explain`` returns, and the similarity read-outs.
"""
