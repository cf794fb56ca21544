"""The flags commands share, each group added by one `add_*_args` (the commands' own flags sit with them)."""
from __future__ import annotations

import argparse

from attrib_audit.audit.config import TRANSFER_STATISTICS
from attrib_audit.audit.spec import StatsSpec
from attrib_audit.data.adapters import FORMATS, PAIRS
from attrib_audit.external.exports import SCORE_FORMATS
from attrib_audit.stats.bootstrap import MIN_BOOT

STATS = StatsSpec()  # the run spec's statistics defaults: every command's flags default to these values


def seed_int(text: str) -> int:
    """--seed: numpy seeds must be non-negative, so -1 is refused at the flag instead of deep in a resample."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, not {value}")
    return value


def positive_int(text: str) -> int:
    """--n-boot and other counts: zero resamples would leave every CI undefined."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {value}")
    return value


def n_boot_int(text: str) -> int:
    """--n-boot: at least MIN_BOOT resamples, so a percentile CI has resamples on both sides of its estimate."""
    value = int(text)
    if value < MIN_BOOT:
        raise argparse.ArgumentTypeError(f"must be at least {MIN_BOOT}, not {value}: a percentile CI is read off the "
                                         "resamples' tails (use 1000 or more for a result you report)")
    return value


def _number(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number, not {text}")
    return value


def open_unit(text: str) -> float:
    """A level, rate or share strictly between 0 and 1 (--ci-level, --delta, --prevalence, a gate's rate)."""
    value = _number(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be strictly between 0 and 1, not {text}")
    return value


def half_open_unit(text: str) -> float:
    """A margin or floor in [0, 1) (label --until-sure's --delta, --min-useful-pass): 0 is meaningful, 1 asks for
    nothing any sample could show."""
    value = _number(text)
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1), not {text}")
    return value


def positive_float(text: str) -> float:
    """A finite width or gap above zero (--half-width, --detect): zero asks for an infinite sample."""
    value = _number(text)
    if value <= 0.0:
        raise argparse.ArgumentTypeError(f"must be a positive number, not {text}")
    return value


def int_list(low: int, high: int):
    """A type for a comma-separated list of integers in [low, high], every entry present (`10,` is refused)."""
    def parse(text: str) -> tuple[int, ...]:
        parts = text.split(",")
        try:
            values = tuple(int(p.strip()) for p in parts)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be integers separated by commas, not {text!r}") from None
        bad = [v for v in values if not low <= v <= high]
        if bad:
            raise argparse.ArgumentTypeError(f"each value must be in [{low}, {high}], not {bad[0]}")
        return values
    parse.__name__ = "integer list"
    return parse


def float_list(low: float, high: float, *, high_open: bool = False):
    """A type for a comma-separated list of finite numbers in [low, high] (or [low, high)), every entry present."""
    def parse(text: str) -> tuple[float, ...]:
        try:
            values = tuple(_number(p.strip()) for p in text.split(","))
        except (ValueError, argparse.ArgumentTypeError):
            raise argparse.ArgumentTypeError(f"must be numbers separated by commas, not {text!r}") from None
        bad = [v for v in values if not (low <= v < high if high_open else low <= v <= high)]
        if bad:
            raise argparse.ArgumentTypeError(f"each value must be in [{low}, {high}{')' if high_open else ']'}, "
                                             f"not {bad[0]}")
        return values
    parse.__name__ = "number list"
    return parse


def finite_float(text: str) -> float:
    """A threshold: NaN compares false with every score, so `--threshold nan` would call every pair negative."""
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number, not {text}")
    return value


def add_data_args(p: argparse.ArgumentParser) -> None:
    """Flags every command that reads labelled pairs shares."""
    p.add_argument("data", nargs="*", help="JSONL, CSV/TSV or Parquet files of labelled pairs (or use --hf)")
    for f in ("id", "dataset", "source", "question", "claim", "evidence", "label", "group", "construct"):
        p.add_argument(f"--{f}-col", dest=f"{f}_col", metavar="COL", help=f"column holding `{f}`")
    p.add_argument("--system-col", dest="system_col", metavar="COL",
                   help="column naming the system (generator) that wrote each claim, e.g. a model name; with it the "
                        "audit adds the system-level section (default: a `system` column when there is one)")
    p.add_argument("--rating-col", dest="rating_col", metavar="COL",
                   help="column holding a graded human rating (any finite number, higher = better supported): the "
                        "audit adds metric-rating correlations; the label column may then be absent (no AUROC)")
    p.add_argument("--label-from-rating", metavar="CUT",
                   help="derive the binary label from the rating, e.g. '>=5' or '==1' (OP among >=, <=, ==, >, <); "
                        "replaces a label column; never done unless asked")
    p.add_argument("--label-map", help="explicit label mapping, e.g. 'attributable=1,not attributable=0'")
    p.add_argument("--dataset", dest="dataset_name", help="dataset name when the file has no dataset column")
    p.add_argument("--construct", help="construct of these pairs (e.g. attribution, fact-check)")
    add_format_args(p)
    p.add_argument("--on-error", choices=("fail", "skip"), default="fail",
                   help="bad rows: fail (default) names the row and stops; skip leaves it out and lists it in results")


def add_format_args(p: argparse.ArgumentParser) -> None:
    """The data flags beyond our schema's: --format, the adapters' options, --hf."""
    p.add_argument("--format", default="auto", choices=FORMATS,
                   help="input format: a benchmark's published layout (see `attrib-audit datasets`), "
                        f"'{PAIRS}' for our schema, or 'auto' (default: detect from the fields and say so)")
    p.add_argument("--nei", choices=("drop", "0"), default="drop",
                   help="vitaminc: NOT ENOUGH INFO rows dropped (default, counted) or labelled 0")
    p.add_argument("--wice-partial", type=int, choices=(0, 1), default=0,
                   help="wice: label of partially_supported claims (default 0)")
    p.add_argument("--hf", metavar="DATASET_ID", help="load pairs from the Hugging Face hub (needs `datasets`, online)")
    p.add_argument("--hf-split", metavar="SPLIT", help="split of --hf, e.g. test")
    p.add_argument("--hf-revision", metavar="SHA", help="commit SHA of --hf (recorded in results.json; "
                                                        "without it results may not be reproducible)")
    p.add_argument("--hf-config", metavar="NAME", help="configuration name of --hf, when it has several")


def add_scoring_args(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument("--scorers", default=default, help=f"comma-separated scorer names (default {default}); see "
                   "`models list`; a plugin as module:factory; 'none' with --score-col/--scores only")
    add_model_args(p)
    add_engine_args(p)
    add_judge_args(p)


def add_model_args(p: argparse.ArgumentParser) -> None:
    """Where weights come from, which device, and the score cache: shared by every command that scores."""
    p.add_argument("--model-path", action="append", default=[], metavar="SCORER=PATH",
                   help="local weights for a scorer (repeatable), e.g. minilm=/models/MiniLM")
    p.add_argument("--scorer-opt", action="append", default=[], metavar="SCORER.KEY=VALUE",
                   help="scorer option (repeatable), e.g. bertscore.num_layers=5, blend.w_lex=0.5")
    p.add_argument("--device", default="cpu", help="cpu, cuda or mps")
    p.add_argument("--trust-remote-code", action="store_true",
                   help="let model scorers run Python code shipped with a checkpoint (e.g. bespoke-minicheck); "
                        "asked on this command line only, never read from a spec or results file")
    p.add_argument("--batch-size", type=int, help="pairs per scoring batch (default: per scorer)")
    p.add_argument("--cache",
                   help="score cache file (default $ATTRIB_AUDIT_CACHE or ~/.cache/attrib_audit/scores.sqlite)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the score cache")
    p.add_argument("--quiet", action="store_true", help="no progress bars or notes")


def add_engine_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--engine", choices=("local", "ray"), default="local",
                   help="local: this process, streaming in chunks; ray: Ray Data actors (pip install "
                        "'attrib-audit[ray]')")
    p.add_argument("--ray-address", default=None,
                   help="Ray cluster to join, e.g. ray://head:10001 or auto (default $RAY_ADDRESS, else a local Ray)")
    p.add_argument("--concurrency", type=int, default=2,
                   help="Ray actors per scorer, each with one model copy (default 2)")
    p.add_argument("--actor-gpus", type=float, default=None,
                   help="GPUs per Ray actor (default 1 when --device cuda, else 0)")


def add_stream_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--chunk-rows", type=int, default=None,
                   help="rows read, scored and written at a time by the local engine (default 16384)")


