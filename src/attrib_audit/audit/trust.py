"""The trust rule, in one place: a file never chooses code, a URL, a dataset to fetch, a secret or an output path.

Anything read from a file (a spec or config, a results.json, a dataset, a server reply) is data, whoever wrote
it. So an entry of a run spec read from a file that would import code (a `module:factory` scorer), reach a URL,
fetch a dataset (`data.hf`), name the variable a secret is read from, or a path to write or cache in, is refused
with one line naming the file and the key, unless this command line names the same thing too (`--scorers
mod:make`, `--hf ID`); the machine's own settings (`LOCAL_OPTIONS`) come from the command line only.
`check_file_spec` applies the rule to `audit --config FILE` and `audit --check DIR` alike.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from attrib_audit.errors import SpecError
from attrib_audit.scorers.plugins import is_import_path

# scorer options that name a place on this machine or on the network, or a secret's variable: from the command
# line only, never in a spec (and `trust_remote_code`: running a checkpoint's own code is asked on each command line)
LOCAL_OPTIONS = frozenset({"path", "url", "api_key_env", "request_cache", "baseline_path", "trust_remote_code"})
LOCAL_FLAG = {"path": "--model-path SCORER=PATH", "url": "--judge-url", "api_key_env": "--judge-api-key-env",
              "request_cache": "--cache / --no-cache", "baseline_path": "--model-path (baseline files beside it)",
              "trust_remote_code": "--trust-remote-code"}


class TrustError(SpecError):
    """A file names something only the command line may choose; the message names the file and the key."""

    kind = "refused"


@dataclass(frozen=True)
class Asked:
    """What this command line itself names: the only code and dataset a file may name too."""

    scorers: frozenset[str] = frozenset()  # --scorers (a plugin runs only when named here)
    hf: str | None = None  # --hf ID (a dataset is fetched only when named here)

    @classmethod
    def of(cls, scorers: str | None, hf: str | None) -> "Asked":
        return cls(frozenset(s.strip() for s in (scorers or "").split(",") if s.strip()), hf or None)


def refuse_local_options(where: str, options: Mapping[str, Any]) -> None:
    """A spec never holds this machine's settings (paths, endpoint, key variable): refused wherever it came from."""
    local = sorted(LOCAL_OPTIONS & set(options))
    if local:
        raise SpecError(f"{where}: option {local[0]!r} names a path or endpoint of this machine; it is never read "
                        f"from a spec or results file: pass {LOCAL_FLAG[local[0]]}")


def _url(value: Any) -> bool:
    if isinstance(value, str):
        return "://" in value
    if isinstance(value, dict):
        return any(_url(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_url(v) for v in value)
    return False


def check_file_spec(spec: Any, source: str, asked: Asked) -> None:
    """Refuse what the RunSpec `spec` (not imported: spec.py builds on this module), read from the file `source`,
    may not choose unless the command line `asked` for it too."""
    for i, choice in enumerate(spec.scorers):
        key = f"scorers[{i}]"
        if is_import_path(choice.name) and choice.name not in asked.scorers:
            raise TrustError(f"{source}: {key}.name {choice.name!r} names code to import; a file never chooses code "
                             f"to run: name it on this command line too (--scorers {choice.name})")
        for opt, value in sorted(choice.options.items()):
            if _url(value):
                raise TrustError(f"{source}: {key}.options.{opt} holds a URL; a file never chooses where requests "
                                 "go: pass the endpoint on the command line (--judge-url)")
    if asked.hf is not None and (spec.data.hf is None or spec.data.hf.id != asked.hf):
        raise SpecError(f"--hf {asked.hf} only permits the dataset {source} names, and it names "
                        f"{repr(spec.data.hf.id) if spec.data.hf else 'none'}; drop --hf or give that id")
    if spec.data.hf is not None and spec.data.hf.id != asked.hf:
        raise TrustError(f"{source}: data.hf.id {spec.data.hf.id!r} names a dataset to fetch; a file never chooses "
                         f"what is downloaded: name it on this command line too (--hf {spec.data.hf.id})")
    for i, src in enumerate(spec.precomputed):
        if _url(getattr(src, "file", None)):
            raise TrustError(f"{source}: precomputed[{i}].file names a URL; a file never chooses what is fetched")
    for i, f in enumerate(spec.data.files):
        if "://" in f.path:
            raise TrustError(f"{source}: data.files[{i}].path names a URL; a file never chooses what is fetched")
