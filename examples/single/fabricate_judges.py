"""Made-up human judges for trying ``sdtt single`` offline: SurveyJS results, one judge
per form, as the SurveyJS host page saves them.

Each judge peeks at the key (real judges cannot) and is right about a speaker with
probability ``--skill``, gets the topic check right with probability ``--attention`` and
calls a catch item's obvious machine a machine with probability ``--catch``.

    python examples/single/fabricate_judges.py runs/single/study -o runs/single/results.json
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from sdtt.single.build import load_key, load_task


def fabricate(
    study: Path, *, skill: float, attention: float, catch: float, seed: int
) -> list[dict[str, object]]:
    """One SurveyJS result object per form."""
    task, key = load_task(study), load_key(study)
    rng = random.Random(seed)
    results = []
    for number, form in enumerate(task.forms or [[item.id for item in task.items]], start=1):
        result: dict[str, object] = {"PROLIFIC_PID": f"made-up-{number}"}
        for item_id in form:
            item, entry = task.item(item_id), key.entry(item_id)
            right = catch if entry.catch else skill
            for index, judged in enumerate(item.judged, start=1):
                truth = entry.truth.get(judged.key, rng.choice(["human", "machine"]))
                wrong = "machine" if truth == "human" else "human"
                result[item.verdict_name(index)] = truth if rng.random() < right else wrong
                if task.confidence:
                    result[item.confidence_name(index)] = rng.randint(1, 5)
            if item.topic is not None and item.topic.choices:
                codes = [choice.value for choice in item.topic.choices]
                others = [code for code in codes if code != entry.topic] or codes
                result[item.topic_name] = (
                    entry.topic if rng.random() < attention else rng.choice(others)
                )
        results.append(result)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", type=Path, help="study folder (sdtt single build)")
    parser.add_argument("--out", "-o", type=Path, required=True, help="file of SurveyJS results")
    parser.add_argument("--skill", type=float, default=0.6, help="share of speakers right")
    parser.add_argument("--attention", type=float, default=0.95, help="share of topics right")
    parser.add_argument("--catch", type=float, default=0.9, help="share of catch items caught")
    parser.add_argument("--seed", type=int, default=0, help="seed of the made-up answers")
    args = parser.parse_args()
    results = fabricate(
        args.study, skill=args.skill, attention=args.attention, catch=args.catch, seed=args.seed
    )
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"{len(results)} made-up judge(s) -> {args.out}")


if __name__ == "__main__":
    main()
