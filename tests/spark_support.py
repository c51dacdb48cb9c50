"""What the Spark tests share: pyspark and Java present (in CI, CI=true, a missing one fails
the test instead of skipping it), and a standalone Spark cluster on the loopback interface (a
master and one worker, separate JVMs started with ``spark-class``, the worker with its own
TMPDIR), stopped by process id."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parents[1]
CONNECT_MODULES = ("grpc", "grpc_status", "google.protobuf", "google.rpc", "zstandard")


def unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: CI must run the Spark tests (make setup installs probsent[spark])")
    pytest.skip(reason)


def require_spark(connect: bool = False) -> None:
    """pyspark (with Spark Connect's client libraries when ``connect``) and Java, or skip (fail in CI)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        unavailable("pyspark is not installed")
    if connect:
        missing = [m for m in CONNECT_MODULES if _missing(m)]
        if missing:
            unavailable(f"pyspark[connect] is not installed (no {', '.join(missing)})")
    if shutil.which("java") is None:
        unavailable("java is not on PATH (Spark needs Java 17)")


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ImportError:
        return True


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_env(**extra: str) -> dict[str, str]:
    """The environment of a Spark process started here: Spark's home inside pyspark, loopback
    only, this interpreter and this checkout for Python workers, small daemon heaps."""
    from pyspark.find_spark_home import _find_spark_home

    env = dict(os.environ)
    env.update(SPARK_HOME=_find_spark_home(), SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY="256m",
               PYSPARK_PYTHON=sys.executable,
               PYTHONPATH=os.pathsep.join(p for p in [str(REPO), os.environ.get("PYTHONPATH", "")] if p))
    env.update(extra)
    return env


class StandaloneCluster:
    """A master and one worker (``cores`` cores, 1 GB) under ``root``; ``url`` is the master."""

    def __init__(self, root: Path, cores: int = 2, timeout: float = 120.0) -> None:
        self.root, self.cores, self.timeout = root, cores, timeout
        self.processes: list[subprocess.Popen] = []
        port, self.ui = free_port(), free_port()
        self.url = f"spark://127.0.0.1:{port}"
        self.worker_tmp = root / "worker-tmp"

    def start(self) -> "StandaloneCluster":
        from pyspark.find_spark_home import _find_spark_home

        spark_class = str(Path(_find_spark_home()) / "bin" / "spark-class")
        conf = self.root / "conf"  # no spark-defaults.conf from the machine
        for d in (conf, self.worker_tmp, self.root / "work", self.root / "master-tmp"):
            d.mkdir(parents=True)
        master = [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                  "--port", self.url.rsplit(":", 1)[1], "--webui-port", str(self.ui)]
        worker = [spark_class, "org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1",
                  "--cores", str(self.cores), "--memory", "1g", "--webui-port", str(free_port()),
                  "--work-dir", str(self.root / "work")]
        self._spawn("master", master, TMPDIR=str(self.root / "master-tmp"), SPARK_CONF_DIR=str(conf),
                    SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false")  # no fixed port 6066
        self._wait(lambda status: True, "the master's web UI")
        self._spawn("worker", worker, TMPDIR=str(self.worker_tmp), SPARK_LOCAL_DIRS=str(self.worker_tmp),
                    SPARK_CONF_DIR=str(conf))
        self._wait(lambda status: status.get("aliveworkers", 0) >= 1, "a registered worker")
        return self

    def _spawn(self, name: str, command: list[str], **env: str) -> None:
        log = open(self.root / f"{name}.log", "wb")
        self.processes.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                               stdin=subprocess.DEVNULL, env=spark_env(**env)))
        log.close()

    def _wait(self, ready, what: str) -> None:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            for process in self.processes:
                if process.poll() is not None:
                    raise RuntimeError(f"a Spark daemon exited ({process.args[1]}): {self.logs()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.ui}/json/", timeout=5) as response:
                    if ready(json.load(response)):
                        return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"no {what} after {self.timeout:.0f} s: {self.logs()}")

    def logs(self) -> str:
        return " | ".join(p.read_text(errors="replace")[-2000:] for p in sorted(self.root.glob("*.log")))

    def stop(self) -> None:
        """The worker, then the master: SIGTERM to each process id, SIGKILL after 30 s."""
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(10)


@contextmanager
def model_planted_in_tmp(model: Path, archive: str, forged: Path) -> Iterator[None]:
    """Another user's model ``forged`` planted in the shared temporary directory wherever a
    staging directory for ``model`` could be looked for: under the name probsent used before
    (``probsent-spark/probsent-model-<hash of the files>``, reused without a check), under the
    archive's name and as its unpacked directory. Removed afterwards (only what it made)."""
    import hashlib
    import tempfile

    from probsent.model_directory import MODEL_FILES

    old = hashlib.sha256()
    for name in MODEL_FILES:
        if (model / name).is_file():
            old.update(name.encode() + b"\0" + (model / name).read_bytes())
    shared = Path(tempfile.gettempdir())
    made = [d for d in [shared / "probsent-spark"] if not d.exists()]
    try:
        for target in [shared / "probsent-spark" / f"probsent-model-{old.hexdigest()[:16]}",
                       shared / "probsent-spark" / archive, shared / archive]:
            if not target.exists():
                shutil.copytree(forged, target)
                made.append(target)
        yield
    finally:
        for target in reversed(made):
            shutil.rmtree(target, ignore_errors=True)


def halved_copy(model, path: Path) -> Path:
    """``model`` (a WLO SentenceModel) saved at ``path`` with every scale halved: a forged
    model whose scores differ from the real one's by several nats."""
    import torch

    with torch.no_grad():
        model.encoder.scale.weight.mul_(0.5)
    model.save(path)
    return path
