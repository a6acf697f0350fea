"""Run salts and per-episode seeds: a keyed hash of (salt, condition key, replicate).

`episode_seeds` is the one implementation (the sweep's plan, the importers and every reader
that checks a stored seed use it); `episode_seed` is its one-replicate form.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable

SEED_BOUND = 2**31  # below this every RNG and model API accepts the seed; a power of two
_SALT_RE = re.compile(r"^[0-9a-f]{8,64}$")


def new_salt() -> str:
    """A fresh run salt: 32 lowercase hex digits."""
    return secrets.token_hex(16)


def check_salt(salt: str) -> str:
    """Return the salt normalised to lowercase, or raise ValueError if it is not 8-64 hex digits."""
    normalised = salt.strip().lower()
    if not _SALT_RE.match(normalised) or len(normalised) % 2:
        raise ValueError(f"salt {salt!r} is not an even number (8 to 64) of hex digits")
    return normalised


def episode_seeds(salt: str, condition: str, replicates: Iterable[int]) -> list[int]:
    """The seeds of these replicates of one condition: BLAKE2b-64 keyed by the salt over
    `condition + "\\x1f" + str(replicate)`, mod 2^31.

    The keyed prefix (salt, condition, separator) is hashed once and copied per replicate: a
    large sweep derives its seeds a block of replicates at a time. Stable across versions: a
    golden test pins it.
    """
    prefix = hashlib.blake2b(digest_size=8, key=bytes.fromhex(salt))
    prefix.update(f"{condition}\x1f".encode())
    copy, from_bytes, mask = prefix.copy, int.from_bytes, SEED_BOUND - 1
    out: list[int] = []
    append = out.append
    for replicate in replicates:
        h = copy()
        h.update(b"%d" % replicate)  # the same bytes as str(replicate).encode(), faster
        append(from_bytes(h.digest(), "big") & mask)  # == % SEED_BOUND (a power of two)
    return out


def episode_seed(salt: str, condition: str, replicate: int) -> int:
    """The seed of one episode (`episode_seeds` for one replicate)."""
    return episode_seeds(salt, condition, (replicate,))[0]