def add_judge_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("LLM judge (scorers judge, judge-label)")
    g.add_argument("--judge-url", help="OpenAI-compatible server base URL, e.g. http://127.0.0.1:8000/v1 "
                                       "(default: the local GGUF from `models install judge`)")
    g.add_argument("--judge-model", help="model name the server expects (required with --judge-url)")
    g.add_argument("--judge-api-key-env", default="ATTRIB_AUDIT_JUDGE_API_KEY",
                   help="environment variable holding the server's API key (default ATTRIB_AUDIT_JUDGE_API_KEY)")
    g.add_argument("--judge-concurrency", type=int, default=4, help="requests in flight at once (server; default 4)")
    g.add_argument("--judge-timeout", type=float, default=60.0, help="seconds per request (server; default 60)")
    g.add_argument("--judge-retries", type=int, default=4, help="retries on 429/5xx/connection errors (default 4)")
    g.add_argument("--judge-grammar", action="store_true",
                   help="constrain decoding to the answer format with a GBNF grammar (local GGUF or a llama.cpp "
                        "server); lets a small model answer parseably")


def add_precomputed_args(p: argparse.ArgumentParser) -> None:
    """`--score-col` / `--scores`: audit a metric the user computed elsewhere."""
    p.add_argument("--score-col", action="append", default=[], metavar="NAME=COL[:lower]",
                   help="audit a numeric column of the data file as scorer NAME (repeatable); ':lower' when lower "
                        "values mean better supported")
    p.add_argument("--scores", action="append", default=[], metavar="FILE[:COLS]",
                   help="join a score file on id (or on the scored text for evaluator exports); each numeric column, "
                        "or the listed COL / NAME=COL[:lower] entries, becomes a scorer (repeatable)")
    p.add_argument("--scores-format", choices=SCORE_FORMATS, default="auto",
                   help="format of --scores files: table (id + columns), ragas, deepeval, trulens (default: detect)")


