"""What a model's numbers are read as, without torch: the one scoring engine a model scores
through (with a per-word term table where the model allows), every read-out declared once
(``readout_table``), a score's percentile for the sentence's length and P(specific)
(``model_calibration`` fits both for ``probsent calibrate``), when those are withheld, what
``explain`` returns, and the similarity read-outs.
"""
