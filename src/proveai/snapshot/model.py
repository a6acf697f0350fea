"""The snapshot artifact: pinned known-good agent I/O behind content hashes.

A snapshot file (`proveai/snapshots/<name>.json`) is meant to be committed and reviewed in a
pull request, so it is byte-stable: sorted keys, two-space indent, a trailing newline, and no
field that changes when the same trace is pinned again (no wall-clock timestamps). The file is
found, read and replaced by proveai.store.snapshots; this module turns it into a Snapshot.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prove_common.jsonio import canonical_json
from prove_common.suggest import did_you_mean
from proveai.errors import ProveAIError
from proveai.store.snapshots import (
    read_snapshot_document,
    snapshot_files,
    trust_invocation,
    write_snapshot_text,
)

# the file of a snapshot name is the store's; callers take it from here, beside load_snapshot
from proveai.store.snapshots import snapshot_path as snapshot_path

SNAPSHOT_FORMAT = "proveai.snapshot/1"
TOOL_KINDS = frozenset({"TOOL"})


def content_hash(value: Any) -> str:
    """`sha256:<hex>` of the canonical JSON of `value` (frozen: pinned snapshots hold these)."""
    return "sha256:" + hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def describe_command(invocation: Mapping[str, Any]) -> str:
    """What the invocation asks to run, as a shell would show it: interpreter, argv, and the
    folder under the project root when it is not the root."""
    argv = invocation.get("argv")
    words = [str(invocation.get("python") or "python")]
    words += [str(a) for a in argv] if isinstance(argv, list) else []
    cwd = str(invocation.get("cwd") or ".")
    return shlex.join(words) + ("" if cwd == "." else f" (in {cwd})")


def short_hash(value: str | None) -> str:
    if not value:
        return "-"
    return value.split(":", 1)[-1][:12]


@dataclass(frozen=True)
class ExpectedIO:
    """One pinned call of an agent (one loop iteration): what went in and what came out."""

    inputs: Any
    output: Any
    input_messages: Any = None
    output_messages: Any = None
    request: Any = None  # the provider call's model and kwargs (temperature, seed, ...)
    tool_calls: tuple[Any, ...] = ()
    status: str = "ok"
    error: str | None = None

    @property
    def inputs_hash(self) -> str:
        return content_hash(self.inputs)

    @property
    def output_hash(self) -> str:
        return content_hash(self.output)

    @property
    def tool_calls_hash(self) -> str:
        return content_hash(list(self.tool_calls))

    @property
    def reply_text(self) -> str | None:
        """The model's reply as sent back to the agent (last assistant message), if any."""
        for message in reversed(self.output_messages or []):
            if isinstance(message, Mapping) and isinstance(message.get("content"), str):
                return message["content"]
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "inputs": self.inputs,
            "inputs_hash": self.inputs_hash,
            "output": self.output,
            "output_hash": self.output_hash,
            "input_messages": self.input_messages,
            "output_messages": self.output_messages,
            "request": self.request,
            "tool_calls": list(self.tool_calls),
            "tool_calls_hash": self.tool_calls_hash,
            "status": self.status,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> ExpectedIO:
        if not isinstance(data, Mapping) or "output" not in data:
            raise ValueError(f"{where}: expected an object with 'inputs' and 'output'")
        tool_calls = data.get("tool_calls") or []
        if not isinstance(tool_calls, list):
            raise ValueError(f"{where}.tool_calls: expected a list")
        io = cls(
            inputs=data.get("inputs"),
            output=data.get("output"),
            input_messages=data.get("input_messages"),
            output_messages=data.get("output_messages"),
            request=data.get("request"),
            tool_calls=tuple(tool_calls),
            status=str(data.get("status") or "ok"),
            error=data.get("error"),
        )
        # A hand-edited pin whose hash no longer matches its content would grade wrongly.
        for key, actual in (("output_hash", io.output_hash), ("inputs_hash", io.inputs_hash)):
            if key in data and data[key] != actual:
                raise ValueError(f"{where}.{key}: does not match the pinned content (edited by hand?)")
        return io


