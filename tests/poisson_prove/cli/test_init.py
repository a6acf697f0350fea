"""`poisson-prove init --example [--force] [PATH]`: the example's spec written, an existing one
kept unless --force, a usage error without --example."""

from __future__ import annotations

from tests.conftest import assert_clean_error


def test_init_example_refuses_to_overwrite_without_force(prove, workdir) -> None:
    assert prove("init", "--example").returncode == 0
    spec = workdir / "prove.toml"
    spec.write_text("# mine\n")
    again = prove("init", "--example")
    assert_clean_error(again, 1, "already exists", "next: poisson-prove init --example --force")
    assert spec.read_text() == "# mine\n"
    forced = prove("init", "--example", "--force")
    assert forced.returncode == 0 and "mock_agent:rollout" in spec.read_text()
    (workdir / "sub").mkdir()
    assert prove("init", "--example", "sub").returncode == 0
    assert (workdir / "sub" / "prove.toml").read_text() == spec.read_text()
    assert_clean_error(prove("init"), 2, "--example")
