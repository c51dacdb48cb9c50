"""Training: learning on real pairs, resume, output protection, non-finite losses."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

import probsent
from probsent import ProbsentError
from probsent.cli import main
from probsent.settings import TrainConfig
from probsent.training.trainer import Trainer, build_encoder, scramble
from probsent.data.development_sets import as_data_dir, load_news_train
from probsent.training.model_selection import NewsValidator, StsValidator
from tests.helpers import REPO


def config(tmp_path, data, **overrides) -> TrainConfig:
    values = dict(model="wlo", data=str(data), out=str(tmp_path / "out"), batch_size=20,
                  megabatch=4, eval_every=5, vocab_size=1000)
    values.update(overrides)
    return TrainConfig(**values)


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PROBSENT_CACHE", str(tmp_path / "cache"))


def best_threshold_accuracy(scores: np.ndarray, specific: np.ndarray) -> float:
    """The accuracy of "specific if the score is above t" at the best threshold t (brute force)."""
    cuts = np.concatenate([[-np.inf], np.unique(scores)])
    return max(np.mean((scores > t) == specific) for t in cuts)


@pytest.mark.parametrize("model,extra", [("wlo", {"prior_weight": 1e-5, "engine": "torch"}),
                                         ("wlo", {"prior_weight": 1e-5, "engine": "fast"}), ("wordavg", {})])
def test_training_lowers_loss_and_raises_sts(tmp_path, model, extra, data_dir, pairs_slice) -> None:
    # 6,000 pairs spread over the whole file (every source); 300 steps of 100 pairs
    data = pairs_slice(6000, stride=200)
    cfg = config(tmp_path, data, model=model, batch_size=100, megabatch=5, epochs=5,
                 eval_every=30, vocab_size=10_000, **extra)
    trainer = Trainer(cfg, progress=False)
    trainer.validator = StsValidator.from_data_dir(trainer.vocab, str(data_dir))
    trainer.dev_scorer = NewsValidator.from_data_dir(trainer.vocab, str(data_dir))
    untrained = trainer.validator(trainer.encoder.eval())
    news = load_news_train(as_data_dir(str(data_dir)))
    untrained_scores = probsent.SentenceModel(trainer.encoder, trainer.vocab).specificity(news.sentences)
    trainer.encoder.train()
    losses = []
    megabatch = trainer._megabatch

    def recording_megabatch(pairs):
        taken = megabatch(pairs)
        losses.extend(loss for loss, _ in taken)
        return taken

    trainer._megabatch = recording_megabatch
    state = trainer.train()
    assert state["step"] == 300 and state["finished"]
    assert np.mean(losses[-30:]) < 0.8 * np.mean(losses[:10])
    best = state["best"]["score"]
    assert best > untrained + 0.01, (untrained, best)
    # the best checkpoint is what probsent.load gives for the output directory
    loaded = probsent.load(cfg.out)
    assert loaded.encoder.type_name == model
    # the untrained model's score, measured above before any step, is part of the record
    assert loaded.config["training"]["untrained_sts17_pearson"] == pytest.approx(untrained, abs=1e-9)
    # and so is its news-train accuracy, recomputed here by brute force over every threshold
    assert loaded.config["training"]["untrained_news_train_accuracy"] == pytest.approx(
        100 * best_threshold_accuracy(untrained_scores, news.specific), abs=1e-9)
    assert trainer.validator(loaded.encoder) == pytest.approx(best, abs=1e-6)
    # best-news/ holds the model with the best news-train accuracy, recomputed here by brute
    # force over every threshold
    scores = probsent.load(os.path.join(cfg.out, "best-news")).specificity(news.sentences)
    assert 100 * best_threshold_accuracy(scores, news.specific) == pytest.approx(state["best_news"]["score"], abs=1e-9)
    logged = [json.loads(line) for line in open(os.path.join(cfg.out, "log.jsonl"))]
    assert max(r["news_train_accuracy"] for r in logged) == state["best_news"]["score"]


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["torch", "fast"])
def test_interrupted_and_resumed_run_equals_uninterrupted(tmp_path, engine, toy_pairs) -> None:
    data = toy_pairs(30)  # 240 pairs: 3 mega-batches an epoch
    straight = Trainer(config(tmp_path / "a", data, epochs=2, engine=engine), progress=False)
    straight.train()

    interrupted = Trainer(config(tmp_path / "b", data, epochs=2, engine=engine), progress=False)
    calls = {"n": 0}
    megabatch = interrupted._megabatch

    def crash_on_fourth(pairs):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return megabatch(pairs)

    interrupted._megabatch = crash_on_fourth
    with pytest.raises(KeyboardInterrupt):
        interrupted.train()
    resumed = Trainer(config(tmp_path / "b", data, epochs=2, engine=engine), resume=True, progress=False)
    assert resumed.state["step"] > 0
    state = resumed.train()
    assert state["finished"] and state["step"] == straight.state["step"]
    for (name, a), b in zip(straight.encoder.state_dict().items(), resumed.encoder.state_dict().values()):
        assert torch.equal(a, b), name  # to the last bit


# `python -c KILL_AFTER_A_RENAME NAME N ARGS...` runs `probsent ARGS...` and dies (os._exit, no
# clean-up, as under SIGKILL) right after the N-th rename of a path named NAME.
KILL_AFTER_A_RENAME = """
import os, sys
from probsent.cli import main
name, nth = sys.argv[1], int(sys.argv[2])
real, seen = os.replace, [0]
def replace(src, dst):
    real(src, dst)
    if os.path.basename(src) == name:
        seen[0] += 1
        if seen[0] == nth:
            os._exit(9)
