"""The demo's last stage: the LLM judge again, in reveal mode, and a report with beliefs.

Kept apart from the other demo stages so it can move with them: it needs only the study
folder the questionnaire stage wrote and the judgements of the judge stage.
"""

from __future__ import annotations

import trio

from sdtt.analysis.tells import study_tells
from sdtt.beliefs.traces import BeliefTrace, judgements_from_traces, write_traces
from sdtt.commands.demo_stages import DemoRun, write_demo_report
from sdtt.judges.reveal import run_reveal_judge
from sdtt.models.model import get_model
from sdtt.models.registry import provider_of
from sdtt.redact import shown
from sdtt.tasks.judgements import read_judgements
from sdtt.tasks.questionnaire import KEY_FILE, load_key, load_questionnaire

TRACES_FILE = "traces.jsonl"


def stage_belief_traces(demo: DemoRun, *, number: int = 8, reps: int = 200) -> list[BeliefTrace]:
    """The judge model reveals each pair turn by turn, giving a belief after every turn;
    the traces are written beside the judgements and the report is rewritten with the
    belief trace and calibration figures."""
    console = demo.console
    console.rule(f"{number}. Belief traces: the LLM judge again, turn by turn")
    folder = demo.out / f"{demo.stem}-questionnaire"
    if not (folder / KEY_FILE).exists():
        console.print("[yellow]no questionnaire was built, so there is nothing to reveal[/]")
        return []
    questionnaire = load_questionnaire(folder)
    key = load_key(folder, questionnaire)
    # Where the provider gives no token log-probabilities, only stated beliefs are asked.
    provider = provider_of(demo.model_name)
    logprobs = provider is not None and provider.logprobs

    async def judge() -> list[BeliefTrace]:
        async with get_model(
            demo.model_name, base_url=demo.base_url, api_key_env=demo.api_key_env
        ) as model:
            return await run_reveal_judge(model, questionnaire, key, logprobs=logprobs)

    with console.status(f"{shown(demo.model_name)} is judging turn by turn..."):
        traces = trio.run(judge)
    path = folder / TRACES_FILE
    write_traces(path, traces)
    demo.files.append(path)
    for trace in traces:
        beliefs = " -> ".join("?" if p.belief is None else f"{p.belief:g}" for p in trace.points)
        truth = "human" if trace.target_human else "the AI"
        source = trace.points[0].source if trace.points else "stated"
        console.print(
            f"  pair {trace.item_id} ({trace.pair_kind}, {source}): chat 1 human? "
            f"{beliefs}  [dim](chat 1's User B is {truth})[/]"
        )
    judgements_path = folder / "judgements.jsonl"
    judgements = read_judgements(judgements_path) if judgements_path.exists() else []
    judgements += judgements_from_traces(traces)
    if not judgements:
        return traces
    with console.status("drawing figures..."):
        tells = study_tells(questionnaire, key)
        files = write_demo_report(demo, judgements, tells, reps, traces)
    console.print(f"the report now shows the belief traces: open {shown(str(files[0]))}")
    demo.files.extend(path for path in files if path not in demo.files)
    return traces
