"""The chat messages the provider tests send."""

from __future__ import annotations

MESSAGES = [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Classify: broken order"}]
