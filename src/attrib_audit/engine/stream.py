"""Streaming scoring: read, validate, score and write in chunks, so memory stays bounded at any input size.

Parquet is read with pyarrow `iter_batches` and validated column-wise (`data.columnar`); JSONL is read
line by line; CSV/TSV go through the ordinary loader (pandas needs the whole file for quoting). A chunk
the column-wise check cannot vouch for, and every JSONL/CSV chunk, is validated by the same
`rows_to_records` as `load_pairs` (rows numbered as in the file). Each chunk is scored by `score_pairs`
with the cache and appended to the output, so only one chunk of pairs is ever held in memory.
"""
from __future__ import annotations

import gc
import json
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from attrib_audit import __version__
from attrib_audit.data.columnar import batch_to_table
from attrib_audit.data.errors import DataError
from attrib_audit.data.loaders import iter_rows, rows_to_records
from attrib_audit.data.origin import DataEntry, LoadOptions, PairsFile, SkippedRow
from attrib_audit.data.records import PairTable
from attrib_audit.data.sources import DataSpec
from attrib_audit.engine.cache import ScoreCache
from attrib_audit.engine.gate import check_before_long_run
from attrib_audit.engine.runner import RunStats, score_pairs
from attrib_audit.files.hashing import file_sha256
from attrib_audit.files.outdir import StagedFile, write_text_atomic
from attrib_audit.files.records import to_record
from attrib_audit.scorers.base import ScoreBatch, Scorer

DEFAULT_CHUNK_ROWS = 16_384


@dataclass
class StreamResult:
    n_rows: int
    n_chunks: int
    stats: list[RunStats]
    origin: list[DataEntry] = field(default_factory=list)


def _raw_chunks(path: Path, chunk_rows: int,
                skipped: list[SkippedRow] | None) -> Iterator[list[tuple[int, dict]] | tuple]:
    """Lists of (row number, row) for JSONL/CSV; for Parquet (first row number, record batch) pairs."""
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        try:
            pf = pq.ParquetFile(path)
        except Exception as exc:  # arrow raises several types for a non-Parquet file
            raise DataError(f"cannot read parquet: {exc}", path=str(path)) from None
        row = 1
        for batch in pf.iter_batches(batch_size=chunk_rows):
            yield row, batch
            row += batch.num_rows
        return
    rows = iter_rows(path, skipped)
    while chunk := list(islice(rows, chunk_rows)):
        yield chunk


def _batch_rows(first_row: int, batch: Any) -> list[tuple[int, dict]]:
    names = batch.schema.names  # column-wise to_pylist: cheaper than RecordBatch.to_pylist
    return list(enumerate((dict(zip(names, vals)) for vals in zip(*(c.to_pylist() for c in batch.columns))),
                          start=first_row))


def iter_tables(paths: Iterable[str | Path], data: DataSpec | None = None,
                chunk_rows: int = DEFAULT_CHUNK_ROWS, origin: list[DataEntry] | None = None) -> Iterator[PairTable]:
    """Validated PairTables of at most `chunk_rows` rows; ids are checked unique across all files.

    `origin`, if given, receives one entry per file (path, sha256, rows, load options, skipped rows)
    as that file finishes, in the same form as `load_pairs` writes.
    """
    opt = data or DataSpec()
    seen_ids: dict[str, tuple[str, int]] = {}
    for p in map(Path, paths):
        if not p.exists():
            raise DataError("file not found", path=str(p))
        skipped: list[SkippedRow] | None = [] if opt.on_error == "skip" else None
        n = 0
        for raw in _raw_chunks(p, chunk_rows, skipped):
            if isinstance(raw, tuple):  # a Parquet batch: column-wise unless a row needs a closer look
                table = batch_to_table(raw[1], first_row=raw[0], path=str(p), columns=opt.columns,
                                       label_map=opt.label_map, dataset=opt.dataset, construct=opt.construct,
                                       seen_ids=seen_ids)
                if table is not None:
                    n += len(table)
                    yield table
                    continue
                raw = _batch_rows(*raw)
            before = len(skipped) if skipped is not None else 0
            try:
                recs = rows_to_records(raw, path=str(p), columns=opt.columns, label_map=opt.label_map,
                                       dataset=opt.dataset, construct=opt.construct, skipped=skipped,
                                       seen_ids=seen_ids)
            except DataError as exc:
                # rows_to_records refuses an empty result; a chunk whose rows were all skipped is not an error
                if exc.row is not None or skipped is None or len(skipped) - before != len(raw):
                    raise
                continue
            n += len(recs)
            yield PairTable.from_records(recs)
        if n == 0:
            raise DataError("no rows", path=str(p))
        if origin is not None:
            load = LoadOptions(columns=dict(opt.columns or {}),
                               label_map=dict(opt.label_map) if opt.label_map else None,
                               dataset=opt.dataset, construct=opt.construct, on_error=opt.on_error)
            origin.append(PairsFile(path=str(p), sha256=file_sha256(p), rows=n, load=load,
                                    skipped=tuple(skipped or ())))


