"""CI auto-targeting against real git repositories (a clone with only origin/<base> too)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from proveai.ci.targeting import in_ci, select_snapshots
from proveai.snapshot.model import AgentDefinition, Capture, Snapshot
from tests.proveai.snapshot.kit import git


def snap(name: str, *sources: str | None, reads: tuple[str, ...] | None = (),
         imports: tuple[str, ...] | None = (), invocation: dict | None = None) -> Snapshot:
    agents = {
        f"a{i}": AgentDefinition(f"a{i}", source_file=src, reads=reads, imports=imports)
        for i, src in enumerate(sources)
    }
    return Snapshot(
        name=name, version=1, agents=agents, captures=(Capture("t" * 32, {}),), invocation=invocation
    )


def repo(root: Path) -> Path:
    root.mkdir()
    for path in ("agents/classify.py", "agents/draft.py", "README.md", "prompts/qa.md", "helpers.py",
                 "run.py"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("x = 1\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


SNAPSHOTS = {
    "classify": snap("classify", "agents/classify.py"),
    "draft": snap("draft", "agents/draft.py"),
    "unknown": snap("unknown", "agents/draft.py", None),
}


def test_selects_by_changed_source_files(tmp_path: Path) -> None:
    root = repo(tmp_path / "r")
    git(root, "checkout", "-q", "-b", "feature")
    (root / "agents" / "classify.py").write_text("x = 2\n", encoding="utf-8")
    git(root, "commit", "-q", "-am", "edit classify")
    result = select_snapshots(SNAPSHOTS, root=root, snapshots_dir_rel="proveai/snapshots", base_ref="main")
    assert result.mode == "changed"
    # an agent without a recorded source file cannot be shown untouched
    assert result.selected == ("classify", "unknown") and result.skipped == ("draft",)
    assert result.changed_files == ("agents/classify.py",)
    assert result.reason.startswith("auto-targeted 2 of 3 snapshot(s) by git diff main...HEAD")
    assert result.why == {
        "classify": ("agents/classify.py, source of a0",),
        "unknown": ("in doubt: no source file recorded for a1",),
    }
    assert "targeted: classify (agents/classify.py, source of a0), unknown (in doubt: " in result.reason
    assert result.reason.endswith("; skipped: draft (no changed file is the snapshot, its script, or a "
                                  "source, read file or imported module of its agents)")


def commit_change(root: Path, *paths: str) -> None:
    git(root, "checkout", "-q", "-B", "feature", "main")
    for path in paths:
        (root / path).write_text("changed\n", encoding="utf-8")
    git(root, "commit", "-q", "-am", "change")


def test_selects_by_files_read_modules_imported_and_the_script_rerun(tmp_path: Path) -> None:
    root = repo(tmp_path / "r")
    snapshots = {
        "reader": snap("reader", "agents/draft.py", reads=("prompts/qa.md",), imports=("helpers.py",),
                       invocation={"script": "../run.py", "cwd": "agents"}),
        "other": snap("other", "agents/classify.py"),
        "legacy": snap("legacy", "agents/classify.py", reads=None, imports=None),
    }

    def why(*paths: str) -> dict[str, tuple[str, ...]]:
        commit_change(root, *paths)
        return dict(select_snapshots(snapshots, root=root, snapshots_dir_rel="proveai/snapshots",
                                     base_ref="main").why)

    pinned_before = "in doubt: pinned before proveai recorded the files a0 read and import " \
        "(re-pin: proveai snapshot init legacy)"
    assert why("prompts/qa.md") == {"reader": ("prompts/qa.md read by a0",), "legacy": (pinned_before,)}
    assert why("helpers.py") == {"reader": ("helpers.py imported by a0",), "legacy": (pinned_before,)}
    assert why("run.py")["reader"] == ("run.py, the script verify re-runs",)
    # a file no snapshot depends on: only the one in doubt is verified
    assert why("README.md") == {"legacy": (pinned_before,)}
    # a prompt file renamed away still counts under the name the agent read
    git(root, "checkout", "-q", "-B", "feature", "main")
    git(root, "mv", "prompts/qa.md", "prompts/renamed.md")
    git(root, "commit", "-q", "-m", "rename")
    renamed = select_snapshots(snapshots, root=root, snapshots_dir_rel="proveai/snapshots", base_ref="main")
    assert renamed.why["reader"] == ("prompts/qa.md read by a0",)


def test_snapshot_file_change_selects_it_and_origin_fallback(tmp_path: Path) -> None:
    origin = repo(tmp_path / "origin")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True, capture_output=True)
    git(clone, "checkout", "-q", "-b", "feature")
    git(clone, "branch", "-D", "main")  # as on a CI checkout: only origin/main exists
    (clone / "proveai" / "snapshots").mkdir(parents=True)
    (clone / "proveai" / "snapshots" / "draft.json").write_text("{}", encoding="utf-8")
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "re-pin draft")
    result = select_snapshots(SNAPSHOTS, root=clone, snapshots_dir_rel="proveai/snapshots", base_ref="main")
    assert "git diff origin/main...HEAD" in result.reason
    assert "draft" in result.selected and "classify" not in result.selected


def test_falls_back_to_all_and_says_why(tmp_path: Path) -> None:
    root = repo(tmp_path / "r")
    no_ref = select_snapshots(SNAPSHOTS, root=root, snapshots_dir_rel="proveai/snapshots", base_ref=None)
    assert no_ref.mode == "fallback" and no_ref.selected == ("classify", "draft", "unknown")
    assert no_ref.reason == "verifying all 3 snapshot(s): GITHUB_BASE_REF is not set"
    bad_ref = select_snapshots(SNAPSHOTS, root=root, snapshots_dir_rel="proveai/snapshots", base_ref="gone")
    assert "git diff against gone or origin/gone failed" in bad_ref.reason
    not_git = tmp_path / "plain"
    not_git.mkdir()
    outside = select_snapshots(
        SNAPSHOTS, root=not_git, snapshots_dir_rel="proveai/snapshots", base_ref="main"
    )
    assert outside.reason.endswith("not a git repository")


def test_in_ci() -> None:
    assert in_ci({"CI": "true"}) and in_ci({"GITHUB_ACTIONS": "true"})
    assert not in_ci({}) and not in_ci({"CI": "false"}) and not in_ci({"CI": "0"})
