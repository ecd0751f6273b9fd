"""Every survey tool sdtt writes tasks for, by ``--format`` name: :data:`TOOLS`.

Each tool lives in one module of :mod:`sdtt.surveys` (its exports, its answer readers,
its structural check and its :class:`~sdtt.surveys.tool.SurveyTool` records, ``ENTRIES``).
``sdtt questionnaire export``, ``sdtt responses import`` and ``sdtt align export/import``
take their ``--format`` choices and help text from here; reveal mode, the belief-trace
importer, the rating tasks and the single-item tasks (``sdtt single``) ask it what a tool
can do. Adding a tool is its module and its name in :data:`MODULES` (ARCHITECTURE.md,
"Where to add").

==============  =====================================================================
``surveyjs``    SurveyJS survey JSON; reveal mode, rating and single-item tasks; its results
``qualtrics``   a Qualtrics ``.qsf`` that hands out a judge design itself; response CSV
``jspsych``     a jsPsych page (design, reveal mode, rating and single-item tasks); its CSV
``limesurvey``  a LimeSurvey tab-separated import file; response CSV
``html``        a printable page (no answers come back)
``markdown``    printable Markdown (no answers come back)
``csv``         a long CSV for other tools (rating tasks too); judge_id,question,answer
==============  =====================================================================
"""

from __future__ import annotations

from types import ModuleType

from sdtt.surveys import jspsych, limesurvey, long_csv, printable, qualtrics, surveyjs
from sdtt.surveys.tool import Reader, RevealExport, RevealNotSupported, SurveyTool

MODULES: tuple[ModuleType, ...] = (surveyjs, qualtrics, jspsych, limesurvey, printable, long_csv)
"""Each tool's module, in the order help texts list the tools."""

TOOLS: dict[str, SurveyTool] = {tool.name: tool for module in MODULES for tool in module.ENTRIES}
"""Every survey tool by name, in the order help texts list them."""


def either(names: list[str], last: str = "or") -> str:
    """Tool names for a help text: ``surveyjs, jspsych or csv``."""
    if len(names) < 2:
        return "".join(names)
    return f"{', '.join(names[:-1])} {last} {names[-1]}"


def readable_tools() -> list[SurveyTool]:
    """The tools whose answer files can be imported."""
    return [tool for tool in TOOLS.values() if tool.read is not None]


def reveal_tools() -> list[str]:
    """The names of the tools that can do reveal mode."""
    return [tool.name for tool in TOOLS.values() if tool.reveal is not None]


def rating_tools() -> list[str]:
    """The names of the tools that can field a rating task."""
    return [tool.name for tool in TOOLS.values() if tool.rating is not None]


def single_tools() -> list[str]:
    """The names of the tools that can field a single-item task."""
    return [tool.name for tool in TOOLS.values() if tool.single is not None]


def reveal_export(format_name: str) -> RevealExport:
    """The reveal-mode export of a tool; :class:`RevealNotSupported` (saying which tools
    can) when it has none."""
    tool = TOOLS.get(format_name)
    if tool is None or tool.reveal is None:
        raise RevealNotSupported(
            f"reveal mode is not supported by this tool ({format_name}).",
            hint="Export reveal mode to " + " or ".join(reveal_tools()) + ".",
        )
    return tool.reveal


def reader(format_name: str) -> Reader:
    """How answer files of a tool are read (KeyError for a tool without a reader, which
    the commands' ``--format`` choices rule out)."""
    read = TOOLS[format_name].read
    if read is None:
        raise KeyError(format_name)
    return read
