"""Run salts and per-episode seeds: a keyed hash of (salt, condition key, replicate)."""

from __future__ import annotations

import hashlib
import re
import secrets

SEED_BOUND = 2**31  # below this every RNG and model API accepts the seed
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


def episode_seed(salt: str, condition: str, replicate: int) -> int:
    """The seed of one episode: BLAKE2b keyed by the salt over (condition key, replicate).

    Stable across versions: a golden test pins it.
    """
    digest = hashlib.blake2b(
        f"{condition}\x1f{replicate}".encode(), digest_size=8, key=bytes.fromhex(salt)
    ).digest()
    return int.from_bytes(digest, "big") % SEED_BOUND
