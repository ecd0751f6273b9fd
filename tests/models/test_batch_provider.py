"""A provider with a batch API is one registry entry and a batch module beside it.

This module is the toy provider ``toy``: its ``create`` and ``availability``, and its
batch API (``create_batch``, an in-memory batch that ends on its second poll). The toy is
registered in ``PROVIDERS`` and nowhere else, yet ``sdtt generate --batch`` runs chains
through its backend, the cost shown comes from its price table at the batch discount,
the help texts name its key variables, and reports mark its bot as a baseline.
ARCHITECTURE.md names the files such a provider needs; the last tests hold it to that.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from sdtt.analysis.metrics import condition_label
from sdtt.cli import main
from sdtt.generate.batch_api import LEDGER_NAME
from sdtt.generate.pricing import estimate_cost
from sdtt.models.base import ModelAPI, Usage
from sdtt.models.batch import BatchRequest, BatchResult, BatchState
from sdtt.models.mock import MockModelAPI, chatty_script
from sdtt.models.model import Model
from sdtt.models.prices import Price
from sdtt.models.registry import PROVIDERS, Provider

ROOT = Path(__file__).resolve().parents[2]
PRICE = Price(input=3.0, cached_input=1.0, output=7.0)

TOY = Provider(
    "toy",
    __name__,
    "toy/x",
    "a toy provider with a batch API",
    takes_base_url=True,
    key_env="TOY_API_KEY",
    base_url_env="TOY_BASE_URL",
    own_hosts=frozenset({"api.toy.example"}),
    prices={"x": PRICE},
    baseline=True,
    batch=__name__,
)


def create(model: str, *, base_url: str | None = None, api_key_env: str | None = None) -> ModelAPI:
    """The toy's model: the chatty mock's replies under the toy's name."""
    return MockModelAPI(chatty_script(), name=f"toy/{model}")


def availability() -> tuple[bool, str]:
    """The toy is always usable."""
    return True, "a toy"


class ToyBatch:
    """A batch API in memory: a batch ends on its second poll, and its answers are the
    model's own, given in reverse order (a batch API keeps no order)."""

    batches: ClassVar[dict[str, list[BatchRequest]]] = {}
    """Every batch submitted, by id (over all instances: a rerun makes a new backend)."""

    def __init__(self, model: Model) -> None:
        self.api = model.api
        self.model = model.name
        self.polls: dict[str, int] = {}

    async def submit(self, requests: Sequence[BatchRequest]) -> str:
        """Keep the requests as a new batch."""
        batch_id = f"toybatch_{len(self.batches) + 1}"
        self.batches[batch_id] = list(requests)
        return batch_id

    async def state(self, batch_id: str) -> BatchState:
        """Running at the first poll, ended from the second."""
        self.polls[batch_id] = self.polls.get(batch_id, 0) + 1
        return "ended" if self.polls[batch_id] > 1 else "running"

    async def results(self, batch_id: str) -> list[BatchResult]:
        """The model's answer to every request of the batch."""
        requests = self.batches[batch_id]
        return [
            BatchResult(
                request.custom_id, output=await self.api.generate(request.prompt, request.config)
            )
            for request in reversed(requests)
        ]


def create_batch(model: Model) -> ToyBatch:
    """The toy's batch API for ``model``."""
    return ToyBatch(model)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """The toy provider registered, and the working directory a fresh folder."""
    monkeypatch.setitem(PROVIDERS, TOY.name, TOY)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "topics.txt").write_text("weekend plans\nnew phones\nbad weather\n")
    yield tmp_path
    ToyBatch.batches.clear()


def _generate(out: str, *extra: str) -> int:
    return main(
        [
            "generate",
            "--model",
            "toy/x",
            "--seed",
            "1",
            "--seed",
            "2",
            "--topics",
            "topics.txt",
            "--turns",
            "6",
            "--turns-per-topic",
            "3",
            "--out",
            out,
            *extra,
        ]
    )


