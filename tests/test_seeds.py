"""The seed rule: every random stream of sdtt is made in ``sdtt/seeds.py``."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from sdtt.seeds import derive_seed, seeded_generator, seeded_rng

PACKAGE = Path(__file__).resolve().parents[1] / "sdtt"
HOME = PACKAGE / "seeds.py"
MAKES_A_STREAM = re.compile(r"\brandom\.Random\(|\b(?:np|numpy)\.random\.default_rng\(")


def test_no_module_but_the_seed_rule_makes_a_random_stream() -> None:
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != HOME
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if MAKES_A_STREAM.search(line)
    ]
    assert not found, "make the stream with seeded_rng/seeded_generator:\n" + "\n".join(found)


def test_streams_of_one_seed_differ_by_purpose_and_repeat_by_seed() -> None:
    draws = {purpose: seeded_rng(7, purpose).random() for purpose in ("a", "b", "c")}
    assert len(set(draws.values())) == 3
    assert seeded_rng(7, "a").random() == draws["a"]
    assert seeded_generator(7).random() == np.random.default_rng(7).random()
    assert seeded_generator(7, "x").random() == np.random.default_rng(derive_seed(7, "x")).random()
    assert seeded_generator(7, "x").random() != seeded_generator(7, "y").random()
