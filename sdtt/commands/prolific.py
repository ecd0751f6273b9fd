"""``sdtt prolific``: create, publish and watch a serve study's Prolific study."""

from __future__ import annotations

import argparse
from collections import Counter
from decimal import Decimal

from rich.markup import escape

from sdtt.commands.console import CliConsole
from sdtt.errors import BadRequestError, ConfigError
from sdtt.redact import shown
from sdtt.serve import (
    SUBMISSION_STATES,
    ProlificClient,
    Record,
    Study,
    bonus_amounts,
    codes_by_outcome,
    decide,
    draft_body,
    pay_bonus,
    prolific_section,
    read_study,
    release_bonus,
    review,
    send_decision,
    set_up_bonuses,
    token,
)


def _client(study: Study) -> ProlificClient:
    section = prolific_section(study)
    return ProlificClient(section, token(section))


def run_create(args: argparse.Namespace) -> int:
    """Create the draft study the spec's ``[prolific]`` table describes (once)."""
    study = read_study(args.spec)
    record = Record.of(study)
    if record.study_id:
        raise ConfigError(
            f"this spec's Prolific study exists already ({record.study_id}, recorded in "
            f"{shown(str(record.path))}): nothing created. Use sdtt prolific status or publish."
        )
    body = draft_body(study, args.url)
    client = _client(study)
    created = client.create_study(body)
    record.study_id = created["id"]
    record.save()
    console = CliConsole(highlight=False, soft_wrap=True)
    console.print(
        f"Created draft study {escape(created['id'])} on Prolific "
        f"({escape(str(created.get('status', 'UNPUBLISHED')))}): "
        f"{body['total_available_places']} places, reward {body['reward']} (minor units), "
        f"about {body['estimated_completion_time']} min"
    )
    console.print(f"  link: {escape(body['external_study_url'])}")
    for code, outcomes in codes_by_outcome(study).items():
        console.print(f"  completion code {escape(code)}: {', '.join(outcomes)}")
    if study.spec.study.platform_study_id != created["id"]:
        console.print(
            f'  next: set platform_study_id = "{escape(created["id"])}" under \\[study] (links '
            "of other studies are then refused), restart sdtt serve, then sdtt prolific publish"
        )
    return 0


def run_publish(args: argparse.Namespace) -> int:
    """Publish the spec's draft study; a study not in draft is left as it is."""
    study = read_study(args.spec)
    study_id = Record.of(study).require_study()
    client = _client(study)
    state = str(client.study(study_id).get("status"))
    if state != "UNPUBLISHED":
        raise ConfigError(
            f"Prolific study {study_id} is {state}, not a draft (UNPUBLISHED): nothing "
            "published. After publishing only its places can change (on Prolific)."
        )
    if study.spec.study.platform_study_id not in (None, study_id):
        raise ConfigError(
            f"[study] platform_study_id is {study.spec.study.platform_study_id!r}, not "
            f"{study_id!r}: the server would refuse every participant. Fix it, restart sdtt "
            "serve, then publish."
        )
    try:
        published = client.transition_study(study_id, "PUBLISH")
    except BadRequestError:
        # A retry after a failed answer finds the study published by the first attempt.
        published = client.study(study_id)
        if published.get("status") == "UNPUBLISHED":
            raise
    CliConsole(highlight=False, soft_wrap=True).print(
        f"Published Prolific study {escape(study_id)}: now "
        f"{escape(str(published.get('status', '?')))}"
    )
    return 0


