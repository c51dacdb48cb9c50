"""Text to vocabulary ids, without torch: what training, scoring and evaluation tokenize with.

tokenize (the Treebank tokenizer, the readable reference) -> piece_tokenize (the same tokens,
one cached tokenization per whitespace-separated piece) and token_cap (the token cap, applied
while tokenizing) -> token_ids (sentences to vocabulary ids in bulk); segment_sums (per-sentence
sums in NumPy's own order) adds up per-token values.
"""
