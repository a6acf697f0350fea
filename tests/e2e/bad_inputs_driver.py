"""Run many command lines of one console script cheaply: import its entry point once, then fork
a child per case that does exactly what the installed script does (sys.argv, `sys.exit(main())`).

Usage: python bad_inputs_driver.py MODULE:FUNCTION PROG [PRELOAD,...] < cases.json > results.jsonl

PRELOAD names modules the parent imports once more (pyarrow, ...), so each child starts with
what a command would import lazily already loaded: only the cost changes, not the behaviour.

Each case is {"id", "argv", "cwd", "env", "timeout"}; each result line (in the order the cases
end) is {"id", "code", "stdout", "stderr", "timed_out", "seconds"}. The child's fd 1 and 2 go
to files of its own (so what a rollout writes with os.write or a C library lands there too); a
child past its timeout is SIGKILLed with its process group and reported as timed out.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import tempfile
import time
from typing import Any

# Cases run two at a time: many of them wait (an episode timeout, a worker started again after a
# crash) more than they compute. Each has its own folder, process group and output files.
JOBS = 2


def _child(entry: Any, prog: str, case: dict[str, Any], out_path: str, err_path: str) -> None:
    os.setpgid(0, 0)
    os.chdir(case["cwd"])
    os.environ.update(case.get("env") or {})
    for name in case.get("unset") or []:
        os.environ.pop(name, None)
    stdin = os.open(os.devnull, os.O_RDONLY)
    os.dup2(stdin, 0)
    for fd, path in ((1, out_path), (2, err_path)):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(target, fd)
        os.close(target)
    sys.argv = [prog, *case["argv"]]
    code: int = 0
    try:
        result = entry()  # the console script: sys.exit(main())
        code = result if isinstance(result, int) else (0 if result is None else 1)
    except SystemExit as exc:
        value = exc.code
        if value is None:
            code = 0
        elif isinstance(value, int):
            code = value
        else:
            sys.stderr.write(f"{value}\n")
            code = 1
    except BaseException:  # as the interpreter would: print the traceback, exit 1
        import traceback  # only on a crash

        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code & 0xFF)


def _kill(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)


def _result(case: dict[str, Any], paths: tuple[str, str], code: int, timed_out: bool, started: float) -> str:
    texts = []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as handle:
            texts.append(handle.read())
        os.unlink(path)
    result = {"id": case["id"], "code": code, "stdout": texts[0], "stderr": texts[1]}
    result["timed_out"] = timed_out
    result["seconds"] = round(time.monotonic() - started, 2)  # to find a costly row; never asserted
    return json.dumps(result)


def main() -> None:
    target, prog = sys.argv[1], sys.argv[2]
    module, _, function = target.partition(":")
    entry = getattr(importlib.import_module(module), function)
    for name in filter(None, (sys.argv[3] if len(sys.argv) > 3 else "").split(",")):
        importlib.import_module(name)
    cases = json.load(sys.stdin)
    scratch = tempfile.mkdtemp(prefix="bad-inputs-")
    pending = list(enumerate(cases))
    running: dict[int, tuple[dict[str, Any], tuple[str, str], float, float]] = {}
    while pending or running:
        while pending and len(running) < JOBS:
            number, case = pending.pop(0)
            paths = (os.path.join(scratch, f"out-{number}"), os.path.join(scratch, f"err-{number}"))
            sys.stdout.flush()
            started = time.monotonic()
            pid = os.fork()
            if pid == 0:
                try:
                    _child(entry, prog, case, *paths)
                finally:
                    os._exit(99)
            running[pid] = (case, paths, started, started + float(case.get("timeout", 60)))
        finished = False
        for pid, (case, paths, started, deadline) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                code, timed_out = os.waitstatus_to_exitcode(status), False
            elif time.monotonic() > deadline:
                _kill(pid)
                code, timed_out = -9, True
            else:
                continue
            del running[pid]
            finished = True
            print(_result(case, paths, code, timed_out, started), flush=True)
        if not finished:
            time.sleep(0.01)
    os.rmdir(scratch)


if __name__ == "__main__":
    main()
