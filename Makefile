# Two entry points for a fresh machine: `make run` (the core install, then score and explain the
# example sentences with the WLO model shipped in the package: no torch) and `make test` (every
# extra, then the test suite). Everything installs into .venv. `make dist` builds the sdist and
# the wheel (with the shipped model) into dist/.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DATA ?= ../shared/data
DEMO := runs/demo
# torch is pinned: 2.13.0 is the CPU build available on this project's machines; an
# unpinned torch would pull a multi-GB CUDA build.
TORCH := torch==2.13.0

.PHONY: setup core run train-demo reproduce recalibrate test test-fast bench dist core-check clean

setup: $(VENV)/.installed

# everything: torch (pinned, first), the package with every extra and the test tools, and the
# research wing (reproduction/: the paper's reproduction and `probsent eval`, never in the wheel)
$(VENV)/.installed: pyproject.toml reproduction/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet $(TORCH)
	$(BIN)/pip install --quiet -e '.[all,test]'
	$(BIN)/pip install --quiet --no-deps -e ./reproduction
	touch $@ $(VENV)/.core

# the core install alone (NumPy inference; no torch, Spark or spaCy)
core: $(VENV)/.core

$(VENV)/.core: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e .
	touch $@

# Main job: the specificity of the example sentences with the shipped model (score, then
# P(specific), then the percentile for the sentence's length, most specific first), and one
# sentence's entropy explained word by word.
# Needs no data: the model is inside the package.
run: core
	$(BIN)/probsent specificity --probability --percentile --input examples/sentences.txt | sort -t'	' -k1,1 -gr
	$(BIN)/probsent explain "The Dow Jones industrial average fell 2.3 % to 10,421.67 on Tuesday."

# Train a small WLO on the shared pairs, at most 20,000 of each source (one epoch, about 1,750
# steps; resumable), then score the examples with it.
train-demo: setup
	PROBSENT_DATA_DIR=$(DATA) $(BIN)/probsent train --model wlo --data $(DATA)/paraphrase/pairs.tsv.gz \
		--out $(DEMO) --source-caps '*=20000' --resume
	$(BIN)/probsent specificity --model $(DEMO) --input examples/sentences.txt | sort -t'	' -k1,1 -gr
	@echo "(These scores are in the paper's unit, a sentence starting as N(0, I). The shipped model is written with" \
	      "probsent export --start-variance S (its config.json's start_variance), which moves every score by" \
	      "-dim/2 x log S (+104 for its S = 1/64 and dim 50) and changes no ranking: compare rankings or" \
	      "percentiles across models, not raw scores.)"

# Retrain and re-evaluate every run of reproduction/experiments/plan.py and the ship rule's design
# rounds, ship the rule's winner into the package and regenerate reproduction/docs/RESULTS.md, the
# model card and README's sample output (hours on a 2-core CPU; RESULTS.md says how long).
reproduce: setup
	$(BIN)/python -m reproduction.experiments.reproduce --ship
	$(BIN)/python -m reproduction.experiments.model_card --data-dir $(DATA)
	$(BIN)/python -m reproduction.experiments.readme_sample

# After a change to the shipped model's scores (its files or how a sentence is read): calibrate it
# again (percentiles.json, calibration.json), redo the pre-registered choice of P's features on the
# development rows (the test stage stops if the choice moved and model_calibration.FEATURES did
# not), then the test report and every document that prints them (minutes; reproduction/docs/EXPERIMENTS.md,
# "P(specific) as a probability of the news label")
recalibrate: setup
	$(BIN)/python -m probsent.cli calibrate --model probsent/pretrained/wlo --data-dir $(DATA)
	$(BIN)/python -m reproduction.experiments.probability_report --stage choose --data-dir $(DATA)
	$(BIN)/python -m reproduction.experiments.probability_report --stage test --data-dir $(DATA)
	$(BIN)/python -m reproduction.experiments.ship_rule --round 1 --stage shipped-rows
	$(BIN)/python -m reproduction.experiments.model_card --data-dir $(DATA)
	$(BIN)/python -m reproduction.experiments.readme_sample
	$(BIN)/python -m reproduction.experiments.summarize

# every test (minutes); `make test-fast` leaves out the tests marked slow or data (the edit
# loop: under a minute on a 2-core machine)
test: setup
	$(BIN)/python -m pytest -q

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow and not data"

bench: setup
	$(BIN)/python benchmarks/bench_training.py

# the sdist and the wheel, with the shipped model inside (dist/probsent-VERSION*)
dist: core
	rm -rf dist build
	$(BIN)/pip install --quiet build
	$(BIN)/python -m build --outdir dist .

# a fresh virtual environment with the core install only (from this checkout): it encodes,
# scores, explains and compares sentences with the shipped model, and torch is not importable
core-check:
	rm -rf build/core-venv build/lib build/bdist.*  # setuptools reuses build/lib: a stale copy would ship removed modules
	$(PYTHON) -m venv build/core-venv
	build/core-venv/bin/pip install --quiet .
	cd build && core-venv/bin/python ../benchmarks/core_install_check.py

clean:
	rm -rf $(VENV) runs
