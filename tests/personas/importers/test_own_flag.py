"""Adding a chat-export importer with an option of its own is the files ARCHITECTURE.md
names: the toy format below is one module defining ``IMPORTER`` (with its ``--room`` flag)
and one entry in ``IMPORTERS``, yet ``sdtt persona import toy`` offers the flag, passes
its value to the importer and writes the persona."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.personas.importers import IMPORTERS
from sdtt.personas.store import load_persona

ROOT = Path(__file__).resolve().parents[3]
TABLE = Path(__file__).parent / "fixtures" / "tabular" / "chat.csv"

TOY = textwrap.dedent(
    """
    from sdtt.personas.importers.options import Columns, Flag
    from sdtt.personas.importers.tabular import CsvImporter

    SEEN = []


    class ToyImporter(CsvImporter):
        name = "toy"
        help = "a toy table format"
        flags = (Flag("--room", "chat", "The room to read.", metavar="NAME"),)

        def parse(self, data, path, options):
            SEEN.append(options.chat)
            columns = Columns(sender="author", text="body", time="ts", conversation="chat")
            return super().parse(data, path, type(options)(**{**vars(options), "columns": columns}))


    IMPORTER = ToyImporter()
    """
)


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    (tmp_path / "toy_chat_format.py").write_text(TOY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(IMPORTERS, "toy", "toy_chat_format")
    import toy_chat_format  # type: ignore[import-not-found]

    return toy_chat_format


def test_an_importer_s_own_flag_reaches_it_from_the_command_line(
    toy: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["persona", "import", "toy", "--help"])
    assert "--room NAME" in capsys.readouterr().out
    out = tmp_path / "personas"
    argv = ["persona", "import", "toy", str(TABLE), "--me", "Ann Smith", "--merge-others"]
    assert main([*argv, "--room", "lobby", "--name", "toyann", "--out", str(out)]) == 0
    assert toy.SEEN == ["lobby"]  # type: ignore[attr-defined]
    persona = load_persona(out / "toyann.jsonl")
    assert persona.messages


def test_a_format_without_the_flag_refuses_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["persona", "import", "csv", str(TABLE), "--me", "Ann Smith", "--room", "lobby"])
    assert "--room" in capsys.readouterr().err


def test_architecture_names_the_files_of_an_importer_with_its_own_flag() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    bullet = text.split("- **A chat-export importer**", 1)[1].split("\n- **", 1)[0]
    paths = re.findall(r"`(sdtt/[^`]+)`", bullet)
    assert "sdtt/personas/importers/__init__.py" in paths
    assert "sdtt/personas/importers/options.py" in paths
    for path in paths:
        assert (ROOT / path).exists(), path
