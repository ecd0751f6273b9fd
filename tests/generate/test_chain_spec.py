"""Plans: a grid or a plan file becomes the list of chains."""

from __future__ import annotations

import pytest

from sdtt.errors import InputError
from sdtt.generate.chain import SettingsError
from sdtt.generate.chain_spec import PlanSettings, grid_specs, read_plan

PLAN = """
topics = "my-topics.txt"
turns_per_topic = 5

[grid]
personas = ["alice", "bob"]
models = ["openai/gpt-4o-mini", "local/gemma-3-270m"]
modes = ["burst", "pingpong"]
seeds = [1, 2]
turns = [10]

[settings]
temperature = 0.5

[[chain]]
persona = "carol"
model = "anthropic/claude-sonnet-4-5"
turns = 3
topics = ["only topic"]
"""


def test_a_plan_file_expands_its_grid_and_adds_explicit_chains(tmp_path):
    (tmp_path / "my-topics.txt").write_text("# mine\nfood\nmusic\nsport\n")
    plan_path = tmp_path / "plan.toml"
    plan_path.write_text(PLAN)
    specs = read_plan(plan_path).specs(base=tmp_path)
    assert len(specs) == 2 * 2 * 2 * 2 + 1
    assert len({spec.chain_id for spec in specs}) == len(specs)
    first = specs[0]
    assert [(t.topic, t.turns) for t in first.topics] == [("food", 5), ("music", 5)]
    assert first.settings.temperature == 0.5
    styles = {spec.model: spec.settings.style for spec in specs}
    assert styles["local/gemma-3-270m"] == "lines"
    assert styles["openai/gpt-4o-mini"] == "whole"
    carol = specs[-1]
    assert [(t.topic, t.turns) for t in carol.topics] == [("only topic", 3)]


def test_a_json_plan_works_too(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text(
        '{"topics": ["a", "b"], "grid": {"personas": ["p"], "models": ["mock/x"], "turns": [20]}}'
    )
    specs = read_plan(path).specs()
    assert len(specs) == 1 and specs[0].total_turns == 20


def test_a_misspelt_plan_setting_is_named_with_the_file(tmp_path):
    path = tmp_path / "plan.toml"
    path.write_text('topics = ["a"]\n[grid]\npersonas = ["p"]\nmodel = ["mock/x"]\n')
    with pytest.raises(InputError) as raised:
        read_plan(path)
    message = str(raised.value)
    assert "plan.toml" in message and "grid" in message


def test_broken_toml_is_reported_not_raised_as_a_traceback(tmp_path):
    path = tmp_path / "plan.toml"
    path.write_text("topics = [\n")
    with pytest.raises(InputError, match="not valid TOML"):
        read_plan(path)


def test_a_grid_needing_more_topics_than_given_is_refused():
    with pytest.raises(SettingsError, match="need 3 topics"):
        grid_specs(
            personas=["p"],
            models=["mock/x"],
            modes=["burst"],
            seeds=[0],
            turns=[30],
            topics=["a", "b"],
            turns_per_topic=10,
            settings=PlanSettings(),
        )


def test_the_chitchat_topics_come_from_the_corpus_outside_the_repository(tmp_path, monkeypatch):
    from sdtt.generate.chain_spec import load_topic_list

    monkeypatch.chdir(tmp_path)
    topics = load_topic_list("chitchat")
    assert "Mozart or Beethoven?" in topics and len(topics) > 20
    with pytest.raises(InputError, match="no topic file 'other'"):
        load_topic_list("other")
