"""`--stop-when-settled` on its own clock: rollouts spent by a fast and a slow rollout.

The design of performance finding row 8: 2 conditions x 300 replicates, base rate 0.4, the
plan's MDE (0.129 at q = 0.05), twins drawn independently. For each true rise (0, the MDE,
twice the MDE) and each of `--repetitions` salts, a baseline run at 0.4 and a
`--stop-when-settled` run at 0.4 + rise, both through the installed `poisson-prove sweep` with
the command's default batches (25,000 rows or a second): once with a rollout that returns at
once ("fast") and once with one that waits `--wait` seconds per episode ("slow"). Printed per
rise: the rollouts spent as a share of the fixed design's, for both, how many conditions were
flagged (a settled "rose" or "fell"), and whether the two made the same decisions.
Goal (issue 26): at twice the MDE, spent <= 0.6 of the fixed design for both, same error rates.

    .venv/bin/python benchmarks/bench_settle_clock.py [--repetitions 5] [--wait 0.002]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

AGENT = """
import os, random, time
from poisson_prove import Episode

RATE = float(os.environ["RATE"])
WAIT = float(os.environ.get("WAIT", "0"))
FRESH = int(os.environ.get("FRESH", "0"))

def rollout(cfg, seed):
    if WAIT:
        time.sleep(WAIT)
    rng = random.Random(seed)
    for _ in range(FRESH):  # the twin's draw: independent of the baseline's at the same seed
        rng.random()
    return Episode("bad" if rng.random() < RATE else "ok", 1, 5, {"case_id": cfg["x"]})
"""
SPEC = """
target = "agent:rollout"
target_id = "agent"
replicates = 300
axes = { x = { type = "categorical", values = ["c0", "c1"] } }
declare = { outcomes = ["ok", "bad"], failures = ["bad"] }
"""
BASE = 0.4


def sweep(folder: Path, *args: str, **env: str) -> dict:
    command = [str(Path(sys.executable).with_name("poisson-prove")), "sweep", "--yes", "--json", *args]
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env={**os.environ, **env})
    if done.returncode not in (0, 4):
        raise SystemExit(f"sweep failed (exit {done.returncode}): {done.stderr}")
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--wait", type=float, default=0.002, help="seconds per slow episode")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "agent.py").write_text(AGENT)
        (folder / "prove.toml").write_text(SPEC)
        mde = None
        print("rise      speed  spent/fixed (each repetition)        mean   flagged  load")
        for label, times in (("0", 0.0), ("MDE", 1.0), ("2xMDE", 2.0)):
            spent: dict[str, list[float]] = {"fast": [], "slow": []}
            flagged: dict[str, int] = {"fast": 0, "slow": 0}
            same = True
            for rep in range(args.repetitions):
                salt = f"{rep + 1:08x}"
                name = f"b{label}{rep}"
                base = sweep(folder, "--max-mde", "1", "--salt", salt, "--name", name, RATE=str(BASE))
                mde = mde or float(base["design"]["mde"])
                rate = str(BASE + times * mde)
                decisions = {}
                for speed, wait in (("fast", "0"), ("slow", str(args.wait))):
                    run = sweep(
                        folder, "--max-mde", "1", "--pair-with", name, "--stop-when-settled",
                        "--name", f"s{label}{rep}{speed}", RATE=rate, WAIT=wait, FRESH="1",
                    )
                    spent[speed].append(run["counts"]["done"] / run["counts"]["planned"])
                    conditions = run["sequential"]["conditions"].values()
                    flagged[speed] += sum(1 for c in conditions if c["reason"] == "settled")
                    decisions[speed] = [(c["reason"], c["stopped_at"], c["looks"]) for c in conditions]
                same = same and decisions["fast"] == decisions["slow"]
            for speed in ("fast", "slow"):
                shares = " ".join(f"{x:.2f}" for x in spent[speed])
                print(
                    f"{label:<8}  {speed:<5}  {shares:<35}  {statistics.mean(spent[speed]):.2f}   "
                    f"{flagged[speed]:>3}/{2 * args.repetitions}   {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
            print(f"{'':8}  fast and slow made the same decisions: {same}")
        print(f"planned MDE {mde}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