def score_columns(ids: list[str], scores: Mapping[str, ScoreBatch]) -> dict[str, Any]:
    """The `score` command's output columns (lists or arrays): id, then per scorer its score, truncation and
    failure."""
    cols: dict[str, Any] = {"id": ids}
    for name, batch in scores.items():
        cols[name] = batch.scores
        cols[f"{name}__truncated_tokens"] = batch.truncated_tokens
        cols[f"{name}__failure"] = batch.failures
    return cols


class ScoreWriter:
    """Appends score chunks to one Parquet (or CSV) file.

    Provenance (tool version, signatures, data hashes, skipped rows) goes into the Parquet footer
    under key `attrib_audit`, or for CSV into `<out>.provenance.json` beside it.
    """

    def __init__(self, out: str | Path, scorer_names: list[str], inputs: Iterable[str | Path] = ()) -> None:
        import pyarrow as pa

        self.out = Path(out)
        self._staged = StagedFile(self.out, inputs=inputs)  # written beside `out`, moved into place whole by close()
        self.csv = self.out.suffix.lower() == ".csv"
        fields = [pa.field("id", pa.string())]
        for name in scorer_names:
            fields += [pa.field(name, pa.float64()), pa.field(f"{name}__truncated_tokens", pa.int64()),
                       pa.field(f"{name}__failure", pa.string())]
        self.schema = pa.schema(fields)
        self._writer: Any = None  # a pyarrow ParquetWriter once the first Parquet chunk is written
        self._first = True

    def write(self, cols: dict[str, Any]) -> None:
        import pyarrow as pa

        table = pa.Table.from_pydict(cols, schema=self.schema)
        if self.csv:
            table.to_pandas().to_csv(self._staged.tmp, index=False, mode="w" if self._first else "a",
                                     header=self._first)
        else:
            if self._writer is None:
                import pyarrow.parquet as pq

                self._writer = pq.ParquetWriter(self._staged.tmp, self.schema)
            self._writer.write_table(table)
        self._first = False

    def close(self, provenance: dict | None = None, publish: bool = True) -> None:
        """Finish the file and move it into place; `publish=False` (a failed run) leaves no partial file."""
        text = json.dumps(provenance) if provenance is not None else None
        if self._writer is not None:
            if text is not None:
                self._writer.add_key_value_metadata({"attrib_audit": text})
            self._writer.close()
        if not publish:
            self._staged.discard()
            return
        if self.csv and text is not None:
            write_text_atomic(self.out.with_name(self.out.name + ".provenance.json"), text)
        self._staged.publish()


@contextmanager
def _paused_gc() -> Iterator[None]:
    """Run the cyclic garbage collector once per chunk (the caller's gc.collect(1)) instead of automatically.

    A chunk allocates hundreds of thousands of acyclic objects (strings, key tuples, token sets) that
    reference counting frees; automatic passes over them cost up to half the run for cheap scorers and
    find nothing. One young-generation pass per chunk still frees any cycles a scorer leaves, so memory
    stays bounded. Automatic collection is restored (if it was on) when streaming ends or fails.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _merge(a: RunStats | None, b: RunStats) -> RunStats:
    if a is None:
        return b
    return RunStats(scorer=a.scorer, signature=a.signature, n_pairs=a.n_pairs + b.n_pairs,
                    n_unique=a.n_unique + b.n_unique, n_cached=a.n_cached + b.n_cached,
                    n_scored=a.n_scored + b.n_scored, n_batches=a.n_batches + b.n_batches)


def stream_score(paths: Iterable[str | Path], scorers: Mapping[str, Scorer], out: str | Path, *,
                 cache: ScoreCache | None, data: DataSpec | None = None,
                 chunk_rows: int = DEFAULT_CHUNK_ROWS, batch_size: int | None = None,
                 quiet: bool = True) -> StreamResult:
    """Score files chunk by chunk into `out` (.parquet or .csv).

    Duplicates are scored once per chunk and, through the cache, once overall (n_unique counts per chunk).
    """
    paths = list(paths)
    writer = ScoreWriter(out, list(scorers), inputs=paths)  # never onto a file it reads
    origin: list[DataEntry] = []
    totals: dict[str, RunStats | None] = {n: None for n in scorers}
    n_rows = n_chunks = 0
    done = False
    try:
        with _paused_gc():
            for table in iter_tables(paths, data, chunk_rows, origin):
                scores = {}
                for name, scorer in scorers.items():
                    if not n_chunks:  # a long stream first checks each scorer on the known-answer set
                        check_before_long_run(name, scorer, table.claims, table.evidences,
                                              cache_path=cache.path if cache is not None else ":memory:", quiet=quiet)
                    scores[name], st = score_pairs(scorer, table.claims, table.evidences, cache=cache,
                                                   batch_size=batch_size, quiet=quiet)
                    totals[name] = _merge(totals[name], st)
                writer.write(score_columns(table.ids, scores))
                n_rows += len(table)
                n_chunks += 1
                gc.collect(1)
            done = True
    finally:  # a failed run publishes nothing: the earlier file, if any, stays whole
        writer.close({"tool": {"name": "attrib-audit", "version": __version__},
                      "scorers": {n: s.signature for n, s in scorers.items()},
                      "data": to_record(origin), "complete": done}, publish=done)
    return StreamResult(n_rows, n_chunks, [s for s in totals.values() if s is not None], origin)
