"""Seeds: the contract every paired comparison builds on."""

from __future__ import annotations

import pytest

from poisson_prove.design.conditions import condition_key
from poisson_prove.design.seeding import SEED_BOUND, check_salt, episode_seed


def test_seed_golden_vector() -> None:
    # Pinned forever: changing these breaks pairing with every stored run.
    salt = "00112233445566778899aabbccddeeff"
    cell = condition_key({"task_id": "refund", "tool_fail_rate": 0.55})
    assert cell == '{"task_id":"refund","tool_fail_rate":0.55}'
    assert [episode_seed(salt, cell, r) for r in range(3)] == GOLDEN


GOLDEN = [21560555, 1848907964, 660501605]


def test_seeds_are_in_range_and_depend_on_every_part() -> None:
    salt = check_salt("ABCDEF0123456789")
    cell = condition_key({"x": 1})
    seeds = {episode_seed(salt, cell, r) for r in range(2000)}
    assert len(seeds) == 2000
    assert all(0 <= s < SEED_BOUND for s in seeds)
    assert episode_seed(salt, cell, 0) != episode_seed("abcdef0123456780", cell, 0)
    assert episode_seed(salt, cell, 0) != episode_seed(salt, condition_key({"x": 2}), 0)


@pytest.mark.parametrize("bad", ["xyz", "abc", "", "0" * 66])
def test_bad_salts_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        check_salt(bad)