def run_status(args: argparse.Namespace) -> int:
    """Places and submissions on Prolific, beside the server's participants."""
    from sdtt.serve import open_store

    study = read_study(args.spec)
    study_id = Record.of(study).require_study()
    client = _client(study)
    info = client.study(study_id)
    counts = Counter(str(s.get("status")) for s in client.submissions(study_id))
    console = CliConsole(highlight=False, soft_wrap=True)
    console.print(
        f"Prolific study {escape(study_id)}: {escape(str(info.get('status')))}, "
        f"{info.get('places_taken', 0)} of {info.get('total_available_places', '?')} places taken"
    )
    states = list(SUBMISSION_STATES) + sorted(set(counts) - set(SUBMISSION_STATES))
    console.print("  submissions: " + ", ".join(f"{s.lower()} {counts[s]}" for s in states))
    if not study.spec.storage.url and not study.store_path.exists():
        console.print("  server: no participants yet (no store)")
        return 0
    store = open_store(study)
    try:
        people = [p for p in store.participants()]
        rooms = store.rooms()
    finally:
        store.close()
    phases = Counter(p.state for p in people)
    outcomes = Counter(p.outcome for p in people if p.state == "done" and p.outcome)
    console.print(
        f"  server: {len(people)} participant(s), {len(rooms)} room(s); "
        + ", ".join(f"{escape(str(k))} {v}" for k, v in sorted(phases.items()))
    )
    if outcomes:
        console.print(
            "  done: " + ", ".join(f"{escape(k)} {v}" for k, v in sorted(outcomes.items()))
        )
    return 0


def run_bonus(args: argparse.Namespace) -> int:
    """Bonuses from ``points.csv``: set up and show the total; with ``--pay``, pay once."""
    study = read_study(args.spec)
    record = Record.of(study)
    record.require_study()
    console = CliConsole(highlight=False, soft_wrap=True)
    amounts = bonus_amounts(study, args.points)
    client = _client(study)
    state = str(client.study(record.require_study()).get("status"))
    if state in ("UNPUBLISHED", "PUBLISHING", "SCHEDULED"):
        raise ConfigError(
            f"Prolific study {record.study_id} is {state}: nobody has taken part yet, "
            "no bonus set up or paid."
        )
    if args.not_paid:
        entry = release_bonus(record, args.not_paid)
        console.print(f"Bulk bonus {escape(entry['id'])} is set up again (not paid).")
    plan = set_up_bonuses(record, client, amounts)
    for entry in plan.doubtful:
        console.print(
            f"Bulk bonus {escape(entry['id'])} ({len(entry['amounts'])} participant(s)) was "
            "being paid when a run stopped: sdtt never pays it again. Check those bonuses "
            "on Prolific; if they were not paid, run again with --not-paid "
            f"{escape(entry['id'])}."
        )
    if not plan.unpaid:
        console.print("No bonus left to pay.")
        return 1 if plan.doubtful else 0
    for entry in plan.unpaid:
        total = sum(Decimal(v) for v in entry["amounts"].values())
        with_fees = entry.get("total_amount")
        fees = f", {with_fees / 100:.2f} with Prolific's fees" if with_fees is not None else ""
        console.print(
            f"Bulk bonus {escape(entry['id'])}: {len(entry['amounts'])} participant(s), "
            f"{total:.2f} in bonuses{fees}"
        )
    if not args.pay:
        console.print("Not paid yet: check the total, then run the same command with --pay.")
        return 0
    for entry in plan.unpaid:
        pay_bonus(record, client, entry)
        console.print(f"Paid bulk bonus {escape(entry['id'])} (Prolific pays it within minutes).")
    return 1 if plan.doubtful else 0


