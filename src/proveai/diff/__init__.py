"""Comparing an old output with a new one, tier by tier.

tier1 (structural: per-kind rules, text and JSON diff, numbers, volatile tokens), tier2
(embedding similarity and its per-agent calibrated thresholds), judge (tier 3: an LLM judge
through the provider layer), and grading (grade_outputs: the three tiers in order for one
agent's output). Replay's attribution and snapshot verify both grade through here.
"""
