"""[chaos]: faults injected into the HTTP calls a rollout makes (httpx and httpx2, sync and
async; requests; aiohttp).

- `config` validates the table and names each fault.
- `decide` says, from a keyed hash of (run salt, chaos seed, episode seed, call index, fault
  name), whether a call is faulted: two runs paired with `--pair-with` share the salt and the
  seeds, so they see the same faults on the same calls.
- `inject` patches the transports, active only inside an episode's `chaos_scope`, and records
  each injected fault in the episode's spans (`source: "chaos"`).
- `reach` counts, per episode and per run, the calls that went through a client chaos can
  fault and those a fault hit: a run whose faults reached no call says so, never "injected".
"""

from poisson_prove.chaos.config import SUPPORTED_BACKENDS, check_backend, parse_chaos
from poisson_prove.chaos.inject import chaos_scope

__all__ = ["SUPPORTED_BACKENDS", "chaos_scope", "check_backend", "parse_chaos"]