@dataclass(frozen=True)
class AgentDefinition:
    """What defines an agent apart from its I/O: prompt and model, hashed for edit detection."""

    name: str
    kind: str = "UNKNOWN"
    model: str | None = None
    prompt: str | None = None
    parent_agent: str | None = None
    source_file: str | None = None
    description: str | None = None
    settings: Mapping[str, Any] | None = None  # request kwargs but the seed (temperature, ...)
    code_hash: str | None = None  # sha256 of the agent function's source, when captured
    function: str | None = None  # "module:qualname" of the agent function (what-if re-invokes it)
    # project files the agent's calls read and the project modules it imports (CI targeting);
    # None: not recorded (pinned before proveai recorded them), which targeting treats as in doubt
    reads: tuple[str, ...] | None = None
    imports: tuple[str, ...] | None = None

    @property
    def prompt_hash(self) -> str:
        return content_hash(self.prompt)

    @property
    def model_hash(self) -> str:
        return content_hash(self.model)

    @property
    def settings_hash(self) -> str:
        return content_hash(dict(self.settings) if self.settings else None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "model": self.model,
            "model_hash": self.model_hash,
            "prompt": self.prompt,
            "prompt_hash": self.prompt_hash,
            "parent_agent": self.parent_agent,
            "source_file": self.source_file,
            "description": self.description,
            "settings": dict(self.settings) if self.settings else None,
            "settings_hash": self.settings_hash,
            **({"code_hash": self.code_hash} if self.code_hash else {}),
            **({"function": self.function} if self.function else {}),
            **({"reads": list(self.reads)} if self.reads is not None else {}),
            **({"imports": list(self.imports)} if self.imports is not None else {}),
        }

    @classmethod
    def from_dict(cls, name: str, data: Mapping[str, Any], where: str) -> AgentDefinition:
        if not isinstance(data, Mapping):
            raise ValueError(f"{where}: expected an object")
        return cls(
            name=name,
            kind=str(data.get("kind") or "UNKNOWN"),
            model=data.get("model"),
            prompt=data.get("prompt"),
            parent_agent=data.get("parent_agent"),
            source_file=data.get("source_file"),
            description=data.get("description"),
            settings=data.get("settings") if isinstance(data.get("settings"), Mapping) else None,
            code_hash=data.get("code_hash") if isinstance(data.get("code_hash"), str) else None,
            function=data.get("function") if isinstance(data.get("function"), str) else None,
            reads=_paths(data.get("reads")),
            imports=_paths(data.get("imports")),
        )


def _paths(value: Any) -> tuple[str, ...] | None:
    """A pinned list of project paths; None (not recorded) when absent or not a list of strings."""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


@dataclass(frozen=True)
class Capture:
    """One pinned run of the pipeline: each agent's calls in order (several for a loop)."""

    trace_id: str
    io: Mapping[str, tuple[ExpectedIO, ...]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id,
            "io": {name: [item.to_dict() for item in calls] for name, calls in self.io.items()},
        }


@dataclass(frozen=True)
class Snapshot:
    """A named, versioned pin of known-good agent behaviour plus how to re-run the pipeline.

    `captures[0]` is the primary pin; a snapshot made with `init --replicates N` holds N
    captures, the known-good distribution verify tests fresh replicates against.
    """

    name: str
    version: int
    agents: Mapping[str, AgentDefinition]
    captures: tuple[Capture, ...]
    invocation: Mapping[str, Any] | None = None
    trace_name: str | None = None
    quick_only: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def trace_id(self) -> str:
        return self.captures[0].trace_id

    @property
    def replicates(self) -> int:
        return len(self.captures)

    def expected(self, agent: str, replicate: int = 0) -> tuple[ExpectedIO, ...]:
        return tuple(self.captures[replicate].io.get(agent, ()))

    @property
    def source_files(self) -> set[str]:
        return {a.source_file for a in self.agents.values() if a.source_file}

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": SNAPSHOT_FORMAT,
            "name": self.name,
            "version": self.version,
            "trace_name": self.trace_name,
            "quick_only": self.quick_only,
            "invocation": dict(self.invocation) if self.invocation else None,
            # catches an accidental edit; not a signature: proveai.snapshot.trust guards the runs
            "invocation_hash": content_hash(dict(self.invocation)) if self.invocation else None,
            "agents": {name: agent.to_dict() for name, agent in self.agents.items()},
            "captures": [capture.to_dict() for capture in self.captures],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, indent=2, ensure_ascii=False, default=str) + "\n"

    def content_key(self) -> str:
        """A hash of everything but the version: equal keys mean an identical pin."""
        data = self.to_dict()
        data.pop("version")
        return content_hash(data)

    @classmethod
    def from_dict(cls, data: Any, where: str) -> Snapshot:
        if not isinstance(data, Mapping):
            raise ValueError(f"{where}: expected a JSON object")
        if data.get("format") != SNAPSHOT_FORMAT:
            raise ValueError(f"{where}: key 'format' is {data.get('format')!r}, expected {SNAPSHOT_FORMAT!r}")
        for key in ("name", "version", "agents", "captures"):
            if key not in data:
                raise ValueError(f"{where}: missing key {key!r}")
        version = data["version"]
        if not isinstance(version, int) or version < 1:
            raise ValueError(f"{where}: key 'version' must be a positive integer")
        agents_raw = data["agents"]
        if not isinstance(agents_raw, Mapping):
            raise ValueError(f"{where}: key 'agents' must be an object")
        agents = {
            str(name): AgentDefinition.from_dict(str(name), raw, f"{where}: agents.{name}")
            for name, raw in agents_raw.items()
        }
        captures_raw = data["captures"]
        if not isinstance(captures_raw, list) or not captures_raw:
            raise ValueError(f"{where}: key 'captures' must be a non-empty list")
        captures = []
        for index, raw in enumerate(captures_raw):
            cwhere = f"{where}: captures[{index}]"
            if not isinstance(raw, Mapping) or not isinstance(raw.get("io"), Mapping):
                raise ValueError(f"{cwhere}: expected an object with 'trace_id' and 'io'")
            io = {}
            for name, calls in raw["io"].items():
                if not isinstance(calls, list):
                    raise ValueError(f"{cwhere}.io.{name}: expected a list of calls")
                io[str(name)] = tuple(
                    ExpectedIO.from_dict(call, f"{cwhere}.io.{name}[{i}]") for i, call in enumerate(calls)
                )
            captures.append(Capture(trace_id=str(raw.get("trace_id") or ""), io=io))
        invocation = data.get("invocation")
        if invocation is not None and not isinstance(invocation, Mapping):
            raise ValueError(f"{where}: key 'invocation' must be an object or null")
        if invocation is not None and data.get("invocation_hash") != content_hash(dict(invocation)):
            command = " ".join(str(a) for a in invocation.get("argv") or [])
            raise ValueError(
                f"{where}: the recorded invocation (python {command}) does not match its integrity hash: "
                "it was edited by hand, so verify will not run it"
            )
        return cls(
            name=str(data["name"]),
            version=version,
            agents=agents,
            captures=tuple(captures),
            invocation=invocation,
            trace_name=data.get("trace_name"),
            quick_only=bool(data.get("quick_only", False)),
        )


