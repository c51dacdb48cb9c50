"""The command line reads a model through one short path (issue 42): from the CLI's handling of
``--model`` to the model object, the calls enter at most MAX_MODULES of probsent's modules, and
the model's config.json is opened once. Measured with a profiler in a fresh process, never by
naming the modules."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MAX_MODULES = 8

# Runs the command once (every import done), then again under a profiler: each call that a
# function of probsent.cli makes into another probsent module is a span; the spans that open
# the model's config.json are the model path. Prints the modules entered in them (functions
# only: a module's own body runs at import) and how often config.json was opened.
TRACER = r"""
import contextlib, io, json, os, sys
from pathlib import Path
from probsent.cli import main

ROOT = Path(sys.argv[1]).resolve()
args = sys.argv[2:]

def run():
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(args) == 0

def module(code):
    try:
        parts = Path(code.co_filename).resolve().relative_to(ROOT).with_suffix("").parts
    except ValueError:
        return None
    return ".".join(parts) if parts[0] == "probsent" and code.co_name != "<module>" else None

run()
opened = []
sys.addaudithook(lambda event, a: opened.append(str(a[0])) if event == "open" else None)
spans, open_span = [], []

def profile(frame, event, arg):
    if event == "return" and open_span and open_span[0][0] is frame:
        spans.append({"modules": open_span[0][1], "opened": opened[open_span[0][2]:]})
        open_span.clear()
    if event != "call" or (name := module(frame.f_code)) is None:
        return
    if open_span:
        open_span[0][1].add(name)
    elif frame.f_back is not None and module(frame.f_back.f_code) == "probsent.cli" and name != "probsent.cli":
        open_span.append((frame, {name}, len(opened)))

sys.setprofile(profile)
run()
sys.setprofile(None)
model = [s for s in spans if any(p.endswith("config.json") for p in s["opened"])]
print(json.dumps({"modules": sorted(set().union(*(s["modules"] for s in model))),
                  "config_opened": sum(p.endswith("config.json") for p in opened)}))
"""


def _model_path(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", TRACER, str(REPO), *args], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("command", ["specificity", "explain"])
@pytest.mark.parametrize("model", ["default", "probsent/pretrained/wlo"])
def test_the_cli_reads_a_model_through_few_modules_once(command: str, model: str) -> None:
    found = _model_path(command, "--model", model, "It is good.")
    assert 3 <= len(found["modules"]) <= MAX_MODULES, found["modules"]  # 3: the path was seen at all
    assert found["config_opened"] == 1
