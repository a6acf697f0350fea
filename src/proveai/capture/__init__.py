"""Capture: @monitor spans grouped by a Trace, labelled by checks, written by exporters.

`LiveTrace` (capture.trace) is the live session `proveai.trace()` returns, a subclass of the
record `proveai.Trace`; imported on first use (`prove_common.lazy`), like the package's map.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prove_common.lazy import lazy_exports

if TYPE_CHECKING:
    from proveai.capture.trace import LiveTrace

__all__ = ["LiveTrace"]

__getattr__, __dir__ = lazy_exports(__name__, {"LiveTrace": "proveai.capture.trace:LiveTrace"})
