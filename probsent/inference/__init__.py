"""Inference without torch: the encoders of WLO, Wordavg and Wordsum in NumPy, read straight
from the model files, and the similarities of their encodings.

:class:`probsent.api.SentenceModel` encodes through an :class:`~probsent.inference.array_encoder.ArrayEncoder`
where the model allows (``probsent.load()`` of such a directory imports no torch), and through
:class:`~probsent.inference.torch_encoder.TorchEncoder` for any torch module (the LSTMs, a model
being trained); both return :class:`~probsent.inference.arrays.ArrayEncoding` (NumPy).
"""
