from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from sdtt.analysis.plots import pass_rate_plot, x_limits
from sdtt.analysis.report import build_report, write_report
from sdtt.analysis.table import judgement_table
from sdtt.analysis.tells import TellRow
from tests.analysis.helpers import judgement

HERE = Path(__file__).parent
JS = HERE.parent / "questionnaires" / "js"
PLANTED = "<script>window.__pwned=1</script>"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _records() -> list[Any]:
    out = []
    for index, (x, correct) in enumerate([(3, False), (3, True), (10, True), (10, True)]):
        for model in ("m1", f"m2 {PLANTED}"):
            out.append(
                judgement(
                    f"p{index}{model[:2]}",
                    f"j{index}",
                    correct,
                    x=x,
                    model=model,
                    demographics={"age": PLANTED},
                    topic="smells",
                )
            )
    return out


@pytest.fixture(scope="module")
def report_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("report")
    tells = {"m, burst, turn 3 (N=0, X=3)": [TellRow("words", "words per message", 7.0, 4.5)]}
    report = build_report(judgement_table(_records()), out, tells=tells, reps=100)
    return write_report(report, out)


def test_report_writes_html_markdown_and_real_pngs(report_files: list[Path]) -> None:
    names = [p.name for p in report_files]
    assert names[:2] == ["report.html", "report.md"]
    assert {"pass-rate.png", "confusion.png", "tells.png"} <= set(names)
    for png in report_files[2:]:
        assert png.read_bytes()[:8] == PNG_MAGIC
    markdown = report_files[1].read_text()
    assert "](pass-rate.png)" in markdown and "| 3 |" in markdown
    assert PLANTED not in markdown and PLANTED not in report_files[0].read_text()


def _chromium() -> tuple[str, str]:
    node = shutil.which("node")
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if (
        node is None
        or not Path(chromium).exists()
        or not (JS / "node_modules/playwright-core").exists()
    ):
        pytest.fail(
            "report browser test needs node, Chromium and playwright-core. Run: "
            "bash tests/questionnaires/js/install.sh",
            pytrace=False,
        )
    return node, chromium


def test_report_opens_in_headless_chromium_with_decoded_figures(
    report_files: list[Path],
) -> None:
    node, chromium = _chromium()
    done = subprocess.run(
        [node, str(HERE / "report_browser.cjs"), str(report_files[0])],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "CHROMIUM": chromium},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert seen["errors"] == [] and seen["blocked"] == []
    assert seen["pwned"] is None
    assert len(seen["images"]) == 3
    assert all(image["width"] > 0 and image["height"] > 0 for image in seen["images"])
    assert {image["alt"] for image in seen["images"]} == {
        "Pass rate against turns",
        "Verdicts by truth",
        "Tells",
    }
    assert PLANTED in seen["text"]  # shown as text, not run
    assert "Pass rate against turns" in seen["text"]


@pytest.mark.parametrize("log", [True, False])
def test_a_single_condition_is_drawn_inside_the_frame(log: bool) -> None:
    # One point on a log axis used to land on the frame of the figure, out of sight.
    low, high = x_limits([9.0], log=log)
    assert low < 9.0 < high
    low, high = x_limits([3.0, 10.0, 110.0], log=log)
    assert low < 3.0 and high > 110.0


@pytest.mark.parametrize("log", [True, False])
@pytest.mark.parametrize("turns", [[10], [3, 10, 110]])
def test_the_pass_rate_figure_draws_one_or_many_turn_counts_without_a_warning(
    tmp_path: Path, log: bool, turns: list[int]
) -> None:
    # The suite turns warnings into errors: one x value once made matplotlib warn about
    # identical axis limits, which failed the suite on a machine with a newer matplotlib.
    rows = pd.DataFrame(
        {
            "turns": turns,
            "pass_rate": [0.4] * len(turns),
            "boot_low": [float("nan")] * len(turns),
            "boot_high": [float("nan")] * len(turns),
        }
    )
    curves = {"model": rows, "other": rows}
    path = pass_rate_plot(curves, tmp_path / "f.png", column="turns", log=log)
    assert path.read_bytes()[:4] == b"\x89PNG"