def add_n_boot_arg(p: argparse.ArgumentParser, what: str = "bootstrap resamples") -> None:
    """--n-boot, defaulting to the run spec's resample count; the help names it after `what`."""
    p.add_argument("--n-boot", type=n_boot_int, default=STATS.n_boot, help=f"{what} (default {STATS.n_boot})")


def add_seed_arg(p: argparse.ArgumentParser) -> None:
    """--seed, defaulting to the run spec's."""
    p.add_argument("--seed", type=seed_int, default=STATS.seed)


def add_audit_args(p: argparse.ArgumentParser, out_default: str | None) -> None:
    """What `audit` and `demo` share: scoring, statistics, the output folder, precomputed metrics, the report."""
    add_scoring_args(p, "lexical,minilm,blend,bertscore")
    p.add_argument("--slice-by", choices=("dataset", "source"), default="dataset",
                   help="one AUROC per dataset, or per dataset:source")
    add_n_boot_arg(p)
    add_seed_arg(p)
    p.add_argument("--n-perm", type=positive_int, default=STATS.n_perm,
                   help=f"permutations for the transfer tests (Kendall's W, decomposition; default {STATS.n_perm})")
    p.add_argument("--ci-level", type=open_unit, default=STATS.level,
                   help=f"coverage of the per-slice AUROC and paired-difference CIs (default {STATS.level:g})")
    p.add_argument("--statistic", choices=TRANSFER_STATISTICS, default=STATS.statistic,
                   help="what the transfer statistics (portability, Kendall's W, held-out regret) and the selector "
                        "compare metrics by: the AUROC against the binary label (default), or a correlation with the "
                        "graded rating of --rating-col over all rows (partial-*: controlling for the system)")
    p.add_argument("--window-sensitivity", type=int, metavar="N",
                   help="also rescore every scorer with a token window at N tokens and report the change")
    add_system_args(p)
    p.add_argument("--out", default=out_default, help="output folder")
    add_precomputed_args(p)
    p.add_argument("--report", action="store_true", default=out_default is not None,
                   help="also write report.html, report.md and plots/ in the output folder (demo: always)")
    p.add_argument("--png", action="store_true", help="with the report: also write each plot as PNG (the HTML "
                                                      "embeds the SVGs)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also print every other section (transfer detail, sensitivity); the report holds them all")


def add_system_args(p: argparse.ArgumentParser) -> None:
    """How the system-level section resamples (`audit`, `demo`, `systems`)."""
    p.add_argument("--resample", default="inputs", choices=("inputs", "systems,inputs"),
                   help="system level: resample inputs (default: a claim about these systems), or systems and inputs "
                        "(a claim about new systems from the same population)")


def add_report_inputs(p: argparse.ArgumentParser) -> None:
    for key in ("provenance", "probe", "agreement"):
        p.add_argument(f"--{key}", metavar="FILE",
                       help=f"{key}.json saved elsewhere (default: DIR/{key}.json if present)")


def add_target_args(p: argparse.ArgumentParser, required: bool) -> None:
    """A gate's target (`threshold`, `plan`): exactly one rate and the confidence it is certified with."""
    g = p.add_argument_group("gate target (pass the answer when score ≥ t)")
    one = g.add_mutually_exclusive_group(required=required)
    one.add_argument("--max-false-pass", type=open_unit, metavar="RATE",
                     help="largest share of unsupported pairs the gate may pass, e.g. 0.05")
    one.add_argument("--min-precision", type=open_unit, metavar="RATE",
                     help="smallest share of passed pairs that must be supported, e.g. 0.95")
    one.add_argument("--min-catch", type=open_unit, metavar="RATE",
                     help="smallest share of unsupported pairs the gate must flag, e.g. 0.9")
    g.add_argument("--delta", type=open_unit, default=0.1,
                   help="the guarantee holds with probability ≥ 1 − delta over the labelled sample (default 0.1)")
