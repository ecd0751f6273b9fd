"""Copy jsPsych's browser builds from node_modules into sdtt's vendor folder.

The jsPsych exporter inlines these files so its page works offline and on any host.
Run after changing the jsPsych versions in package.json (and ``npm ci``):

    python tests/questionnaires/js/vendor_jspsych.py

``tests/questionnaires/test_vendor.py`` fails while the copies differ from node_modules.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
MODULES = HERE / "node_modules"
VENDOR = ROOT / "sdtt" / "surveys" / "vendor"

BROWSER_BUILD = "dist/index.browser.min.js"
SCRIPTS = {
    "jspsych.min.js": f"jspsych/{BROWSER_BUILD}",
    "plugin-html-button-response.min.js": f"@jspsych/plugin-html-button-response/{BROWSER_BUILD}",
    "plugin-survey-multi-choice.min.js": f"@jspsych/plugin-survey-multi-choice/{BROWSER_BUILD}",
    "plugin-survey-text.min.js": f"@jspsych/plugin-survey-text/{BROWSER_BUILD}",
    "plugin-html-slider-response.min.js": f"@jspsych/plugin-html-slider-response/{BROWSER_BUILD}",
}
PACKAGES = (
    "jspsych",
    "@jspsych/plugin-html-button-response",
    "@jspsych/plugin-survey-multi-choice",
    "@jspsych/plugin-survey-text",
    "@jspsych/plugin-html-slider-response",
)


def strip_css(css: str) -> str:
    """jsPsych's stylesheet without its embedded web fonts (400 kB) and comments."""
    css = re.sub(r"@font-face\s*\{[^}]*\}", "", css)
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    return re.sub(r"\n\s*\n+", "\n", css).strip() + "\n"


def strip_source_map(script: str) -> str:
    """Drop the sourceMappingURL comment (the map files are not shipped)."""
    return re.sub(r"\n?//# sourceMappingURL=\S+\s*$", "", script).rstrip() + "\n"


def expected_files() -> dict[str, str]:
    """What the vendor folder should hold, computed from node_modules."""
    files = {
        name: strip_source_map((MODULES / source).read_text(encoding="utf-8"))
        for name, source in SCRIPTS.items()
    }
    files["jspsych.css"] = strip_css(
        (MODULES / "jspsych/css/jspsych.css").read_text(encoding="utf-8")
    )
    versions = {
        package: json.loads((MODULES / package / "package.json").read_text())["version"]
        for package in PACKAGES
    }
    files["versions.json"] = json.dumps(versions, indent=2) + "\n"
    return files


def main() -> int:
    """Write the vendor files."""
    if not MODULES.is_dir():
        print(
            "node_modules is missing: run tests/questionnaires/js/install.sh first", file=sys.stderr
        )
        return 1
    VENDOR.mkdir(parents=True, exist_ok=True)
    for name, text in expected_files().items():
        (VENDOR / name).write_text(text, encoding="utf-8")
        print(f"wrote {VENDOR / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
