"""Reading scattered sentences of a memory-mapped corpus without bringing its pages into memory.

A training step reads a few thousand sentences scattered over the token file. Read through the
memory map, every page touched stays mapped, and the system maps the neighbours of each page it
reads in as well (fault-around: 64 KiB), so one mega-batch maps most of a corpus's file into the
process's resident memory. :func:`read_token_rows` reads each sentence's tokens with one
``pread`` from a numba kernel instead (a few microseconds a sentence, about what the page
faults cost), where the system has ``pread``; elsewhere it indexes the map.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os

import numpy as np

__all__ = ["read_token_rows"]


def _libc_pread():
    """libc's pread as a ctypes function, or None where there is none (Windows)."""
    if os.name != "posix":
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        function = libc.pread
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_ssize_t
    function.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int64]
    return function


_PREAD = _libc_pread()
_KERNEL = None
_DESCRIPTORS: dict[str, int] = {}  # this process's open token files, by name


def _kernel():
    """The compiled loop of preads (made on first use)."""
    global _KERNEL
    if _KERNEL is None:
        from numba import njit

        pread = _PREAD

        @njit(cache=False)
        def read_rows(descriptor, base, itemsize, starts, out_offsets, out):  # pragma: no cover (compiled)
            for j in range(len(starts)):
                size = (out_offsets[j + 1] - out_offsets[j]) * itemsize
                if size > 0:
                    done = pread(descriptor, out[out_offsets[j]:].ctypes.data, size, base + starts[j] * itemsize)
                    if done != size:
                        return j
            return -1

        _KERNEL = read_rows
    return _KERNEL


def read_token_rows(tokens: np.ndarray, starts: np.ndarray, out_offsets: np.ndarray) -> np.ndarray:
    """``tokens[starts[j]:starts[j] + length j]`` one after the other (lengths from ``out_offsets``),
    in ``tokens``' dtype: by ``pread`` from a memory map's file, else by indexing."""
    lengths = np.diff(out_offsets)
    filename = getattr(tokens, "filename", None)
    if _PREAD is None or not isinstance(tokens, np.memmap) or filename is None:
        return np.asarray(tokens[np.repeat(starts - out_offsets[:-1], lengths) + np.arange(out_offsets[-1])])
    descriptor = _DESCRIPTORS.get(filename)
    if descriptor is None:
        descriptor = _DESCRIPTORS[filename] = os.open(filename, os.O_RDONLY)
    out = np.empty(int(out_offsets[-1]), dtype=tokens.dtype)
    failed = _kernel()(descriptor, tokens.offset, tokens.dtype.itemsize, np.ascontiguousarray(starts, np.int64),
                       np.ascontiguousarray(out_offsets, np.int64), out)
    if failed >= 0:
        raise OSError(f"{filename}: could not read sentence {int(failed)} (the cache file changed while mapped)")
    return out
