"""Code examples read from the docs pages themselves, so a change in the docs reaches the tests.

A page marks a runnable example with an HTML comment right above its fenced block:

    <!-- snippet: quick-start -->
    ```python
    ...
    ```
"""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def snippet(page: str, name: str) -> str:
    """The code of the block marked `name` on docs/`page`."""
    text = (DOCS / page).read_text(encoding="utf-8")
    found = re.search(rf"<!-- snippet: {re.escape(name)} -->\n```python\n(.*?)```", text, re.S)
    if found is None:
        raise LookupError(f"docs/{page} has no python block marked <!-- snippet: {name} -->")
    return found.group(1)
