"""Which metric a construct's saved transfer statistics point to: the one rule the report's headline and the
terminal both state (the portable metric with the lowest held-out regret; without one, the lowest-regret metric).

It chooses among recorded numbers only; nothing is recomputed.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pick:
    metric: str
    portable: bool  # within the best metric's 95% CI on every dataset
    paired: bool  # also under the stricter paired test
    regret: dict  # the metric's `regret.fixed` row: mean, ci_low, ci_high, max, worst_dataset
    others: list[str]  # the other portable metrics


def pick(e: dict) -> Pick:
    """The metric to use for a construct whose transfer entry (`transfer.constructs[c]`, status ok) is `e`."""
    fixed = {f["metric"]: f for f in e["regret"]["fixed"]}
    portable = [p["metric"] for p in e["portability"] if p["portable"]]
    paired = [p["metric"] for p in e["portability"] if p["paired_portable"]]
    if portable:
        m = min(portable, key=lambda x: fixed[x]["mean"]) if all(x in fixed for x in portable) else portable[0]
    else:
        m = e["regret"]["lowest_regret_metric"]
    return Pick(m, bool(portable), m in paired, fixed[m], [x for x in portable if x != m])
