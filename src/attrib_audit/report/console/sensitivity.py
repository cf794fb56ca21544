"""The sensitivity section: how much each statistic moves when a judgement call changes."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

from attrib_audit.report import fmt
from attrib_audit.report.console.grid import MISSING, _num, grid, short_names
from attrib_audit.report.console.transfer import signed_ci
from attrib_audit.report.correlations import statistic_label

if TYPE_CHECKING:  # the records' module imports the statistics (scipy), which `--help` must not load
    from attrib_audit.audit.sensitivity import (
        ChunkRow,
        HalfScorer,
        LodoDrop,
        SensitivitySection,
        VerdictChange,
        WindowRow,
    )


def _diff(r: WindowRow | ChunkRow | HalfScorer) -> str:
    return signed_ci(r.diff, r.ci_low, r.ci_high) + (" *" if not math.isnan(r.diff) and r.excludes_zero else "")


def _changed(v: VerdictChange | LodoDrop) -> list[str]:
    flags = (("recommended", v.recommended_changed), ("verdict", v.verdict_changed),
             ("portability", v.portability_changed))
    return [k for k, on in flags if on]


def _verdict_lines(rows: Sequence[VerdictChange], what: str) -> list[str]:
    out = []
    for v in rows:
        b, a = v.before, v.after
        flags = _changed(v)
        out.append(f"  {v.construct}{' (' + str(v.scorer) + ' → ' + str(v.chunked) + ')' if v.chunked else ''}: "
                   f"{b.recommended} [{b.verdict}] → {a.recommended} [{a.verdict}]; portable "
                   f"{', '.join(b.portable) or 'none'} → {', '.join(a.portable) or 'none'}; "
                   + (f"CHANGED ({', '.join(flags)})" if flags else f"unchanged {what}"))
    return out


def format_sensitivity(sen: SensitivitySection) -> str:
    """The sensitivity detail: window, chunking, matched length, halves, single datasets, exchangeability."""
    out = ["== sensitivity: length, truncation and single-dataset robustness (* = 95% CI excludes 0) =="]
    if sen.statistic:  # a graded --statistic: which parts use it
        out.append(f"note: {sen.notes[-1]}")
    w = sen.window
    if w:
        out.append(f"Window sensitivity: scorers rescored at {w.window} tokens (AUROC at own window → at "
                   f"{w.window}; alt − own [95% CI]; pairs cut own → alt):")
        if w.rows:
            out += grid(["slice", "scorer", "own", f"@{w.window}", "difference", "cut"],
                        [[r.slice, r.scorer, _num(r.auroc), _num(r.auroc_alt), _diff(r),
                          f"{r.pairs_truncated} → {r.pairs_truncated_alt}"] for r in w.rows], indent="  ")
        for x in w.skipped:
            out.append(f"  not varied: {x.scorer} ({x.reason})")
        flips = [r for r in w.ranking if r.changed]
        out.append("  metric ranking changed on: " + ("; ".join(
            f"{r.slice} ({' > '.join(r.ranking)} → {' > '.join(r.ranking_alt)})" for r in flips)
            if flips else "no slice"))
        out += _verdict_lines(w.verdicts, f"at {w.window} tokens")
    ch = sen.chunking
    if ch:
        out.append("Chunked long evidence (chunked − truncated AUROC [95% CI]; pairs cut truncated → chunked; "
                   "windows per pair):")
        out += grid(["slice", "scorer", "truncated", "chunked", "difference", "cut", "windows"],
                    [[r.slice, f"{r.scorer} → {r.chunked}", _num(r.auroc), _num(r.auroc_chunked),
                      _diff(r), f"{r.pairs_truncated} → {r.pairs_truncated_chunked}", f"{r.mean_chunks:.2f}"]
                     for r in ch.rows], indent="  ")
        out.append("  verdict with the chunked variant in place of the truncated one:")
        out += _verdict_lines(ch.verdicts, "with chunking")
    ln = sen.length
    for b in ln.bins:
        e = b.edges
        labels = [f"{e[j]:.0f}–{e[j + 1]:.0f}" if len(e) > 1 else f"{e[0]:.0f}" for j in range(b.n_bins)]
        out.append(f"Matched length, construct '{b.construct}': AUROC (n) per bin of evidence words, bins shared "
                   f"by its datasets ({', '.join(labels)}):")
        cell = {(c.dataset, c.scorer, c.bin): c for c in b.cells}
        short = short_names(list(dict.fromkeys(c.dataset for c in b.cells)))
        out += grid(["dataset", "scorer", *labels],
                    [[short[d], s, *(f"{_num(cell[(d, s, j)].auroc)} ({cell[(d, s, j)].n})"
                                     for j in range(b.n_bins))]
                     for d, s in dict.fromkeys((c.dataset, c.scorer) for c in b.cells)], indent="  ")
        out.append("  best per bin: " + "; ".join(
            f"{labels[x.bin]}: " + (", ".join(f"{short[d]}→{m}" for d, m in x.best_per_dataset.items()) or "none")
            + (" (same on all)" if x.same_best and x.best_per_dataset else "") for x in b.best))
    out.append("Short vs long halves (split at each slice's median evidence words): long − short AUROC [95% CI]:")
    names = [s.scorer for s in ln.halves[0].scorers] if ln.halves else []
    out += grid(["slice", "median", "best short→long", *names],
                [[h.slice, f"{h.median_words:.0f}", f"{h.best_short}→{h.best_long}",
                  *(_diff(s) for s in h.scorers)] for h in ln.halves], indent="  ")
    for lo in sen.lodo:
        if lo.status != "ok" or lo.full is None:
            out.append(f"Leave-one-dataset-out verdict, '{lo.construct}': not computed ({lo.reason})")
            continue
        f = lo.full
        by = f" by {statistic_label(lo.statistic)}" if lo.statistic else ""
        out.append(f"Leave-one-dataset-out verdict{by}, '{lo.construct}': all datasets → {f.recommended} "
                   f"[{f.verdict}], portable {', '.join(f.portable) or 'none'}; "
                   + ("stable under every drop" if lo.stable else "CHANGES when a dataset is dropped"))
        out += grid(["dropped", "recommended", "verdict", "portable", "changed"],
                    [[d.dropped, str(d.outcome.recommended), d.outcome.verdict,
                      ", ".join(d.outcome.portable) or "none", ", ".join(_changed(d)) or MISSING]
                     for d in lo.drops or []], indent="  ")
    for ex in sen.exchangeability:
        out.append(f"Exchangeability permutation of dataset assignment, '{ex.construct}' (clusters shuffled across "
                   f"datasets, {ex.test.n_perm} permutations): p_interaction = {fmt.pvalue(ex.test.p_interaction)}, "
                   f"p_dataset = {fmt.pvalue(ex.test.p_dataset)}; residual permutation p_interaction = "
                   f"{fmt.pvalue(ex.p_interaction_residual)}")
        out.append(f"  caveat: {ex.caveat}")
    sp = sen.length_spearman
    if sp:
        names = list(dict.fromkeys(r.scorer for r in sp))
        rho = {(r.slice, r.scorer): r for r in sp}
        out.append("Spearman ρ of score with evidence words within each label class (label 0 / label 1):")
        out += grid(["slice", *names],
                    [[sl, *(f"{_num(rho[(sl, n)].rho_neg, 2)} / {_num(rho[(sl, n)].rho_pos, 2)}"
                            for n in names)] for sl in dict.fromkeys(r.slice for r in sp)],
                    indent="  ")
    return "\n".join(out)
