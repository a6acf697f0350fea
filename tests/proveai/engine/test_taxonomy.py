"""The MAST table as the paper publishes it (Cemri et al., 2025), and what each detection layer assigns."""

from __future__ import annotations

from collections import Counter

from proveai.engine import taxonomy
from proveai.engine.model import LAYERS

# the paper's figure: 14 modes, 5 specification / 6 inter-agent / 3 verification
PAPER_MODES_PER_CATEGORY = {
    "Specification issues": 5, "Inter-agent misalignment": 6, "Task verification": 3,
}


def test_fourteen_modes_in_the_papers_three_categories() -> None:
    assert len(taxonomy.MODES) == 14
    assert Counter(taxonomy.category_of(code) for code in taxonomy.MODES) == PAPER_MODES_PER_CATEGORY
    assert taxonomy.MODES["FM-1.3"] == "Step repetition" and taxonomy.MODES["FM-2.3"] == "Task derailment"
    assert taxonomy.label("FM-3.1") == "FM-3.1 Premature termination"
    assert taxonomy.category_of("FM-9.9") == "" and taxonomy.label("FM-9.9") == "FM-9.9"


def test_each_layer_assigns_one_known_mode_with_its_own_remediation() -> None:
    assert set(taxonomy.LAYER_MODES) <= set(LAYERS)
    assert set(taxonomy.ASSIGNED) <= set(taxonomy.MODES)
    assert len(set(taxonomy.ASSIGNED)) == len(taxonomy.ASSIGNED)  # each layer its own mode
    hints = {code: taxonomy.remediation(code, "researcher", "ran 9 times") for code in taxonomy.ASSIGNED}
    assert all("researcher" in hint and "ran 9 times" in hint for hint in hints.values())
    assert len(set(hints.values())) == len(hints)  # one hint per mode, not one for all
    assert not any(hint.startswith("inspect ") for hint in hints.values())
    assert taxonomy.remediation("FM-2.1", "planner", "it restarted") == "inspect planner: it restarted"
