"""Statistics room: pure numpy functions, no I/O, no global RNG."""
from attrib_audit.stats.auroc import auroc, average_ranks, cluster_auroc, ht_auroc, weighted_auroc
from attrib_audit.stats.bootstrap import (
    DEFAULT_B,
    AlignedAUROC,
    BootstrapAUROC,
    bootstrap_aurocs,
    cluster_count_blocks,
    cluster_weight_blocks,
    clustered_auroc_ci,
    group_codes,
    paired_auroc_difference,
    paired_difference,
    percentile_ci,
    slice_rng,
)
from attrib_audit.stats.types import Estimate

__all__ = ["DEFAULT_B", "AlignedAUROC", "BootstrapAUROC", "Estimate", "auroc", "average_ranks", "bootstrap_aurocs",
           "cluster_auroc", "cluster_count_blocks", "cluster_weight_blocks", "clustered_auroc_ci",
           "group_codes", "ht_auroc", "paired_auroc_difference",
           "paired_difference", "percentile_ci", "slice_rng", "weighted_auroc"]