def _records(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Each chain file's records, without what depends on the clock."""
    found = {}
    for path in sorted(folder.glob("*.jsonl")):
        if path.name == LEDGER_NAME:
            continue
        records = [json.loads(line) for line in path.read_text().splitlines()]
        for record in records:
            record.pop("latency", None)
            record.pop("attempts", None)
        found[path.name] = records
    return found


def _dollars(records: dict[str, list[dict[str, Any]]], discount: float) -> str:
    """The cost of the chains' calls at the toy's price, as the summary shows it."""
    total = 0.0
    for chain in records.values():
        for record in chain:
            if record.get("type") == "pseudo_call":
                usage = record["usage"]
                cached = usage["cached_input_tokens"] or 0
                total += (
                    (usage["input_tokens"] - cached) * PRICE.input
                    + cached * PRICE.cached_input
                    + usage["output_tokens"] * PRICE.output
                ) / 1e6
    total *= discount
    return f"≈${total:.2f}" if total >= 0.1 else f"≈${total:.4f}"


def test_a_registered_provider_runs_generate_batch_through_its_own_backend(
    toy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _generate("direct") == 0
    direct_out = capsys.readouterr().out
    assert _generate("batched", "--batch", "--poll", "0") == 0
    batched_out = capsys.readouterr().out

    direct, batched = _records(toy / "direct"), _records(toy / "batched")
    assert len(batched) == 2 and batched == direct
    # Both chains' calls went in one batch per round, each batch noted in the ledger.
    ledger = [json.loads(line) for line in (toy / "batched" / LEDGER_NAME).read_text().splitlines()]
    submitted = [entry for entry in ledger if entry["type"] == "batch"]
    assert [entry["id"] for entry in submitted] == list(ToyBatch.batches)
    assert {entry["model"] for entry in submitted} == {"toy/x"}
    assert all(len(requests) == 2 for requests in ToyBatch.batches.values())
    calls = sum(1 for chain in direct.values() for r in chain if r.get("type") == "pseudo_call")
    assert len(submitted) * 2 == calls
    # The cost comes from the toy's price table, at half price through the batch API.
    assert _dollars(direct, 1.0) in direct_out
    assert _dollars(batched, 0.5) in batched_out
    assert _dollars(direct, 1.0) != _dollars(batched, 0.5)


def test_a_dated_snapshot_costs_what_its_base_model_costs(toy: Path) -> None:
    usage = Usage(input_tokens=1000, cached_input_tokens=400, output_tokens=100)
    dollars = (600 * 3.0 + 400 * 1.0 + 100 * 7.0) / 1e6
    assert estimate_cost("toy/x-2025-01-01", usage) == pytest.approx(dollars)
    assert estimate_cost("toy/x", usage, batch=True) == pytest.approx(dollars / 2)
    assert estimate_cost("toy/y", usage) is None


def test_a_provider_without_a_batch_module_is_refused_by_name(
    toy: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(PROVIDERS, "toy", Provider("toy", __name__, "toy/x", "no batch API"))
    assert _generate("out", "--batch", "--poll", "0") == 2
    error = capsys.readouterr().err
    assert "--batch works with openai/ and anthropic/ models only, not toy/x" in error


def test_help_texts_and_reports_ask_the_registry(
    toy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["generate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "$TOY_BASE_URL" in text and "TOY_API_KEY only to api.toy.example" in text
    assert "openai/, anthropic/, toy/ models" in text
    main(["models"])
    assert "TOY_API_KEY only to api.toy.example" in " ".join(capsys.readouterr().out.split())
    row = {"model": "toy/x", "mode": "burst", "turns": 3, "n": 0, "x": 3}
    assert condition_label(row).startswith("toy/x (baseline), burst")
    assert "(baseline)" not in condition_label({**row, "model": "mock/chatty"})


def test_architecture_names_the_files_of_a_provider_with_a_batch_api() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    bullet = text.split("- **A provider with a batch API**", 1)[1].split("\n- **", 1)[0]
    paths = re.findall(r"`((?:sdtt|tests)/[^`]+)`", bullet)
    assert {"sdtt/models/registry.py", "sdtt/models/batch.py", "sdtt/models/prices.py"} <= set(
        paths
    )
    assert Path(__file__).relative_to(ROOT).as_posix() in paths
    batched = [p for p in PROVIDERS.values() if p.batch]
    assert batched
    for path in paths:
        if "<name>" not in path:
            assert (ROOT / path).exists(), path
            continue
        # A file named after its provider: true of every provider with a batch API.
        for provider in batched:
            module = path.replace("<name>", provider.name).removesuffix(".py").replace("/", ".")
            assert module in (provider.module, provider.batch), (path, provider.name)


KNOWN_NAMES: dict[str, str] = {
    # The model picker's suggestions: the two mock scripts that suit a first try, then
    # each other provider's example (asked of the registry).
    "sdtt/ui/setup.py": "the chat setup's suggested models",
}
"""Modules outside ``sdtt/models/`` allowed to name providers, each with its reason."""


def _is_provider_name(value: object) -> bool:
    """``openai``, ``openai/``, ``openai/gpt-4o``: a registered provider or one of its models."""
    if not isinstance(value, str) or " " in value:
        return False
    name, slash, _ = value.partition("/")
    return name in PROVIDERS and (bool(slash) or value == name)


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the docstring constants of ``tree`` (prose, free to name examples)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for statement in body:
                if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                    found.add(id(statement.value))
    return found


def _provider_facts(path: Path) -> list[int]:
    """Lines of ``path`` that list provider names, compare with one, test a model name's
    prefix against one, or name a provider's key or base-URL variable outside prose."""
    variables = {v for p in PROVIDERS.values() for v in (p.key_env, p.base_url_env) if v}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    prose = _docstrings(tree)
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            values, least = list(node.elts), 2
        elif isinstance(node, ast.Dict):
            values, least = [key for key in node.keys if key is not None], 2
        elif isinstance(node, ast.Compare):
            values, least = [node.left, *node.comparators], 1
        elif isinstance(node, ast.Constant) and id(node) not in prose:
            value = node.value
            if isinstance(value, str) and (
                any(variable in value for variable in variables)
                or (value.endswith("/") and _is_provider_name(value))
            ):
                lines.append(node.lineno)
            continue
        else:
            continue
        named = [v for v in values if isinstance(v, ast.Constant) and _is_provider_name(v.value)]
        if len(named) >= least:
            lines.append(node.lineno)
    return sorted(set(lines))


def test_only_the_models_package_knows_which_providers_exist() -> None:
    """Lists or checks of provider names, a model name's prefix ('eliza/') or a key
    variable outside ``sdtt/models/`` would be a second table a new provider has to be
    added to."""
    found = {}
    for path in sorted((ROOT / "sdtt").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("sdtt/models/"):
            continue
        lines = _provider_facts(path)
        if lines:
            found[relative] = lines
    assert set(found) == set(KNOWN_NAMES), found


def test_the_check_sees_a_baseline_prefix_and_a_key_variable(tmp_path: Path) -> None:
    source = tmp_path / "leaky.py"
    source.write_text(
        '"""Reads OPENAI_API_KEY (prose is fine)."""\n'
        'BASELINES = ("eliza/",)\n'
        'HELP = "set OPENAI_API_KEY first"\n'
        'def free(model): return model in ("mock", "local")\n',
        encoding="utf-8",
    )
    assert _provider_facts(source) == [2, 3, 4]
