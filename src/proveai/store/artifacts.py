"""Named artifacts of the replay flow, as YAML files: Baseline (a versioned trace-id set) under
proveai/baselines/ and Experiment (an override set) under proveai/experiments/. A replay's
run folder is proveai.store.runs.Run.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prove_common.files import NotRegularFile, clear_stale_temps, read_regular_text, write_text_atomic
from prove_common.jsonio import utc_now_iso
from proveai.errors import ProveAIError
from proveai.store.layout import Store, check_name
from proveai.store.traces.reading import list_traces


def _write_yaml(path: Path, data: Mapping[str, Any]) -> None:
    import yaml  # yaml: ~20 ms, only for baselines and experiments

    path.parent.mkdir(parents=True, exist_ok=True)
    clear_stale_temps(path.parent)  # what a killed writer of this folder left
    write_text_atomic(path, yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True))


def _unknown(kind: str, name: str, folder: Path, known: Sequence[str], create: str) -> ProveAIError:
    """The error for a name with no file: where it looked, the names it has, how to make one."""
    listed = f"; known: {', '.join(known)}" if known else ""
    return ProveAIError(f"no {kind} named {name!r} in {folder}{listed}", suggestions=(f"proveai {create}",))


def _read_yaml(path: Path, kind: str) -> dict[str, Any]:
    import yaml  # yaml: ~20 ms, only for baselines and experiments

    try:
        data = yaml.safe_load(read_regular_text(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise ProveAIError(f"cannot read {kind} file {path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ProveAIError(f"cannot read {kind} file {path}: {yaml_problem(exc)}") from None
    except RecursionError:
        raise ProveAIError(f"cannot read {kind} file {path}: it is nested too deeply to be one") from None
    if not isinstance(data, dict):
        raise ProveAIError(f"{path} is not a {kind} file (expected a mapping)")
    return data


def yaml_problem(exc: Exception) -> str:
    """A YAML error in one line: `line L, column C: what is wrong` (PyYAML's own text spans
    several lines, quoting the source under a caret)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    words = [str(part) for part in (getattr(exc, "context", None), getattr(exc, "problem", None)) if part]
    what = ": ".join(words) if words else str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return " ".join(f"{where}{what}".split())


def split_override(value: str, flag: str = "--override") -> tuple[str, str]:
    """AGENT=PATH split into (agent, path). An agent's name may hold `=`: of the ways to split at
    an `=`, the first whose PATH names an existing file is taken, else the first `=`. A value
    without both parts is a usage error."""
    cuts = [i for i, char in enumerate(value) if char == "="]
    pairs = [(value[:i].strip(), value[i + 1 :].strip()) for i in cuts]
    pairs = [(agent, path) for agent, path in pairs if agent and path]
    if not pairs:
        example = f"e.g. {flag} qa_check=prompts/qa_v2.md"
        raise ProveAIError(f"{flag} expects AGENT=PATH, got {value!r}", suggestions=[example])
    return next(((agent, path) for agent, path in pairs if os.path.isfile(path)), pairs[0])


