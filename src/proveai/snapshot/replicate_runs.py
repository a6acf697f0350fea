"""Fresh runs of a pinned pipeline: the recorded command re-run N times, each into its own
temporary traces folder, returning the trace each run wrote.

`snapshot init --replicates` pins them; `snapshot verify` grades them against the pin.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proveai.errors import ProveAIError, ProveAIExit
from proveai.snapshot.fromtrace import dated_trace_files, load_trace_file
from proveai.snapshot.rerun import replicate_seed, rerun
from proveai.snapshot.soundness import model_outage

if TYPE_CHECKING:
    from proveai.traces.trace import Trace

Progress = Callable[[int, int], None]  # (runs done, runs planned)


def capture_replicates(
    invocation: Mapping[str, Any],
    *,
    count: int,
    seed: int | None,
    stream: str,
    timeout_s: float,
    trace_name: str | None,
    root: Path | None = None,
    keep_dir: Path | None = None,
    notes: list[str] | None = None,
    progress: Progress | None = None,
) -> list[Trace]:
    """Re-run the invocation `count` times, each into its own temporary traces folder
    (removed afterwards); return the fresh trace of each run (copied to `keep_dir`).
    `progress(done, total)` is called before each run and once at the end."""
    traces = []
    for replicate in range(count):
        if progress is not None:
            progress(replicate, count)
        run_seed = None if seed is None else (seed if count == 1 else replicate_seed(seed, stream, replicate))
        tmp = Path(tempfile.mkdtemp(prefix="proveai-verify-"))
        try:
            result = rerun(
                invocation,
                traces_dir=tmp / "traces",
                timeout_s=timeout_s,
                root=root,
                replicate=replicate,
                seed=run_seed,
                # replicates sample the model's noise: a response cache (cached_dispatch, or
                # dispatch under verify) would serve every replicate the first one's replies
                extra_env={"PROVEAI_NO_CACHE": "1"} if count > 1 else None,
            )
            files = dated_trace_files(result.traces_dir)
            loaded = [load_trace_file(path) for _, path, _ in files]
            named = [t for t in loaded if trace_name is None or t.name == trace_name] or loaded
            if not named:
                tail = result.stderr_tail or result.stdout_tail or "(no output)"
                raise ProveAIError(
                    f"the pipeline ({' '.join(result.command[1:])}) exited {result.returncode} and wrote "
                    f"no trace; its last output:\n{tail}",
                    suggestions=[
                        "run it yourself to see why; the trace must be exported with a FileExporter "
                        "inside `with trace(...)`",
                    ],
                    exit_code=ProveAIExit.USAGE,
                )
            fresh = named[-1]
            outage = model_outage(fresh)
            if outage is not None:
                raise outage
            if result.returncode != 0 and notes is not None:
                notes.append(
                    f"replicate {replicate}: the pipeline exited {result.returncode} (graded its trace)"
                )
            if keep_dir is not None:
                keep_dir.mkdir(parents=True, exist_ok=True)
                source = next(p for tid, p, _ in files if tid == fresh.trace_id)
                shutil.copy2(source, keep_dir / f"{replicate:03d}-{fresh.trace_id}.json")
            traces.append(fresh)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if progress is not None:
        progress(count, count)
    return traces
