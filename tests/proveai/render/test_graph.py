"""The report's agent graph: edges aggregated over traces, nodes laid out by depth, colour by rate."""

from __future__ import annotations

from proveai.render.graph import COL_GAP, NODE_W, build_graph, rate_color


def runs(*edges: tuple[str | None, str, list[str]]) -> list[tuple[str | None, str, str]]:
    """One (parent, child, status) per trace for each (parent, child, [its status in each trace])."""
    return [(parent, child, status) for parent, child, statuses in edges for status in statuses]


def test_edges_are_counted_over_every_trace_and_coloured_by_their_regression_rate() -> None:
    graph = build_graph(runs(
        (None, "plan", ["unchanged"] * 3),
        ("plan", "research", ["regressed", "unchanged", "unchanged"]),
        ("plan", "draft", ["drifted"] * 3),
        ("research", "draft", ["regressed"] * 3),
    ))
    edges = {(e.parent, e.child): e for e in graph.edges}
    # the root has no incoming edge to draw
    assert set(edges) == {("plan", "research"), ("plan", "draft"), ("research", "draft")}
    assert (edges["plan", "research"].regressed, edges["plan", "research"].total) == (1, 3)
    assert edges["plan", "draft"].rate == 0.0 and edges["plan", "draft"].color == "#2e7d32"
    assert edges["research", "draft"].rate == 1.0 and edges["research", "draft"].color == "#c62828"
    x = {node.name: node.x for node in graph.nodes}
    # depth is the shortest way from a root: draft sits beside research, one column after plan
    assert x["research"] == x["draft"] == x["plan"] + NODE_W + COL_GAP
    assert graph.width >= max(x.values()) + NODE_W


def test_a_loop_back_bends_below_and_makes_room() -> None:
    straight = build_graph(runs((None, "draft", ["unchanged"]), ("draft", "review", ["unchanged"])))
    looped = build_graph(runs(
        (None, "draft", ["unchanged"]),
        ("draft", "review", ["unchanged"]),
        ("review", "draft", ["regressed"]),
    ))
    back = next(e for e in looped.edges if (e.parent, e.child) == ("review", "draft"))
    bend = int(back.path.split()[1].split(",")[1])
    assert bend > max(node.y for node in looped.nodes)  # the curve passes under the nodes
    assert looped.height == straight.height + 40


def test_rate_colour_runs_green_amber_red_and_clamps() -> None:
    assert [rate_color(r) for r in (0.0, 0.5, 1.0)] == ["#2e7d32", "#efa000", "#c62828"]
    assert rate_color(-1) == rate_color(0.0) and rate_color(7) == rate_color(1.0)
    assert rate_color(0.25) not in {rate_color(0.0), rate_color(0.5)}


def test_long_agent_names_are_shortened_on_the_node_only() -> None:
    name = "a_very_long_agent_name_for_the_refund_flow"
    (node,) = build_graph([(None, name, "unchanged")]).nodes
    assert node.name == name and node.label == name[:19] + "…" and len(node.label) == 20
