"""AuditConfig: how `run_audit` scores and bootstraps; the Python face of a run spec plus this machine's settings."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from attrib_audit.stats.bootstrap import DEFAULT_B

DEFAULT_SCORERS = ("lexical", "minilm", "blend", "bertscore")
# `select`: a metric within this AUROC of the best counts as tied (here, not in select.py, so the parser needs no scipy)
DEFAULT_EPS = 0.02
# what the transfer statistics compare metrics by: the AUROC against the binary label, or a correlation with a
# graded rating (all rows; partial: controlling for the system); here so the parser needs no scipy
TRANSFER_STATISTICS = ("auroc", "pearson", "spearman", "kendall", "partial-pearson", "partial-spearman")
STATISTIC_LABELS = {"auroc": "AUROC", "pearson": "Pearson r", "spearman": "Spearman ρ", "kendall": "Kendall τ-b",
                    "partial-pearson": "partial Pearson r (by system)",
                    "partial-spearman": "partial Spearman ρ (by system)"}


@dataclass(kw_only=True)
class AuditConfig:
    """How `run_audit` scores and bootstraps: the statistics of a run spec plus this machine's settings (device,
    cache, engine), which a spec never holds. Every field has the command line's default."""

    scorers: tuple[str, ...] = DEFAULT_SCORERS
    slice_by: str = "dataset"
    n_boot: int = DEFAULT_B
    seed: int = 0
    batch_size: int | None = None
    device: str = "cpu"
    cache_path: str | None = None  # None: the default cache; ":memory:" disables persistence
    scorer_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    quiet: bool = False
    n_perm: int = 10_000  # permutations for the transfer section's W and decomposition tests
    level: float = 0.95  # coverage of the per-slice AUROC and paired-difference CIs
    engine: str = "local"  # "local" or "ray" (engine.ray_engine)
    ray: Any = None  # engine.ray_engine.RayOptions for engine="ray"; None: defaults
    window_sensitivity: int | None = None  # rescore every scorer with a token window at this window (sensitivity)
    system_resample: tuple[str, ...] = ("inputs",)  # system level: ("inputs",) or ("inputs", "systems")
    statistic: str = "auroc"  # the transfer statistic: one of TRANSFER_STATISTICS
    # metrics computed elsewhere, name → external.ScoreSource (plain, what the CLI records), scores in table
    # order (numpy/pandas/pyarrow), a mapping id → score, or an external.Precomputed; see docs/how-to/own-metric.md
    precomputed: dict[str, Any] = field(default_factory=dict)
    on_error: str = "fail"  # a precomputed score for an unknown id, or a pair without one: fail names it; skip counts

    def factory_options(self, name: str) -> dict[str, Any]:
        """What `get_scorer(name, ...)` is called with; the Ray actors build their scorer from the same."""
        return {"device": self.device, **self.scorer_options.get(name, {})}
