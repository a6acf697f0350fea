"""The aggregate agent graph of a report: nodes laid out by depth, edges coloured by regression rate."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

NODE_W, NODE_H = 150, 36
COL_GAP, ROW_GAP = 90, 26
MARGIN = 24


@dataclass(frozen=True)
class GraphNode:
    name: str
    label: str
    x: int
    y: int


@dataclass(frozen=True)
class GraphEdge:
    parent: str
    child: str
    path: str  # SVG path data
    color: str
    rate: float
    regressed: int
    total: int
    label_x: int
    label_y: int


@dataclass(frozen=True)
class AgentGraph:
    width: int
    height: int
    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]


def rate_color(rate: float) -> str:
    """Green (no regression) through amber to red (every run regressed)."""
    rate = min(1.0, max(0.0, rate))
    stops = ((0.0, (46, 125, 50)), (0.5, (239, 160, 0)), (1.0, (198, 40, 40)))
    for (r0, c0), (r1, c1) in pairwise(stops):
        if rate <= r1:
            t = (rate - r0) / (r1 - r0)
            rgb = tuple(round(a + (b - a) * t) for a, b in zip(c0, c1, strict=True))
            return "#{:02x}{:02x}{:02x}".format(*rgb)
    return "#c62828"


def build_graph(verdicts: Iterable[tuple[str | None, str, str]]) -> AgentGraph:
    """Aggregate the (parent, child, status) of every verdict of every trace over their
    (parent, child) edges; roots at depth 0."""
    counts: dict[tuple[str | None, str], list[int]] = defaultdict(lambda: [0, 0])
    for parent, child, status in verdicts:
        key = (parent, child)
        counts[key][1] += 1
        if status == "regressed":
            counts[key][0] += 1
    agents: list[str] = []
    for parent, child in counts:
        for name in (parent, child):
            if name is not None and name not in agents:
                agents.append(name)
    children: dict[str | None, list[str]] = defaultdict(list)
    for parent, child in counts:
        children[parent].append(child)
    has_parent = {child for parent, child in counts if parent is not None}
    depth: dict[str, int] = {}
    queue = deque((a, 0) for a in agents if a not in has_parent)
    while queue:
        name, d = queue.popleft()
        if name in depth:
            continue
        depth[name] = d
        queue.extend((c, d + 1) for c in children.get(name, ()) if c not in depth)
    for name in agents:  # cycles without a root: put them after the deepest known node
        depth.setdefault(name, max(depth.values(), default=-1) + 1)
    columns: dict[int, list[str]] = defaultdict(list)
    for name in agents:
        columns[depth[name]].append(name)
    positions: dict[str, tuple[int, int]] = {}
    for col, names in columns.items():
        for row, name in enumerate(names):
            positions[name] = (MARGIN + col * (NODE_W + COL_GAP), MARGIN + row * (NODE_H + ROW_GAP))
    nodes = tuple(
        GraphNode(name, name if len(name) <= 20 else name[:19] + "…", *positions[name]) for name in agents
    )
    edges = []
    for (parent, child), (regressed, total) in counts.items():
        if parent is None:
            continue
        (px, py), (cx, cy) = positions[parent], positions[child]
        x1, y1 = px + NODE_W, py + NODE_H // 2
        x2, y2 = cx, cy + NODE_H // 2
        if x2 <= x1:  # same or earlier column: loop around below
            x1, x2 = px + NODE_W // 2, cx + NODE_W // 2
            y1, y2 = py + NODE_H, cy + NODE_H
            bend = max(y1, y2) + 30
            path = f"M{x1},{y1} C{x1},{bend} {x2},{bend} {x2},{y2}"
        else:
            mid = (x1 + x2) // 2
            path = f"M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}"
        rate = regressed / total if total else 0.0
        edges.append(
            GraphEdge(
                parent,
                child,
                path,
                rate_color(rate),
                rate,
                regressed,
                total,
                (x1 + x2) // 2,
                (y1 + y2) // 2 - 6,
            )
        )
    width = MARGIN * 2 + (max(columns, default=0) + 1) * (NODE_W + COL_GAP) - COL_GAP
    rows = max((len(v) for v in columns.values()), default=1)
    loops = any(e.path.count("C") and positions[e.child][0] <= positions[e.parent][0] for e in edges)
    height = MARGIN * 2 + rows * (NODE_H + ROW_GAP) - ROW_GAP + (40 if loops else 0)  # loops bend below
    return AgentGraph(width, height, nodes, tuple(edges))
