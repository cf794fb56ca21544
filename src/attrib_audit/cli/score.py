"""Engine flags (`--engine`, Ray options, chunking) and the `score` command's streaming/Ray body."""
from __future__ import annotations

import argparse
import sys


def add_engine_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--engine", choices=("local", "ray"), default="local",
                   help="local: this process, streaming in chunks; ray: Ray Data actors (pip install 'attrib-audit[ray]')")
    p.add_argument("--ray-address", default=None,
                   help="Ray cluster to join, e.g. ray://head:10001 or auto (default $RAY_ADDRESS, else a local Ray)")
    p.add_argument("--concurrency", type=int, default=2, help="Ray actors per scorer, each with one model copy (default 2)")
    p.add_argument("--actor-gpus", type=float, default=None,
                   help="GPUs per Ray actor (default 1 when --device cuda, else 0)")


def add_stream_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--chunk-rows", type=int, default=None,
                   help="rows read, scored and written at a time by the local engine (default 16384)")


def _plain_pair_files(args: argparse.Namespace) -> bool:
    """Streaming reads our pair schema directly; named formats and --hf go through their adapters first."""
    from attrib_audit.data.args import PAIRS, resolve_format

    if getattr(args, "hf", None) or not args.data:
        return False
    fmt = getattr(args, "format", "auto")
    return all(resolve_format(fmt, p, lambda *_: None) == PAIRS for p in args.data)


def cmd_score(args: argparse.Namespace) -> int:
    """Local engine on pair files: stream them chunk by chunk. Otherwise: load (adapters, --hf), then score."""
    from attrib_audit.audit import build_scorers, score_table
    from attrib_audit.cli import config_from_args, load_from_args, load_options_from_args
    from attrib_audit.engine.cache import ScoreCache
    from attrib_audit.engine.stream import DEFAULT_CHUNK_ROWS, LoadOptions, ScoreWriter, score_columns, stream_score

    from attrib_audit.outdir import check_out_file

    out = check_out_file(args.out)  # before any model is loaded or pair scored
    config = config_from_args(args)
    scorers, _ = build_scorers(config, log=lambda m: print(m, file=sys.stderr))
    if config.engine == "local" and _plain_pair_files(args):
        cache = ScoreCache(config.cache_path)
        try:
            res = stream_score(args.data, scorers, out, cache=cache, options=LoadOptions(**load_options_from_args(args)),
                               chunk_rows=args.chunk_rows or DEFAULT_CHUNK_ROWS, batch_size=config.batch_size,
                               quiet=config.quiet)
        finally:
            cache.close()
        stats, origin = res.stats, res.origin
    else:
        table = load_from_args(args)
        scores, stats = score_table(table, scorers, config)
        writer = ScoreWriter(out, list(scores))
        writer.write(score_columns(table.ids, scores))
        origin = table.origin
        from attrib_audit import __version__

        writer.close({"tool": {"name": "attrib-audit", "version": __version__},
                      "scorers": {s.scorer: s.signature for s in stats}, "data": origin, "complete": True})
    for s in stats:
        print(f"{s.scorer}: {s.n_pairs} pairs, {s.n_scored} scored anew, {s.n_cached} cached  [{s.signature}]")
    n_skipped = sum(len(o.get("skipped", [])) for o in origin)
    if n_skipped:
        print(f"skipped {n_skipped} bad rows (listed in the output's provenance metadata)", file=sys.stderr)
    print(f"scores: {out}")
    return 0