os.replace = replace
sys.exit(main(sys.argv[3:]))
"""


def _killed_after_a_rename(tmp_path, toy_pairs, name: str, nth: int) -> tuple[Path, list[str]]:
    """A WLO run (checkpoint every step) killed right after the ``nth`` rename of its ``name``
    directory: (its output directory, its train arguments)."""
    out = tmp_path / "out"
    args = ["train", "--model", "wlo", "--data", str(toy_pairs(40)), "--out", str(out), "--batch-size", "10",
            "--megabatch", "2", "--eval-every", "1", "--epochs", "1000", "--no-validation"]
    killed = subprocess.run([sys.executable, "-c", KILL_AFTER_A_RENAME, name, str(nth), *args],
                            env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True)
    assert killed.returncode == 9, killed.stderr.decode()
    return out, args


@pytest.mark.slow
def test_a_kill_while_replacing_the_checkpoint_leaves_it_loadable_and_resumable(tmp_path, toy_pairs) -> None:
    # killed at the worst moment of a checkpoint's swap: the old checkpoint is set aside
    # (.last.old), the new one complete beside it (.last.*.tmp) but not yet in place
    out, args = _killed_after_a_rename(tmp_path, toy_pairs, "last", 3)
    assert not (out / "last").exists() and (out / ".last.old").is_dir()
    assert any(p.name.startswith(".last.") and p.name.endswith(".tmp") for p in out.iterdir())
    model = probsent.load(out)  # best/ is complete
    assert np.isfinite(model.entropy("a man plays a guitar"))
    logged = [json.loads(line)["step"] for line in (out / "log.jsonl").read_text().splitlines()]
    assert logged == [2, 4, 6]  # killed while writing the checkpoint of step 8
    assert main([*args, "--max-steps", "12", "--resume"]) == 0
    assert not any(p.name.endswith((".tmp", ".old")) for p in out.iterdir())
    resumed = [json.loads(line)["step"] for line in (out / "log.jsonl").read_text().splitlines()]
    assert resumed == [2, 4, 6, 8, 10, 12]  # on from the checkpoint of step 6 in .last.old


@pytest.mark.slow
def test_a_kill_while_replacing_the_best_model_leaves_it_loadable_and_resumable(tmp_path, toy_pairs) -> None:
    # killed between the two renames of best/'s swap: best/ is gone, its previous version is
    # set aside as .best.old; loading the run reads that, and --resume puts it back
    out, args = _killed_after_a_rename(tmp_path, toy_pairs, "best", 2)
    assert not (out / "best").exists() and (out / ".best.old").is_dir()
    step_of = lambda model: model.config["training"]["step"]  # noqa: E731
    assert step_of(probsent.load(out)) == 4  # the best/ being replaced (of step 4; killed at step 6)
    assert main([*args, "--max-steps", "8", "--resume"]) == 0
    assert not any(p.name.endswith((".tmp", ".old")) for p in out.iterdir())
    assert step_of(probsent.load(out)) == 8


@pytest.mark.slow
@pytest.mark.parametrize("model, engine", [("wlo", "fast"), ("wlo", "torch"), ("wordsum", "torch")])
def test_runs_killed_and_resumed_end_with_the_uninterrupted_weights(tmp_path, model, engine, toy_pairs) -> None:
    # a real `probsent train`, killed with SIGKILL at a few moments (wherever it then is: in a
    # step, in mining, in a checkpoint write) and resumed each time, ends with the weights of
    # the uninterrupted run to the last bit
    data = toy_pairs(40)
    epochs = 12 if engine == "fast" else 4  # about 130 and 45 checkpoints
    def command(out):
        return [sys.executable, "-m", "probsent.cli", "train", "--model", model, "--data", str(data),
                "--out", str(out), "--batch-size", "10", "--megabatch", "2", "--eval-every", "3",
                "--epochs", str(epochs), "--engine", engine, "--no-validation", "--resume"]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    subprocess.run(command(tmp_path / "straight"), env=env, check=True, capture_output=True)
    out = tmp_path / "killed"
    log = out / "log.jsonl"
    kills = 0
    for wait_lines, delay in ((3, 0.13), (12, 0.29), (25, 0.05)):
        process = subprocess.Popen(command(out), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 60
        while (time.time() < deadline and process.poll() is None
               and not (log.exists() and len(log.read_text().splitlines()) >= wait_lines)):
            time.sleep(0.01)
        time.sleep(delay)
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            kills += 1
        process.wait()
    subprocess.run(command(out), env=env, check=True, capture_output=True)
    assert kills >= 1
    expected = load_file(str(tmp_path / "straight" / "last" / "model.safetensors"))
    got = load_file(str(out / "last" / "model.safetensors"))
    assert expected.keys() == got.keys()
    assert all(torch.equal(expected[k], got[k]) for k in expected)


def test_output_directory_is_protected(tmp_path, capsys, toy_pairs) -> None:
    data = toy_pairs(2)
    user_dir = tmp_path / "mine"
    user_dir.mkdir()
    (user_dir / "notes.txt").write_text("precious")
    args = ["train", "--data", str(data), "--batch-size", "4", "--megabatch", "2", "--no-validation"]
    assert main(args + ["--out", str(user_dir)]) == 2
    assert "not empty" in capsys.readouterr().err
    assert (user_dir / "notes.txt").read_text() == "precious"
    run = tmp_path / "run"
    assert main(args + ["--out", str(run)]) == 0
    assert main(args + ["--out", str(run)]) == 2
    assert "--resume" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["torch", "fast"])
def test_non_finite_loss_stops_training_without_saving_nan(tmp_path, engine, toy_pairs) -> None:
    data = toy_pairs(10)
    trainer = Trainer(config(tmp_path, data, epochs=5, eval_every=2, batch_size=10, megabatch=2,
                             engine=engine), progress=False)
    megabatch = trainer._megabatch

    def poisoned(pairs):
        if trainer.state["step"] == 6:
            with torch.no_grad():
                trainer.encoder.shift.weight[:] = float("nan")
        return megabatch(pairs)

    trainer._megabatch = poisoned
    with pytest.raises(ProbsentError, match="loss became nan at step 7"):
        trainer.train()
    saved = probsent.load(tmp_path / "out")
    assert all(torch.isfinite(p).all() for p in saved.encoder.parameters())


def test_scramble_permutes_only_real_words() -> None:
    gen = torch.Generator().manual_seed(0)
    ids = torch.arange(1, 41).reshape(4, 10)
    lengths = torch.tensor([10, 6, 3, 1])
    ids[1, 6:] = 0
    ids[2, 3:] = 0
    ids[3, 1:] = 0
    shuffled = scramble(ids, lengths, 1.0, gen)
    for row, n in enumerate(lengths.tolist()):
        assert sorted(shuffled[row, :n].tolist()) == sorted(ids[row, :n].tolist())
        assert shuffled[row, n:].eq(0).all()
    assert torch.equal(scramble(ids, lengths, 0.0, gen), ids)
    kept = scramble(ids.repeat(250, 1), lengths.repeat(250), 0.4, gen)
    changed = (kept != ids.repeat(250, 1)).any(1)[::4].float().mean().item()  # rows of length 10
    assert 0.3 < changed < 0.5


def test_step_budget_stops_at_the_mega_batch_end(tmp_path, toy_pairs) -> None:
    data = toy_pairs(30)  # 240 pairs, 80 a mega-batch: 4 steps each
    state = Trainer(config(tmp_path, data, epochs=1000, max_steps=6), progress=False).train()
    assert state["step"] == 8 and not state["finished"]
    more = Trainer(config(tmp_path, data, epochs=1000, max_steps=14), resume=True, progress=False)
    assert more.train()["step"] == 16


def test_mean_init_gain_scales_only_lstmgaussian_mean_map() -> None:
    def built(gain: float) -> dict[str, torch.Tensor]:
        torch.manual_seed(0)
        encoder = build_encoder(TrainConfig(model="lstmgaussian", mean_init_gain=gain), vocab_size=30)
        assert encoder.config()["mean_init_gain"] == gain  # kept in the model's config
        return {k: v.detach().clone() for k, v in encoder.state_dict().items()}

    plain, spread = built(1.0), built(10.0)
    for name, value in plain.items():
        expected = 10.0 * value if name == "to_mean.weight" else value
        assert torch.equal(spread[name], expected), name


def test_a_run_killed_before_its_first_checkpoint_can_be_started_again(tmp_path, capsys, toy_pairs) -> None:
    # what a kill during the first checkpoint write leaves: the run's marker and a temporary
    data = toy_pairs(2)
    args = ["train", "--data", str(data), "--batch-size", "4", "--megabatch", "2", "--no-validation"]
    for resume in ([], ["--resume"]):
        out = tmp_path / f"out{len(resume)}"
        out.mkdir()
        (out / "probsent-run.txt").write_text("")
        (out / ".best.x1y2.tmp").mkdir()
        assert main(args + ["--out", str(out)] + resume) == 0
        assert not (out / ".best.x1y2.tmp").exists() and (out / "best").is_dir()
    # a run that fails before writing anything leaves no directory behind, and a user's
    # empty directory as it was
    assert main(args[:2] + [str(tmp_path / "missing.tsv")] + args[3:] + ["--out", str(tmp_path / "new")]) == 2
    assert not (tmp_path / "new").exists()
    (tmp_path / "empty").mkdir()
    assert main(args[:2] + [str(tmp_path / "missing.tsv")] + args[3:] + ["--out", str(tmp_path / "empty")]) == 2
    assert (tmp_path / "empty").is_dir() and not any((tmp_path / "empty").iterdir())


def test_each_validation_is_logged_once_and_resuming_a_finished_run_changes_nothing(tmp_path, toy_pairs) -> None:
    data = toy_pairs(30)  # 240 pairs, 4 steps a mega-batch: validations at steps 8, 16 and 24, the last step
    state = Trainer(config(tmp_path, data, epochs=2), progress=False).train()
    assert state["finished"] and state["step"] == 24
    out = Path(tmp_path / "out")
    log = (out / "log.jsonl").read_text()
    assert [json.loads(line)["step"] for line in log.splitlines()] == [8, 16, 24]
    saved = json.loads((out / "last" / "trainer_state.json").read_text())
    assert saved["finished"] and saved["epoch"] == 2
    files = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    again = Trainer(config(tmp_path, data, epochs=2), resume=True, progress=False).train()
    assert again["step"] == 24 and again["finished"]
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == files


@pytest.mark.slow
def test_a_run_without_validation_holds_neither_the_compiler_nor_the_evaluation_suite(tmp_path) -> None:
    # what kept a training run above its memory goal (issue 45): torch._dynamo (70 MB, imported by
    # torch.optim) and scipy.stats (50 MB, imported through the eval parser, the validators and
    # the term-count diagnostic) are never imported by a --no-validation run of the compiled engine
    from tests.helpers import write_toy_pairs

    pairs = write_toy_pairs(tmp_path / "pairs.tsv")
    code = ("import sys\nfrom probsent.cli import main\n"
            f"code = main(['train', '--data', {str(pairs)!r}, '--out', {str(tmp_path / 'run')!r}, '--max-steps', '4',"
            " '--batch-size', '4', '--megabatch', '2', '--dim', '4', '--no-validation'])\n"
            "print(code, 'torch._dynamo' in sys.modules, 'scipy.stats' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                         env={**os.environ, "PROBSENT_CACHE": str(tmp_path / "cache")})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-3:] == ["0", "False", "False"]
