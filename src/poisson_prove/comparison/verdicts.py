"""From per-outcome test results to words: each condition's verdict and the headline.

An outcome's test says "rose", "fell", "no change" or "not tested"; whether a rise is bad
depends on the outcome (a failure rising is worse, a success rising is safer). A condition is
"worse" when some failure rose or success fell, "safer" for the reverse, "trade" for both, and
the headline applies the same rule over every condition (STATISTICS.md, section 5).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from poisson_prove.comparison.result import ConditionResult, Headline, HeadlineCount, OutcomeResult


@dataclass(frozen=True)
class Verdicts:
    conditions: tuple[ConditionResult, ...]
    headline: Headline
    warnings: tuple[str, ...]  # a condition not tested, and each outcome row's note


def _word(bad: bool, good: bool) -> str:
    return "trade" if bad and good else "worse" if bad else "safer" if good else "no change"


def decide_verdicts(
    results: Mapping[int, Sequence[OutcomeResult]],
    keys: Sequence[str],
    labels: Sequence[str],
    compared: Sequence[bool],
    events: Sequence[str],
    adverse: Sequence[bool],
) -> Verdicts:
    """Each compared condition's verdict (in `keys` order) and the headline over them.

    `compared[i]`: condition i ran in both runs; `adverse[j]`: a rise of event j is bad.
    """
    conditions: list[ConditionResult] = []
    warnings: list[str] = []
    # per event: conditions where it moved for the better, for the worse
    counts = {name: [0, 0] for name in events}
    for i, key in enumerate(keys):
        if not compared[i]:
            continue
        rows = results[i]
        rose = tuple(r.outcome for r in rows if r.verdict == "rose")
        fell = tuple(r.outcome for r in rows if r.verdict == "fell")
        moves = list(zip(rows, adverse, strict=True))
        bad = [r.outcome for r, harm in moves if r.verdict == ("rose" if harm else "fell")]
        good = [r.outcome for r, harm in moves if r.verdict == ("fell" if harm else "rose")]
        for name in bad:
            counts[name][1] += 1
        for name in good:
            counts[name][0] += 1
        if not bad and not good and all(r.verdict == "not tested" for r in rows):
            verdict = "not tested"
            warnings.append(
                f"condition {labels[i]} has no episode with an outcome in one run; it is not tested"
            )
        else:
            verdict = _word(bool(bad), bool(good))
        conditions.append(ConditionResult(key, labels[i], verdict, fell, rose, tuple(rows)))
        warnings.extend(f"condition {labels[i]}, {r.outcome}: {r.note}" for r in rows if r.note)
    word = _word(any(c[1] for c in counts.values()), any(c[0] for c in counts.values()))
    headline = Headline(word, tuple(HeadlineCount(n, safer, worse) for n, (safer, worse) in counts.items()))
    return Verdicts(tuple(conditions), headline, tuple(warnings))
