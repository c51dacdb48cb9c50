"""The core install's costs (docs/PERFORMANCE.md): a fresh process's ``import probsent;
probsent.load(); model.encode(one sentence)`` (wall time and peak memory, median of 5), and
encoding 100,000 sentences with the NumPy encoder and with the torch module (when torch is
installed), and what numba buys the core: specificity of 100,000 sentences and a 2,000 x 2,000
similarity matrix with numba and with its import blocked (the NumPy fallbacks).
Run: ``python benchmarks/bench_core.py [--data-dir ../shared/data]``."""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FRESH = """
import json, resource, sys, time
start = time.perf_counter()
import probsent
model = probsent.load()
model.encode("The Dow Jones industrial average fell 2.3 % to 10,421.67 on Tuesday.")
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "torch": "torch" in sys.modules}))
"""


def fresh_process(checkout: Path = REPO, runs: int = 5) -> dict:
    """Median wall time and peak resident memory of the one-sentence script, each in a new
    process importing probsent from ``checkout``."""
    import os

    env = {**os.environ, "PYTHONPATH": str(checkout)}
    results = [json.loads(subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, check=True,
                                         cwd=checkout, env=env).stdout) for _ in range(runs)]
    return {"seconds": statistics.median(r["seconds"] for r in results),
            "peak_mb": statistics.median(r["peak_mb"] for r in results), "imports_torch": results[0]["torch"]}


NUMBA = """
import json, sys, time
if sys.argv[1] == "blocked":
    sys.modules["numba"] = None  # every compiled path falls back to NumPy
import probsent
sentences = json.load(open(sys.argv[2]))
model = probsent.load()
model.specificity(sentences[:2000]); model.similarity(sentences[:10], sentences[:10])  # first uses
start = time.perf_counter(); model.specificity(sentences); scores = time.perf_counter() - start
start = time.perf_counter(); model.similarity(sentences[:2000], sentences[2000:4000]); matrix = time.perf_counter() - start
print(json.dumps({"specificity_seconds": scores, "similarity_2000x2000_seconds": matrix}))
"""


def with_and_without_numba(sentences: list[str], scratch: Path) -> dict:
    """The core's compiled paths against their NumPy fallbacks, each in a fresh process."""
    scratch.write_text(json.dumps(sentences), encoding="utf-8")
    return {mode: json.loads(subprocess.run([sys.executable, "-c", NUMBA, mode, str(scratch)], capture_output=True,
                                            text=True, check=True, cwd=REPO).stdout) for mode in ("numba", "blocked")}


def training_sentences(data_dir: Path, count: int) -> list[str]:
    """The first ``count`` sentences of the shared training pairs (both sides)."""
    import gzip

    sentences = []
    with gzip.open(data_dir / "paraphrase" / "pairs.tsv.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            sentences.extend(line.rstrip("\n").split("\t")[:2])
            if len(sentences) >= count:
                break
    return sentences[:count]


def bulk(sentences: list[str]) -> dict:
    """Seconds to encode ``sentences`` (tokenizing included), NumPy and torch."""
    import probsent

    numpy_model, out = probsent.load(), {"sentences": len(sentences)}
    numpy_model.encode(sentences[:2000])  # the compiled tokenizer's first use
    start = time.perf_counter()
    numpy_model.encode(sentences)
    out["numpy_seconds"] = time.perf_counter() - start
    try:
        import torch  # noqa: F401
    except ImportError:
        return out
    torch_model = probsent.load()
    torch_model.encoder  # builds the torch module: the torch path from here on
    torch_model.encode(sentences[:2000])
    start = time.perf_counter()
    torch_model.encode(sentences)
    out["torch_seconds"] = time.perf_counter() - start
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--compare", type=Path, help="another checkout whose fresh process to time the same way")
    args = parser.parse_args()
    if args.compare:
        print(json.dumps({"fresh_process": fresh_process(args.compare.resolve()), "checkout": str(args.compare)}))
    sentences = training_sentences(args.data_dir, 100_000)
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        numba = with_and_without_numba(sentences, Path(scratch) / "sentences.json")
    print(json.dumps({"fresh_process": fresh_process(), "encode_100k": bulk(sentences),
                      "numba_100k": numba}, indent=2))


if __name__ == "__main__":
    main()
