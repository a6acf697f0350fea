"""Every class of bad input to `sweep`: exit 1 (or 2 for the command line), one `error:` line
naming the file, key and line, a `next:` line where a fix exists, stdout empty, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import assert_clean_error
from tests.poisson_prove.helpers import SEEDED_TARGET, seeded_spec, small_spec, tree, write


def _bad(prove, workdir, *args: str, code: int = 1):
    before = tree(workdir)
    result = prove("sweep", *args, "--yes")
    assert result.stdout == "", result.stdout
    assert tree(workdir) == before  # nothing written, not even the store folder
    return result


def test_missing_spec_points_at_init(prove, workdir) -> None:
    result = _bad(prove, workdir)
    assert_clean_error(result, 1, "no sweep spec at prove.toml", "next: poisson-prove init --example")


def test_unknown_top_level_key_with_did_you_mean_and_line(prove, workdir) -> None:
    path = seeded_spec(workdir)
    path.write_text(path.read_text().replace("replicates = 40", "replicates = 40\nreplicate = 3"))
    result = _bad(prove, workdir)
    assert_clean_error(result, 1, "prove.toml:5:", "unknown key 'replicate'", 'did you mean "replicates"')
    assert "next: " in result.stderr


def test_unknown_axis_key(prove, workdir) -> None:
    path = seeded_spec(workdir)
    path.write_text(path.read_text().replace('type = "categorical"', 'type = "categorical"\nvalue = [1]'))
    result = _bad(prove, workdir)
    assert_clean_error(result, 1, "prove.toml:8:", "[axes.x]", 'did you mean "values"')


@pytest.mark.parametrize(
    ("old", "new", "fragments"),
    [
        (
            "replicates = 40",
            'replicates = "forty"',
            ["prove.toml:4:", "replicates must be a positive integer"],
        ),
        ('values = ["a", "b"]', "values = []", ["prove.toml:8:", "axes.x.values is empty"]),
        ('values = ["a", "b"]', 'values = ["a", "a"]', ["prove.toml:8:", "axes.x.values repeats 'a'"]),
        ('type = "categorical"', 'type = "categoric"', ["prove.toml:7:", 'did you mean "categorical"']),
        ('failures = ["bad"]', 'failures = ["worse"]', ["prove.toml:12:", "declare.failures names worse"]),
        (
            'successes = ["ok"]',
            'successes = ["ok", "bad"]',
            ["prove.toml:13:", "both a failure and a success"],
        ),
        ('target = "agent:rollout"', 'target = "agent.rollout"', ["prove.toml:1:", "module:function"]),
        ("[declare]", "[declare\n", ["prove.toml:", "not valid TOML", "line 10"]),
    ],
)
def test_wrong_values(prove, workdir, old: str, new: str, fragments: list[str]) -> None:
    path = seeded_spec(workdir)
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new))
    assert_clean_error(_bad(prove, workdir), 1, *fragments)


def test_continuous_and_integer_axes_check_their_values(prove, workdir) -> None:
    seeded_spec(workdir, extra='[axes.temp]\ntype = "continuous"\nvalues = [0.1, "hot"]\n')
    assert_clean_error(_bad(prove, workdir), 1, "prove.toml:16:", "must be numbers (continuous)")
    seeded_spec(workdir, extra='[axes.k]\ntype = "integer"\nvalues = [1, 2.5]\n')
    assert_clean_error(_bad(prove, workdir), 1, "prove.toml:16:", "must be integers")


def test_backend_capture_and_chaos_tables_are_validated(prove, workdir) -> None:
    seeded_spec(workdir, extra="[modal]\nconcurency = 4\n")
    assert_clean_error(_bad(prove, workdir), 1, "prove.toml:15:", "[modal]", 'did you mean "concurrency"')
    seeded_spec(workdir, extra='[capture]\ninstrument = ["openai"]\ncontent = "no"\n')
    assert_clean_error(_bad(prove, workdir), 1, "prove.toml:16:", "capture.content")
    seeded_spec(workdir, extra='[capture]\ninstrument = ["openai"]\n')
    assert_clean_error(_bad(prove, workdir), 1, "max_observation_bytes", "next: add max_observation_bytes")
    seeded_spec(workdir, extra='[[chaos.faults]]\nkind = "latensy"\nrate = 0.1\nseconds = 1\n')
    assert_clean_error(_bad(prove, workdir), 1, 'did you mean "latency"')


def test_target_that_does_not_import(prove, workdir) -> None:
    small_spec(workdir, target="nowhere:rollout")
    assert_clean_error(
        _bad(prove, workdir), 1, 'target "nowhere:rollout" does not import', "ModuleNotFoundError"
    )
    write(workdir, "broken.py", "import json\nraise RuntimeError('half-written module')\n")
    small_spec(workdir, target="broken:rollout")
    assert_clean_error(_bad(prove, workdir), 1, "RuntimeError: half-written module")
    write(workdir, "agent.py", SEEDED_TARGET)
    small_spec(workdir, target="agent:rollot")
    assert_clean_error(_bad(prove, workdir), 1, "module agent has no rollot")


def test_target_that_does_not_take_cfg_and_seed(prove, workdir) -> None:
    write(workdir, "agent.py", "def rollout(cfg, seed, model):\n    return None\n")
    small_spec(workdir)
    result = _bad(prove, workdir)
    assert_clean_error(result, 1, "does not take (cfg, seed)")
    assert "next: define it as def rollout(cfg, seed)" in result.stderr
    # The dry-run's check in a child process says the same.
    dry = prove("sweep", "--dry-run")
    assert_clean_error(dry, 1, "does not take (cfg, seed)")


def test_spec_library_checks_that_need_no_process(tmp_path) -> None:
    """The same validation, in-process: cases cheaper to pin here than through the script."""
    from poisson_prove.design.spec import parse_spec
    from poisson_prove.errors import ProveError

    good = small_spec(tmp_path).read_text()
    cases = {
        good.replace('target_id = "agent"', "target_id = 3"): "prove.toml:2: target_id must be",
        good.replace(
            'successes = ["ok"]', 'successes = ["fine"]'
        ): "prove.toml:13: declare.successes names fine",
        good
        + '[axes.k]\ntype = "integer"\nvalues = [1, true]\n': "prove.toml:16: axes.k.values must be integers",
        good + '[burla]\nmax_cost = "ten"\n': "prove.toml:15: [burla] max_cost must be",
        good + '[[chaos.faults]]\nkind = "http_status"\nrate = 0.1\n': "http_status needs status",
        good + '[[chaos.faults]]\nkind = "timeout"\nrate = 1.5\n': "rate must be a number in [0, 1]",
        good.replace(
            "[declare]", "[declare]\noutcomes = []\n[other]"
        ): "prove.toml:12: unknown key 'other' in the spec",
    }
    named = 'target_id = "agent"'
    cases[good.replace(named, f'target_id = "{"a" * 101}"')] = "prove.toml:2: target_id must be"
    cases["budget = inf\n" + good] = "prove.toml:1: budget must be a positive number of dollars, got inf"
    for text, fragment in cases.items():
        with pytest.raises(ProveError) as caught:
            parse_spec(text, Path("prove.toml"))
        assert fragment in caught.value.message, (fragment, caught.value.message)
        assert caught.value.exit_code == 1  # a spec's mistake, never the command line's (2)
    for name in ("エージェント", "support bot 1.2", "a" * 100):  # letters of any script; 100 at most
        spec = parse_spec(good.replace(named, f'target_id = "{name}"'), Path("p.toml"))
        assert spec.target_id == name


def test_a_categorical_axis_holds_names_or_numbers_and_every_axis_has_a_name(tmp_path) -> None:
    """Mixed names and numbers, booleans, a blank or control-character value, and an axis named
    "" are the spec's mistake (one line each, naming file:line and the key, with a fix); names
    alone or numbers alone (a case axis's integer ids) are kept, and a stored run's spec is read
    as it was made, so an older run holding booleans still resumes."""
    from poisson_prove.design.spec import parse_spec, spec_from_manifest
    from poisson_prove.errors import ProveError

    good = small_spec(tmp_path).read_text()
    values = 'values = ["a", "b"]'
    assert values in good
    refused = {
        'values = ["a", 1]': ("prove.toml:8: axes.x.values mixes names and numbers ('a' and 1)", '("1")'),
        "values = [2.5, \"b\"]": ("prove.toml:8: axes.x.values mixes names and numbers ('b' and 2.5)", ""),
        "values = [true, false]": ("prove.toml:8: axes.x.values holds the boolean true", "values as names"),
        'values = ["", "b"]': ("prove.toml:8: axes.x.values holds ''", "letters, digits"),
        'values = ["a", "  "]': ("prove.toml:8: axes.x.values holds '  '", "letters, digits"),
        'values = ["a\\u001b[31m", "b"]': ("prove.toml:8: axes.x.values holds 'a\\x1b[31m'", "letters"),
        'values = ["a\\nb", "b"]': ("prove.toml:8: axes.x.values holds 'a\\nb'", "letters"),
    }
    for new, (fragment, hint) in refused.items():
        with pytest.raises(ProveError) as caught:
            parse_spec(good.replace(values, new), Path("prove.toml"))
        assert caught.value.message.startswith(fragment), (new, caught.value.message)
        assert caught.value.exit_code == 1 and hint in " ".join(caught.value.suggestions), new
    for header in ('[axes.""]', '[axes." "]', '[axes."a\\tb"]'):
        with pytest.raises(ProveError) as caught:
            parse_spec(good.replace("[axes.x]", header), Path("prove.toml"))
        assert caught.value.message.startswith("prove.toml:6: an axis is named "), caught.value.message
        assert "[axes.ticket]" in caught.value.suggestions[0]
    kept_as = {'values = ["a", "b"]': ("a", "b"), "values = [1, 2]": (1, 2), "values = [0.5]": (0.5,)}
    for new, kept in kept_as.items():
        assert parse_spec(good.replace(values, new), Path("p.toml")).axes[0].values == kept
    stored = dict(parse_spec(good, Path("p.toml")).raw)
    stored["axes"] = {"x": {"type": "categorical", "values": [True, False]}}
    assert spec_from_manifest(stored, "p.toml").axes[0].values == (True, False)


def test_a_spec_that_is_not_a_regular_file_is_refused_unread(tmp_path) -> None:
    """/dev/zero (read forever) and a FIFO with no writer (a hang) are refused before a byte is
    read, and so is a spec larger than the most an input file is read."""
    import os  # only this test makes a FIFO

    from poisson_prove.design.spec import load_spec
    from poisson_prove.errors import ProveError

    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    big = tmp_path / "big.toml"
    with open(big, "wb") as handle:
        handle.truncate((64 << 20) + 1)  # sparse: no 64 MiB written
    cases = {
        "/dev/zero": "/dev/zero is a character device, not a sweep spec",
        str(fifo): f"{fifo} is a FIFO (named pipe), not a sweep spec",
        str(big): f"{big} is larger than 64 MiB",
    }
    for path, fragment in cases.items():
        with pytest.raises(ProveError) as caught:
            load_spec(path)
        assert fragment in caught.value.message, (fragment, caught.value.message)
        assert caught.value.exit_code == 1


def test_spec_reads_conditions_in_axis_order(tmp_path) -> None:

    from poisson_prove.design.conditions import condition_key
    from poisson_prove.design.spec import parse_spec

    text = small_spec(tmp_path).read_text() + '[axes.temp]\ntype = "continuous"\nvalues = [0, 0.7]\n'
    spec = parse_spec(text, Path("prove.toml"))
    cells = spec.conditions()
    assert [c.cfg for c in cells] == [
        {"x": "a", "temp": 0.0},
        {"x": "a", "temp": 0.7},
        {"x": "b", "temp": 0.0},
        {"x": "b", "temp": 0.7},
    ]
    assert isinstance(cells[0].cfg["temp"], float)  # continuous values are floats, so keys are stable
    assert cells[1].key == condition_key({"temp": 0.7, "x": "a"})
    assert cells[1].label == "x a · temp 0.7"
