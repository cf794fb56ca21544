"""`attrib-audit cache`: what the embedding cache beside the score cache holds, its size bound, and clearing it."""
from __future__ import annotations

import argparse

from attrib_audit.engine.cache import EmbeddingCache, embeddings_path
from attrib_audit.errors import UsageError
from attrib_audit.files.paths import default_cache_path

_MIB = 2**20


def cmd_cache(args: argparse.Namespace) -> int:
    path = embeddings_path(args.cache or default_cache_path())
    if args.action == "limit" and args.mib < 0:
        raise UsageError(f"cache limit takes a size in MiB >= 0, got {args.mib}")
    with EmbeddingCache(path) as store:
        if args.action == "clear":
            print(f"cleared {store.clear()} vectors from {path}")
            return 0
        if args.action == "limit":
            store.set_max_bytes(int(args.mib * _MIB))
        usage = store.usage()
        total = sum(u.bytes for u in usage)
        print(f"embedding cache {path}")
        print(f"  {sum(u.vectors for u in usage)} vectors, {total / _MIB:.1f} MiB of {store.max_bytes / _MIB:.1f} MiB "
              "(float32; least recently used dropped first)")
        for u in usage:
            print(f"  {u.vectors:>8} vectors {u.bytes / _MIB:>8.1f} MiB  {u.encoder}")
    return 0


def add_cache(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cache", help="show, bound or clear the embedding cache kept beside the score cache")
    csub = p.add_subparsers(dest="action", required=True)
    for name, text in (("show", "vectors and bytes held per encoder, and the size bound"),
                       ("clear", "drop every cached vector (scores stay)"),
                       ("limit", "set the size bound in MiB (the least recently used vectors go first)")):
        c = csub.add_parser(name, help=text)
        if name == "limit":
            c.add_argument("mib", type=float, help="the bound in MiB, e.g. 256")
        c.add_argument("--cache", help="the score cache the embedding cache sits beside (default $ATTRIB_AUDIT_CACHE "
                                       "or ~/.cache/attrib_audit/scores.sqlite)")
    p.set_defaults(func=cmd_cache)
