"""Data room: the pair schema, validation and loaders."""
from attrib_audit.data.demo import demo_paths, load_demo
from attrib_audit.data.errors import DataError
from attrib_audit.data.loaders import file_sha256, load_pairs, parse_label
from attrib_audit.data.records import PairRecord, PairTable

__all__ = ["DataError", "PairRecord", "PairTable", "demo_paths", "file_sha256", "load_demo", "load_pairs", "parse_label"]
