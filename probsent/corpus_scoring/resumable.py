"""An output file written across runs: what an interrupted corpus command keeps, and how the next
run of the same command continues it (used by ``probsent encode``; written for any command whose
output is one row per input row, in input order).

While a run writes ``OUTPUT``, its rows go to ``.OUTPUT.partial`` beside it, and
``.OUTPUT.partial.json`` says what they are: the input (its real path, the SHA-256 of its content,
and the column read: :func:`input_identity`), the model (its directory and the SHA-256 of its files), the output's
kind and its settings. A run that stops (an error, Ctrl-C, SIGTERM, SIGHUP) leaves both; the next
run with the same identity skips the input rows already written and appends the rest, then puts
the whole file in place atomically (:func:`probsent.files.user_output.writing_output`) and removes the
two. A run with another input, model or kind refuses in one line, before any work, unless
``--force`` (which discards that partial output). The user's own files are never touched: the
partial output is ours, beside the target, under a name of its own.

How many rows a partial file holds is its writer's to say (:mod:`probsent.corpus_scoring.encode_command`):
a ``.npy`` file counts its whole rows (so it continues even after a kill); a Parquet file is read
back by its footer, which a stopped run writes on its way out, and one without (a killed run)
starts over.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from probsent.corpus_scoring.formats import Chunk
from probsent.errors import ProbsentError
from probsent.files.atomic_writes import remove_quietly
from probsent.files.content_identity import file_sha256
from probsent.model_directory import files_digest, read_consistently, read_model_files
from probsent.text.utf8_texts import Utf8Texts

__all__ = ["Partial", "input_identity", "kept_files", "megabytes", "model_identity", "skip_rows"]

FORMAT = "probsent-partial-output"
VERSION = 2  # 2: inputs named by their content (1: by size and modification time)


def input_identity(path: str | None, column: str | None) -> dict[str, Any] | None:
    """What names an input file by its content (real path, the SHA-256 of its bytes, column; a
    Parquet dataset: the SHA-256 of each file its reader reads, by name, so that hidden files,
    such as an output's own partial files written inside it, change nothing), or None for one
    that cannot be read again the same way (standard input, a stream)."""
    if path in (None, "-"):
        return None
    if os.path.isdir(path):
        parts = _dataset_parts(path)
        content: Any = [[os.path.relpath(part, path), file_sha256(part)] for part in parts]
    elif os.path.isfile(path):
        content = file_sha256(path)
    else:
        return None
    return {"path": os.path.realpath(path), "sha256": content, "column": column}


def _dataset_parts(path: str) -> list[str]:
    """The files of the dataset in directory ``path`` that the corpus reader reads, in its order
    (:func:`probsent.files.dataset_directory.dataset_files`, the one lister of training and scoring:
    names starting with ``_`` or ``.``, this run's hidden partial files among them, left out at any
    depth); an empty list where it cannot be listed (the reader says what is wrong with it)."""
    from probsent.errors import ProbsentError
    from probsent.files.dataset_directory import dataset_files

    try:
        return [str(part) for part in dataset_files(path)]
    except (ProbsentError, OSError):
        return []


def model_identity(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """The model's directory and the SHA-256 of its model files (:func:`probsent.model_directory.files_digest`:
    another file beside them, a README, changes nothing), read as one version of them."""
    contents, _ = read_consistently(Path(directory), lambda: read_model_files(Path(directory)))
    return {"path": os.path.realpath(directory), "sha256": files_digest(contents)}


@dataclass
class Partial:
    """The partial output of ``output`` (see the module's docstring) for a run of ``identity``."""

    output: str
    identity: dict[str, Any]

    @property
    def data(self) -> Path:
        real = Path(os.path.realpath(self.output))
        return real.parent / f".{real.name}.partial"

    @property
    def record(self) -> Path:
        return self.data.with_name(self.data.name + ".json")

    @property
    def following(self) -> Path:
        """Where a format that cannot append (Parquet) writes the data again, then more rows;
        it replaces ``data`` when the run ends, stopped or not."""
        return self.data.with_name(self.data.name + ".next")

    def claim(self, force: bool) -> bool:
        """Start or continue: True where a partial output of this same run is there to continue;
        a one-line error for one of another run (discarded instead with ``force``)."""
        try:
            recorded = json.loads(self.record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            recorded = None
        if recorded is not None and self.data.exists():
            if recorded.get("format") == FORMAT and recorded.get("version") == VERSION \
                    and recorded.get("identity") == self.identity:
                return True
            if not force:
                raise ProbsentError(f"{self.output}: an interrupted run with another input, model or output "
                                    f"left {self.data.name} beside it; rerun that command to finish it, or add "
                                    f"--force to discard it and start over")
        self.discard()
        self.record.write_text(json.dumps({"format": FORMAT, "version": VERSION, "identity": self.identity},
                                          indent=1) + "\n", encoding="utf-8")
        return False

    def finish(self, into: Path) -> None:
        """Move the complete data to ``into`` (writing_output's temporary), forget the record."""
        os.replace(self.data, into)
        remove_quietly(self.record)

    def discard(self) -> None:
        for path in (self.data, self.following, self.record):
            remove_quietly(path)


def megabytes(size: int) -> str:
    """A file size as people read it: ``320.1 MB``."""
    return f"{size / 1e6:,.1f} MB"


def kept_files(output: str) -> str | None:
    """What an interrupted or failed run left beside ``output`` for the next run (the partial
    files, hidden: their names start with a dot), named with their sizes; None where nothing."""
    partial = Partial(output, {})
    kept = [(path, path.stat().st_size) for path in (partial.data, partial.following, partial.record)
            if path.is_file()]
    if not kept:
        return None
    names = ", ".join(f"{path.name} ({megabytes(size)})" for path, size in kept)
    return (f"kept {names} beside {output}: the same command continues from there; remove "
            f"{'them' if len(kept) > 1 else 'it'} to give the space back")


def skip_rows(chunks: Iterable[Chunk], count: int) -> Iterator[Chunk]:
    """``chunks`` without their first ``count`` rows (the rows a partial output holds)."""
    for chunk in chunks:
        size = len(chunk.texts)
        if count >= size:
            count -= size
            continue
        yield chunk if count == 0 else _rows_from(chunk, count)
        count = 0


def _rows_from(chunk: Chunk, first: int) -> Chunk:
    """The chunk from its row ``first`` on."""
    texts = chunk.texts
    if isinstance(texts, Utf8Texts):
        texts = Utf8Texts(texts.data, texts.starts[first:], texts.ends[first:],
                          None if texts.valid is None else texts.valid[first:])
    else:
        texts = list(texts)[first:]
    rows = chunk.rows
    if rows is not None:
        rows = rows.slice(first) if hasattr(rows, "slice") else rows[first:]
    lines = None if chunk.lines is None else chunk.lines[first:]
    return Chunk(texts, rows, chunk.source, lines)