def unknown_agent_error(agent: str, known: Iterable[str], where: str) -> ProveAIError:
    """The refusal for an agent name that is not there, listing the ones that are."""
    names = list(known)
    return ProveAIError(
        f"unknown agent {agent!r} in {where}{did_you_mean(agent, names)}",
        suggestions=[f"known agents: {', '.join(names) if names else '(none)'}"],
    )


def load_snapshot(path: Path) -> Snapshot:
    """Read and validate one snapshot file; a bad file raises ProveAIError naming it."""
    data = read_snapshot_document(path)
    try:
        return Snapshot.from_dict(data, str(path))
    except ValueError as exc:
        raise ProveAIError(
            str(exc), suggestions=[f"re-create it: proveai snapshot init {path.stem}"]
        ) from exc


def write_snapshot(path: Path, snapshot: Snapshot) -> None:
    """Replace the file atomically (proveai.store.snapshots), so a reader never sees a torn snapshot.

    An invocation proveai itself writes into the file (`init`, from a run captured here) is
    trusted on this machine; one the file already held (`update` keeps it) is not re-trusted:
    writing it again says nothing about who wrote it first."""
    before = _invocation_hash_on_disk(path)
    write_snapshot_text(path, snapshot.to_json())
    if snapshot.invocation:
        written = content_hash(dict(snapshot.invocation))
        if written != before:
            command = describe_command(snapshot.invocation)
            trust_invocation(path.parent, written, snapshot=snapshot.name, command=command)


def _invocation_hash_on_disk(path: Path) -> str | None:
    """The content hash of the invocation the snapshot file holds now, if it holds one."""
    try:
        invocation = read_snapshot_document(path).get("invocation")
    except (ProveAIError, AttributeError):
        return None
    return content_hash(dict(invocation)) if isinstance(invocation, Mapping) else None


@dataclass(frozen=True)
class SnapshotEntry:
    """A row of `snapshot list`: a readable snapshot, or a malformed file and why."""

    name: str
    path: Path
    snapshot: Snapshot | None
    problem: str | None


def list_snapshots(snapshots_dir: Path) -> list[SnapshotEntry]:
    entries = []
    for path in snapshot_files(snapshots_dir):
        try:
            entries.append(SnapshotEntry(path.stem, path, load_snapshot(path), None))
        except ProveAIError as err:
            entries.append(SnapshotEntry(path.stem, path, None, err.message))
    return entries


def next_version(existing: Snapshot | None, candidate: Snapshot) -> int:
    """Same content keeps the version (byte-stable re-init); new content bumps it."""
    if existing is None:
        return 1
    if existing.content_key() == candidate.content_key():
        return existing.version
    return existing.version + 1


def agent_names(snapshot: Snapshot) -> Iterable[str]:
    return snapshot.agents.keys()
