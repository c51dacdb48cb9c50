"""A batch of texts as one UTF-8 buffer: what the compiled tokenizer reads, without str objects.

:class:`Utf8Texts` holds text i as the bytes ``data[starts[i]:ends[i]]`` (None where
``valid[i]`` is False). It comes straight from an Arrow string column (a Parquet batch: its
offsets and bytes, no Python string per row) or from a list of str (one join and one encode
for the whole batch), pickles as three NumPy arrays (a worker process receives it in one
copy), and is a read-only sequence of str / None for code that wants strings (each item is
decoded when asked for). NumPy only: neither numba nor pyarrow is imported here.
"""
from __future__ import annotations

from typing import Any, Iterator, Sequence, overload

import numpy as np

__all__ = ["Utf8Texts"]

# str -> bytes and back for any str, lone surrogates included (a str from JSON may hold one)
TEXT_CODEC, ERRORS = "utf-8", "surrogatepass"


class Utf8Texts(Sequence):
    """Texts as UTF-8 bytes: text i is ``data[starts[i]:ends[i]]``, or None where not ``valid[i]``."""

    __slots__ = ("data", "starts", "ends", "valid")

    def __init__(self, data: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                 valid: np.ndarray | None = None) -> None:
        self.data = data  # uint8
        self.starts = starts  # int64, one per text
        self.ends = ends  # int64, one per text
        self.valid = valid  # bool per text; None: all are texts

    @classmethod
    def from_strings(cls, texts: Sequence[str | None]) -> "Utf8Texts":
        """The texts (str or None) as one buffer."""
        texts = list(texts)
        valid = None
        if any(t is None for t in texts):
            valid = np.fromiter((t is not None for t in texts), dtype=bool, count=len(texts))
            texts = [t if t is not None else "" for t in texts]
        joined = "\n".join(texts)
        if texts and joined.count("\n") == len(texts) - 1:  # no text holds a newline: cut there
            data = np.frombuffer(joined.encode(TEXT_CODEC, ERRORS), dtype=np.uint8)
            newlines = np.flatnonzero(data == 10)
            starts = np.concatenate(([0], newlines + 1)).astype(np.int64)
            ends = np.concatenate((newlines, [len(data)])).astype(np.int64)
            return cls(data, starts, ends, valid)
        as_bytes = [t.encode(TEXT_CODEC, ERRORS) for t in texts]
        ends = np.cumsum(np.fromiter(map(len, as_bytes), dtype=np.int64, count=len(as_bytes)))
        starts = ends - np.fromiter(map(len, as_bytes), dtype=np.int64, count=len(as_bytes))
        return cls(np.frombuffer(b"".join(as_bytes), dtype=np.uint8), starts, ends, valid)

    @classmethod
    def from_arrow(cls, array: Any) -> "Utf8Texts":
        """An Arrow array (or chunked array) of strings (string, large_string, string_view,
        dictionary-encoded, or all null), without making a str per row."""
        import pyarrow as pa

        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        if pa.types.is_dictionary(array.type):
            array = array.dictionary_decode()
        if pa.types.is_null(array.type):
            empty = np.zeros(len(array), dtype=np.int64)
            return cls(np.zeros(0, np.uint8), empty, empty, np.zeros(len(array), dtype=bool))
        if pa.types.is_string_view(array.type):
            array = array.cast(pa.large_string())
        if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
            raise TypeError(f"not a string array: {array.type}")
        width = np.int32 if pa.types.is_string(array.type) else np.int64
        _, offsets, data = array.buffers()
        count = len(array)
        offsets = (np.frombuffer(offsets, dtype=width)[array.offset:array.offset + count + 1].astype(np.int64)
                   if count else np.zeros(1, np.int64))
        first, last = int(offsets[0]), int(offsets[-1])
        data = np.frombuffer(data, dtype=np.uint8)[first:last] if data is not None else np.zeros(0, np.uint8)
        offsets -= first  # only this array's bytes (a slice of a larger buffer pickles small)
        valid = None if array.null_count == 0 else array.is_valid().to_numpy(zero_copy_only=False)
        return cls(data, offsets[:-1], offsets[1:], valid)

    def __len__(self) -> int:
        return len(self.starts)

    def text(self, i: int) -> str | None:
        """Text ``i`` as a str (None where null)."""
        if self.valid is not None and not self.valid[i]:
            return None
        return bytes(self.data[self.starts[i]:self.ends[i]]).decode(TEXT_CODEC, ERRORS)

    @overload
    def __getitem__(self, i: int) -> str | None: ...

    @overload
    def __getitem__(self, i: slice) -> list[str | None]: ...

    def __getitem__(self, i: int | slice) -> str | None | list[str | None]:
        if isinstance(i, slice):
            return [self.text(j) for j in range(*i.indices(len(self)))]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        return self.text(i % len(self))

    def __iter__(self) -> Iterator[str | None]:
        return map(self.text, range(len(self)))

    def __repr__(self) -> str:
        return f"Utf8Texts({len(self)} texts, {len(self.data):,} bytes)"
