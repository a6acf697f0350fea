from __future__ import annotations

from prove_common.suggest import did_you_mean


def test_did_you_mean_names_the_closest_choice_or_nothing() -> None:
    assert did_you_mean("replicats", ["replicates", "seed", "conditions"]) == ' (did you mean "replicates"?)'
    assert did_you_mean("zzz", ["replicates", "seed"]) == ""
    assert did_you_mean("x", []) == ""
