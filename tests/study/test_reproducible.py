"""A study is a function of its spec, its seed and the models' answers: run anywhere,
run twice, or killed and resumed, with models that answer at once or after a random real
wait, it writes the same bytes in every file a bundle hashes as reproducible."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.study.bundle import reproducible, study_files
from sdtt.study.ledger import RUN_LOG_FILE
from sdtt.study.runner import StudyRunner
from sdtt.study.spec import read_spec
from tests.fakes.openai_fake import FakeOpenAIServer, chatty_reply
from tests.study.helpers import CountingMocks, drive, run_study

# Burst and ping-pong, N = 0 and N > 0: the chats whose last reply raced the end of the
# chat, and the judges whose concurrent calls end in any order.
SPEC = """\
[study]
name = "again"
out = "out"
seed = 5

[design]
personas = ["chitchat-32b20fa3"]
models = ["mock/chatty"]
modes = ["burst", "pingpong"]
turns = [[0, 4], [6, 3]]
topics = ["Can computers fall in love?"]

[pseudo]
turns_per_topic = 3

[judges.llm]
model = "mock/chatty"
"""

KILLER = """
import os, signal, sys
from pathlib import Path
from tests.study.helpers import CountingMocks, run_study

started = []

class Dying(CountingMocks):
    def __call__(self, name):
        api = super().__call__(name)
        inner = api.generate

        async def generate(prompt, config):
            started.append(name)
            if len(started) > int(sys.argv[2]):  # this call is in flight: no answer
                os.kill(os.getpid(), signal.SIGKILL)
            return await inner(prompt, config)

        api.generate = generate
        return api

run_study(Path(sys.argv[1]), Dying())
"""


def _spec(folder: Path) -> Path:
    folder.mkdir(parents=True)
    path = folder / "study.toml"
    path.write_text(SPEC, encoding="utf-8")
    return path


def _hashed(out: Path) -> dict[str, bytes]:
    return {name: path.read_bytes() for name, path in study_files(out).items()}


def _differences(one: dict[str, bytes], other: dict[str, bytes]) -> list[str]:
    names = sorted(one.keys() | other.keys())
    return [name for name in names if reproducible(name) and one.get(name) != other.get(name)]


def _kill(spec: Path, after: int) -> None:
    root = Path(__file__).parents[2]
    done = subprocess.run(
        [sys.executable, "-c", KILLER, str(spec), str(after)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        timeout=600,
    )
    assert done.returncode == -9, done.stderr.decode()[-3000:]


def test_two_folders_twice_and_a_killed_run_write_the_same_bytes(tmp_path: Path) -> None:
    first = _spec(tmp_path / "one")
    second = _spec(tmp_path / "somewhere" / "else" / "two")
    assert run_study(first, CountingMocks()).finished
    assert run_study(second, CountingMocks()).finished
    expected = _hashed(first.parent / "out")
    assert _differences(expected, _hashed(second.parent / "out")) == []
    calls = len((first.parent / "out/ledger.jsonl").read_text("utf-8").splitlines())

    # Killed at three random points, each while a call is in flight, then finished.
    killed = _spec(tmp_path / "killed")
    for after in sorted(random.Random(45).sample(range(1, calls // 3), 3)):
        _kill(killed, after)
    assert run_study(killed, CountingMocks()).finished
    resumed = _hashed(killed.parent / "out")
    assert _differences(expected, resumed) == []
    assert set(resumed) == set(expected)

    # Nothing hashed names the folder it was run in, and the clock went to the run log.
    for name, data in resumed.items():
        assert str(tmp_path).encode() not in data, name
    log = [json.loads(line) for line in resumed[RUN_LOG_FILE].decode().splitlines()]
    assert {"at", "seconds", "answer"} <= set(log[0])
    assert not reproducible(RUN_LOG_FILE)
    for line in resumed["ledger.jsonl"].decode().splitlines():
        assert not {"at", "seconds", "latency"} & set(json.loads(line))
    for chain in (killed.parent / "out/pseudo").glob("*.jsonl"):
        for line in chain.read_text("utf-8").splitlines():
            assert not {"latency", "attempts"} & set(json.loads(line))


SERVED = """\
[study]
name = "served"
out = "out"
seed = 8

[design]
personas = ["chitchat-32b20fa3"]
models = ["openai/fake-chat"]
interrogator = "openai/fake-chat"
turns = [[0, 3], [3, 2]]
topics = ["Can computers fall in love?"]

[pseudo]
turns_per_topic = 3

[judges.llm]
model = "mock/chatty"
"""


def test_a_served_model_of_random_latency_writes_the_same_bytes_and_reruns_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The chats' bot and interrogator are a server that answers alike every time but
    # after a random real wait: it times nothing the study writes (but the run log).
    runs = []
    with FakeOpenAIServer(reply=chatty_reply, jitter=0.03) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        for folder in (tmp_path / "one", tmp_path / "elsewhere" / "two"):
            folder.mkdir(parents=True)
            (folder / "study.toml").write_text(SERVED, encoding="utf-8")
            assert StudyRunner(read_spec(folder / "study.toml"), drive=drive).run().finished
            runs.append(_hashed(folder / "out"))
        assert len(server.requests) > 20
    first, second = runs
    assert any(name.endswith(".events.jsonl") for name in first)
    assert _differences(first, second) == []
    assert first[RUN_LOG_FILE] != second[RUN_LOG_FILE], "the real timings are kept apart"

    # Its bundle reruns from the recorded answers, the replayed chats timed alike.
    bundle = tmp_path / "bundle"
    spec = str(tmp_path / "one" / "study.toml")
    assert main(["study", "bundle", spec, "--out", str(bundle)]) == 0
    capsys.readouterr()
    assert main(["study", "verify", str(bundle), "--rerun"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "the rerun is byte-identical" in out
    assert "real time" not in out
