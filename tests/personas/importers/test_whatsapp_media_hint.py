"""The quick test before the media pattern never skips a line the pattern reads as media."""

from __future__ import annotations

import itertools

import pytest

from sdtt.personas.importers.whatsapp import _MEDIA, _may_be_media

from .helpers import FIXTURES

PLACEHOLDERS = [
    "<Media omitted>", "<Medien ausgeschlossen>", "<Multimedia omitido>", "<médias omis>",
    "<media weggelaten>", "<Mídia oculta>", "<Multimedia omessi>", "<media omessi>",
    "image omitted", "IMAGE OMITTED", "2 photos omitted", "Voice message omitted",
    "GIF omitted", "video note omitted", "Contact card omitted", "document omitted",
    "Bild weggelassen", "DOKUMENT   WEGGELASSEN", "imagen omitida", "Documento omitido",
    "<attached: 00000012-PHOTO-2024-04-13-09-06-02.jpg>", "report.pdf (file attached)",
    "null", "NULL", "Null", "Ünïcode.pdf (file attached)", "día 2 photos omitted",
]  # fmt: skip


@pytest.mark.parametrize("text", PLACEHOLDERS)
def test_every_media_placeholder_passes_the_quick_test(text: str) -> None:
    assert _MEDIA.fullmatch(text), text  # the pattern's own reading
    assert _may_be_media(text)


def test_no_line_of_the_fixtures_read_as_media_is_skipped() -> None:
    lines = itertools.chain.from_iterable(
        path.read_text(encoding="utf-8").splitlines()
        for path in sorted((FIXTURES / "whatsapp").glob("*.txt"))
    )
    pieces = {piece.strip() for line in lines for piece in line.split(": ", 1)}
    for piece in pieces:
        if _MEDIA.fullmatch(piece):
            assert _may_be_media(piece), piece
    assert not _may_be_media("see you at the station at ten")