# ---- Baseline ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Baseline:
    """A named, versioned set of trace ids, with the filter that chose them.

    `refresh` re-applies the filter and bumps the version; earlier versions stay in `history`
    and are addressable as NAME@VERSION.
    """

    name: str
    version: int
    trace_ids: tuple[str, ...]
    filter: dict[str, str]
    traces_dir: str
    created: str
    updated: str
    history: tuple[dict[str, Any], ...] = ()

    @staticmethod
    def path_for(name: str, store: Store) -> Path:
        return store.baselines_dir / f"{name}.yaml"

    @classmethod
    def create(
        cls, name: str, store: Store, traces_dir: str | os.PathLike[str], filters: Mapping[str, str]
    ) -> Baseline:
        check_name("baseline", name)
        path = cls.path_for(name, store)
        if path.exists():
            raise ProveAIError(
                f"baseline {name!r} already exists ({path})",
                suggestions=(f"proveai baseline refresh {name}  (re-apply its filter as a new version)",),
            )
        ids = _matching_ids(traces_dir, filters)
        now = utc_now_iso()
        baseline = cls(name, 1, ids, dict(filters), str(traces_dir), now, now)
        baseline.save(store)
        return baseline

    def refresh(self, store: Store) -> Baseline:
        ids = _matching_ids(self.traces_dir, self.filter)
        past = {"version": self.version, "created": self.updated, "trace_ids": list(self.trace_ids)}
        refreshed = Baseline(
            self.name,
            self.version + 1,
            ids,
            self.filter,
            self.traces_dir,
            self.created,
            utc_now_iso(),
            (*self.history, past),
        )
        refreshed.save(store)
        return refreshed

    def save(self, store: Store) -> Path:
        path = self.path_for(self.name, store)
        _write_yaml(
            path,
            {
                "name": self.name,
                "version": self.version,
                "created": self.created,
                "updated": self.updated,
                "traces_dir": self.traces_dir,
                "filter": dict(self.filter),
                "trace_ids": list(self.trace_ids),
                "history": [dict(h) for h in self.history],
            },
        )
        return path

    @classmethod
    def load(cls, ref: str, store: Store) -> Baseline:
        """NAME (latest version) or NAME@VERSION."""
        name, _, wanted = ref.partition("@")
        path = cls.path_for(name, store)
        if not path.exists():
            known = [b.name for b in cls.list(store)]
            create = f"baseline create {name} --filter outcome=good"
            raise _unknown("baseline", name, store.baselines_dir, known, create)
        data = _read_yaml(path, "baseline")
        try:
            baseline = cls(
                str(data["name"]),
                int(data["version"]),
                tuple(str(t) for t in data.get("trace_ids") or ()),
                {str(k): str(v) for k, v in (data.get("filter") or {}).items()},
                str(data["traces_dir"]),
                str(data.get("created", "")),
                str(data.get("updated", "")),
                tuple(dict(h) for h in data.get("history") or ()),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ProveAIError(f"{path}: malformed baseline ({type(exc).__name__}: {exc})") from None
        if not wanted:
            return baseline
        if not wanted.isdigit():
            raise ProveAIError(f"baseline version must be a number: {ref!r}")
        if int(wanted) == baseline.version:
            return baseline
        for past in baseline.history:
            if int(past.get("version", -1)) == int(wanted):
                ids = tuple(str(t) for t in past.get("trace_ids") or ())
                return Baseline(
                    name,
                    int(wanted),
                    ids,
                    baseline.filter,
                    baseline.traces_dir,
                    baseline.created,
                    str(past.get("created", "")),
                )
        versions = [int(h.get("version", 0)) for h in baseline.history] + [baseline.version]
        raise ProveAIError(f"baseline {name!r} has no version {wanted}; versions: {versions}")

    @classmethod
    def list(cls, store: Store) -> list[Baseline]:
        if not store.baselines_dir.is_dir():
            return []
        return [cls.load(p.stem, store) for p in sorted(store.baselines_dir.glob("*.yaml"))]


def _matching_ids(traces_dir: str | os.PathLike[str], filters: Mapping[str, str]) -> tuple[str, ...]:
    try:
        listing = list_traces(traces_dir, dict(filters))
    except ValueError as exc:
        raise ProveAIError(f"--filter: {exc}") from None
    if not listing.rows:
        what = " ".join(f"{k}={v}" for k, v in filters.items()) or "(no filter)"
        raise ProveAIError(
            f"no traces in {traces_dir} match {what}",
            suggestions=("proveai status  (what the store holds)",),
        )
    return tuple(row.trace_id for row in listing.rows)


# ---- Experiment -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Experiment:
    """A named override set. Each agent's override holds the prompt text itself (so the
    experiment stays reproducible when the file changes), its source file and sha256, and
    optionally a model."""

    name: str
    overrides: dict[str, dict[str, Any]]
    created: str
    description: str | None = None

    @staticmethod
    def path_for(name: str, store: Store) -> Path:
        return store.experiments_dir / f"{name}.yaml"

    @classmethod
    def new(
        cls,
        name: str,
        store: Store,
        prompt_files: Mapping[str, str],
        models: Mapping[str, str] | None = None,
        description: str | None = None,
    ) -> Experiment:
        check_name("experiment", name)
        path = cls.path_for(name, store)
        if path.exists():
            raise ProveAIError(
                f"experiment {name!r} already exists ({path})", suggestions=("pick another name",)
            )
        overrides: dict[str, dict[str, Any]] = {}
        for agent, file in prompt_files.items():
            overrides.setdefault(agent, {}).update(prompt_override(agent, file))
        for agent, model in (models or {}).items():
            overrides.setdefault(agent, {})["model"] = model
        if not overrides:
            raise ProveAIError(
                "an experiment needs at least one override",
                suggestions=(f"proveai experiment new {name} --override AGENT=PATH",),
            )
        experiment = cls(name, overrides, utc_now_iso(), description)
        data: dict[str, Any] = {"name": name, "created": experiment.created}
        if description:
            data["description"] = description
        data["overrides"] = overrides
        _write_yaml(path, data)
        return experiment

    @classmethod
    def load(cls, name: str, store: Store) -> Experiment:
        path = cls.path_for(name, store)
        if not path.exists():
            known = [e.name for e in cls.list(store)]
            create = f"experiment new {name} --override AGENT=PATH"
            raise _unknown("experiment", name, store.experiments_dir, known, create)
        data = _read_yaml(path, "experiment")
        overrides = data.get("overrides")
        if not isinstance(overrides, dict) or not all(isinstance(v, dict) for v in overrides.values()):
            raise ProveAIError(f"{path}: malformed experiment (overrides must map agent -> settings)")
        return cls(
            str(data.get("name", name)),
            {str(k): dict(v) for k, v in overrides.items()},
            str(data.get("created", "")),
            data.get("description"),
        )

    @classmethod
    def list(cls, store: Store) -> list[Experiment]:
        if not store.experiments_dir.is_dir():
            return []
        return [cls.load(p.stem, store) for p in sorted(store.experiments_dir.glob("*.yaml"))]

    def replay_overrides(self) -> dict[str, dict[str, Any]]:
        """The overrides as replay_trace takes them: {agent: {"prompt": ..., "model": ...}}."""
        return {
            agent: {
                k: v
                for k, v in settings.items()
                if k in ("prompt", "model", "messages", "temperature", "seed")
            }
            for agent, settings in self.overrides.items()
        }


def prompt_override(agent: str, file: str | os.PathLike[str]) -> dict[str, Any]:
    """{"prompt", "prompt_file", "prompt_sha256"} from a prompt file; ProveAIError naming the file."""
    path = Path(file)
    try:
        text = read_regular_text(path)
    except FileNotFoundError:
        raise ProveAIError(
            f"--override {agent}={file}: no such file",
            suggestions=("the file's contents become the system prompt",),
        ) from None
    except NotRegularFile as exc:
        raise ProveAIError(
            f"--override {agent}={file}: it is {exc.kind}, not a prompt file",
            suggestions=("write the new system prompt into a file and name that file",),
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProveAIError(f"--override {agent}={file}: cannot read it ({exc})") from None
    return {
        "prompt": text,
        "prompt_file": str(file),
        "prompt_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
    }
