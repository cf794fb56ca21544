"""`attrib-audit score`: score pair files and write the scores only (streamed chunk by chunk, or on Ray)."""
from __future__ import annotations

import argparse
import sys

from attrib_audit import __version__
from attrib_audit.cli.convert import config_from_args, data_from_args, log_for
from attrib_audit.cli.options import add_data_args, add_scoring_args, add_stream_args
from attrib_audit.data.adapters import PAIRS
from attrib_audit.data.adapters.load import resolve_format
from attrib_audit.data.sources import DataSpec, load_data
from attrib_audit.engine.cache import ScoreCache
from attrib_audit.engine.stream import DEFAULT_CHUNK_ROWS, ScoreWriter, score_columns, stream_score
from attrib_audit.engine.table import build_scorers, no_scorer_ran, score_table
from attrib_audit.files.outdir import check_out_file
from attrib_audit.files.records import to_record


def _plain_pair_files(data: DataSpec) -> bool:
    """Streaming reads our pair schema directly; named formats and --hf go through their adapters first."""
    if data.hf is not None or not data.files:
        return False
    return all(resolve_format(data.format, f.path, lambda *_: None) == PAIRS for f in data.files)


def cmd_score(args: argparse.Namespace) -> int:
    """Local engine on pair files: stream them chunk by chunk. Otherwise: load (adapters, --hf), then score."""
    out = check_out_file(args.out)  # before any model is loaded or pair scored
    config = config_from_args(args)
    data = data_from_args(args)
    skips: list[str] = []
    scorers, unavailable = build_scorers(config, log=skips.append)
    if not scorers:  # nothing to score: no output (one line naming each scorer and why), not an empty score file
        raise no_scorer_ran(unavailable)
    for line in skips:  # some scorers run: the others are skipped with a note
        print(line, file=sys.stderr)
    if config.engine == "local" and _plain_pair_files(data):
        cache = ScoreCache(config.cache_path)
        try:
            res = stream_score(args.data, scorers, out, cache=cache, data=data,
                               chunk_rows=args.chunk_rows or DEFAULT_CHUNK_ROWS, batch_size=config.batch_size,
                               quiet=config.quiet)
        finally:
            cache.close()
        stats, origin = res.stats, res.origin
    else:
        table = load_data(data, log=log_for(args))
        scores, stats = score_table(table, scorers, config)
        writer = ScoreWriter(out, list(scores))
        writer.write(score_columns(table.ids, scores))
        origin = table.origin
        writer.close({"tool": {"name": "attrib-audit", "version": __version__},
                      "scorers": {s.scorer: s.signature for s in stats}, "data": to_record(origin),
                      "complete": True})
    for s in stats:
        print(f"{s.scorer}: {s.n_pairs} pairs, {s.n_scored} scored anew, {s.n_cached} cached  [{s.signature}]")
    n_skipped = sum(len(o.skipped) for o in origin)
    if n_skipped:
        print(f"skipped {n_skipped} bad rows (listed in the output's provenance metadata)", file=sys.stderr)
    print(f"scores: {out}")
    return 0


def add_score(sub) -> None:
    p = sub.add_parser("score", help="score a file and write the scores only")
    add_data_args(p)
    add_scoring_args(p, "lexical")
    p.add_argument("--out", required=True, help="output .parquet or .csv")
    add_stream_args(p)
    p.set_defaults(func=cmd_score)