def run_review(args: argparse.Namespace) -> int:
    """Submissions awaiting review against the server's records, each with what the
    spec's ``[prolific.review]`` rules do with it; ``--approve`` approves those that
    agree, ``--apply`` also sends the rejections and return requests the rules state."""
    study = read_study(args.spec)
    record = Record.of(study)
    study_id = record.require_study()
    client = _client(study)
    state = str(client.study(study_id).get("status"))
    if state in ("UNPUBLISHED", "PUBLISHING", "SCHEDULED"):
        raise ConfigError(
            f"Prolific study {study_id} is {state}: nobody has submitted yet, nothing "
            "reviewed. Publish it first (sdtt prolific publish)."
        )
    decisions = decide(study, review(study, client.submissions(study_id)), record)
    console = CliConsole(highlight=False, soft_wrap=True)
    acting = args.apply or args.approve
    approve = [d for d in decisions if d.action == "approve"]
    if acting and approve:
        client.approve([d.verdict.submission for d in approve])
    counts: Counter[str] = Counter()
    for decision in decisions:
        verdict, rule = decision.verdict, decision.rule
        why = f": {escape(verdict.reason)}" if verdict.reason else ""
        who = escape(verdict.participant)
        earlier = decision.earlier
        if decision.action == "approve":
            counts["approve"] += 1
            word = "approved" if acting else "approve"
            by = f" (rule for {escape(verdict.outcome or '')})" if rule else ""
            console.print(f"  {who}: {word}{by}")
        elif decision.action == "manual":
            counts["manual"] += 1
            console.print(f"  {who}: left for you to review{why}")
        elif earlier is not None and not (
            earlier["action"] == "reject" and earlier["state"] == "sending"
        ):
            # Sent before (or a return request a stopped run was sending): never again.
            counts["earlier"] += 1
            if earlier["state"] == "done":
                said = "rejected" if earlier["action"] == "reject" else "asked to return"
                console.print(f"  {who}: {said} by an earlier run (not sent again)")
            else:
                console.print(
                    f"  {who}: a stopped run was asking them to return their submission: "
                    "sdtt never asks again; check it on Prolific"
                )
        else:
            # A new decision, or a rejection a stopped run was sending: Prolific takes
            # a rejection once only, so sending it again cannot reject twice.
            assert rule is not None
            counts[decision.action] += 1
            if decision.action == "reject":
                what = f"reject ({rule.category})"
                done = f"rejected ({rule.category})"
            else:
                what = "ask to return"
                done = "asked to return"
            if args.apply:
                send_decision(record, client, decision)
            console.print(f"  {who}: {done if args.apply else what}{why}")
    summary = (
        f"{len(decisions)} submission(s) awaiting review: {counts['approve']} "
        + ("approved" if acting else "to approve")
        + f", {counts['reject']} "
        + ("rejected" if args.apply else "to reject")
        + f", {counts['return']} "
        + ("asked to return" if args.apply else "to ask to return")
        + f", {counts['manual']} left for you (review them on Prolific)"
    )
    if counts["earlier"]:
        summary += f", {counts['earlier']} acted on by an earlier run"
    console.print(summary)
    if not args.apply and (counts["reject"] or counts["return"]):
        console.print(
            "Nothing rejected or asked yet: check the list, then run it again with --apply."
        )
    elif not acting and counts["approve"]:
        console.print("Nothing approved yet: run it again with --approve (or --apply).")
    return 0


def run_places(args: argparse.Namespace) -> int:
    """Change the study's places on Prolific (the one setting a published study can change)."""
    study = read_study(args.spec)
    study_id = Record.of(study).require_study()
    if args.places < 1:
        raise ConfigError(f"places must be 1 or more, not {args.places}.")
    client = _client(study)
    info = client.study(study_id)
    taken = int(info.get("places_taken") or 0)
    total = info.get("total_available_places")
    state = str(info.get("status"))
    if state != "UNPUBLISHED" and isinstance(total, int) and args.places < total:
        raise ConfigError(
            f"Prolific study {study_id} is {state}: its places can only go up from "
            f"{total}, not down to {args.places}. Nothing changed."
        )
    if args.places < taken:
        raise ConfigError(
            f"Prolific study {study_id} has {taken} places taken: it cannot have "
            f"{args.places}. Nothing changed."
        )
    if args.places == info.get("total_available_places"):
        CliConsole(highlight=False).print(
            f"Prolific study {escape(study_id)} has {args.places} places already."
        )
        return 0
    changed = client.set_places(study_id, args.places)
    console = CliConsole(highlight=False, soft_wrap=True)
    console.print(
        f"Prolific study {escape(study_id)}: {changed.get('total_available_places')} places "
        f"({taken} taken)"
    )
    prolific = study.spec.prolific
    if prolific is not None and prolific.places != args.places:
        console.print(
            f"  the spec says places = {prolific.places}: change it to {args.places} to match"
        )
    return 0
