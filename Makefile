# Two entry points for a fresh machine: `make run` (set up, train a small WLO, score examples)
# and `make test` (set up, run the test suite). Everything installs into .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DATA ?= ../shared/data
DEMO := runs/demo
# torch is pinned: 2.13.0 is the CPU build available on this project's machines; an
# unpinned torch would pull a multi-GB CUDA build.
TORCH := torch==2.13.0

.PHONY: setup run test bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet $(TORCH)
	$(BIN)/pip install --quiet -e '.[test,baselines]'
	touch $@

# Main job: train WLO for about four minutes on the shared paraphrase pairs (resumable: a
# second `make run` continues the same run), then print the specificity of the example
# sentences, most specific first.
run: setup
	$(BIN)/probsent train --model wlo --data $(DATA)/paraphrase/pairs.tsv.gz --out $(DEMO) \
		--max-pairs 200000 --max-seconds 240 --data-dir $(DATA) --resume
	$(BIN)/probsent specificity --model $(DEMO) --input examples/sentences.txt | sort -t'	' -k1,1 -gr

test: setup
	$(BIN)/python -m pytest -q

bench: setup
	$(BIN)/python benchmarks/bench_training.py

clean:
	rm -rf $(VENV) runs
