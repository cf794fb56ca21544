"""Data room: the pair schema, validation with errors naming file, row and field, the benchmark adapters, and
where an audit's pairs come from (`DataSpec`, `load_data`)."""
from attrib_audit.data.demo import demo_paths, load_demo
from attrib_audit.data.errors import DataError
from attrib_audit.data.loaders import load_pairs, parse_label
from attrib_audit.data.records import PairRecord, PairTable
from attrib_audit.data.sources import DataSpec, FileSource, HFSource, load_data

__all__ = ["DataError", "DataSpec", "FileSource", "HFSource", "PairRecord", "PairTable", "demo_paths", "load_data",
           "load_demo", "load_pairs", "parse_label"]
