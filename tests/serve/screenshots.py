"""Write a screenshot of every page of every mode of ``sdtt serve`` at phone (375x667),
laptop (1280x800) and desktop (1920x1080) size, to look at before a release:

    python -m tests.serve.screenshots OUTDIR

Files are named GAME-WHO-PAGE-WIDTHxHEIGHT.png (e.g. three-interrogator-chat-375x667.png).
Needs node, Chromium and playwright-core (bash tests/questionnaires/js/install.sh)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tests.serve.pages import walk_pages


def main(argv: list[str]) -> int:
    """Write the screenshots into the folder named in ``argv``."""
    if len(argv) != 1:
        print("usage: python -m tests.serve.screenshots OUTDIR", file=sys.stderr)
        return 2
    out = Path(argv[0]).resolve()
    with tempfile.TemporaryDirectory() as studies:
        log = walk_pages(Path(studies), shots=out)
    for error in log["errors"]:
        print(f"page error: {error}", file=sys.stderr)
    print(f"{len(list(out.glob('*.png')))} screenshots in {out}")
    return 1 if log["errors"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
