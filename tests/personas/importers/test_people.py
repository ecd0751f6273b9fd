"""Two people of one chat export: each gets a file of their own, and ``--me`` names one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.personas.store import load_persona

from .helpers import FIXTURES

CHAT = FIXTURES / "whatsapp" / "android_es.txt"


@pytest.fixture
def chat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    return Path(shutil.copy(CHAT, tmp_path / "chat.txt"))


def imported(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["persona", "import", "whatsapp", *argv, "--date-format", "DD/MM/YY"])
    return code, " ".join(capsys.readouterr().err.split())


def test_two_people_of_one_export_get_two_files(
    chat: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert imported(capsys, str(chat), "--me", "Maya Chen")[0] == 0
    assert imported(capsys, str(chat), "--me", "Jordan Lee")[0] == 0
    files = sorted(Path("personas").glob("*.jsonl"))
    assert len(files) == 2
    # Each file is the person asked for: Maya's own words are Maya's persona's.
    owners = {
        path.name: {m.text for m in load_persona(path).messages if m.side == "response"}
        for path in files
    }
    assert sum("buenos días" in texts for texts in owners.values()) == 1
    assert sum("buenas noches" in texts for texts in owners.values()) == 1
    # Scrubbed files do not carry the person's name.
    assert not any("maya" in name or "jordan" in name for name in owners)


def test_force_never_replaces_one_person_with_another(
    chat: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert imported(capsys, str(chat), "--me", "Maya Chen", "--name", "friend")[0] == 0
    code, err = imported(capsys, str(chat), "--me", "Jordan Lee", "--name", "friend", "--force")
    assert code == 2
    assert "another person's persona" in err and "--name" in err
    maya = load_persona(Path("personas/friend.jsonl"))
    assert "buenos días" in {m.text for m in maya.messages if m.side == "response"}
    # The same person imported again may replace their own file.
    assert imported(capsys, str(chat), "--me", "Maya Chen", "--name", "friend", "--force")[0] == 0


def test_part_of_a_name_is_refused_listing_who_it_could_be(
    chat: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = imported(capsys, str(chat), "--me", "Jordan")
    assert code == 2
    assert "'Jordan Lee'" in err and "--me" in err and "chat.txt" in err
    assert not list(Path("personas").glob("*.jsonl"))  # nothing written
    # The exact name, in any case or spacing, is taken.
    assert imported(capsys, str(chat), "--me", "  jordan   LEE ")[0] == 0


def test_another_persons_file_is_refused_before_the_export_is_parsed(
    chat: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert imported(capsys, str(chat), "--me", "Maya Chen", "--name", "friend")[0] == 0
    before = Path("personas/friend.jsonl").read_bytes()
    # A broken export (not even text) gets the refusal, not a parse error: it is not read.
    broken = chat.with_name("broken.txt")
    broken.write_bytes(b"\xff\xfe\x00garbage" * 1000)
    code, err = imported(capsys, str(broken), "--me", "Jordan Lee", "--name", "friend", "--force")
    assert code == 2
    assert "another person's persona" in err and "friend.jsonl" in err and "--name" in err
    assert "UTF-8" not in err
    # Nor is a good export parsed only to be refused.
    from sdtt.personas.importers.whatsapp import WhatsAppImporter

    def never(*args: object) -> object:
        raise AssertionError("the export was parsed")

    monkeypatch.setattr(WhatsAppImporter, "load", never)
    code, err = imported(capsys, str(chat), "--me", "Jordan Lee", "--name", "friend", "--force")
    assert code == 2 and "another person's persona" in err
    code, err = imported(capsys, str(chat), "--me", "Jordan Lee", "--name", "friend")
    assert code == 2 and "would overwrite" in err and "--force" in err
    assert Path("personas/friend.jsonl").read_bytes() == before
