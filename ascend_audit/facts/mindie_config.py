"""MindIE Service config.json: every key the consistency rules read, with its line."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ascend_audit.facts.common import Problems
from ascend_audit.facts.keys import FactKey

__all__ = [
    "KEYS",
    "MINDIE_CONFIGS",
    "MindieConfig",
    "MindieInput",
    "MindieValue",
    "WeightDir",
    "looks_like_mindie",
    "parse_mindie_json",
]

MAX_TEXT = 16 * 1024 * 1024
MINDIE_HOME = "/usr/local/Ascend/mindie/latest/mindie-service"
_MC = "BackendConfig.ModelDeployConfig.ModelConfig[0]"
# dotted path -> where it sits; ModelConfig[0] is the first (reported) model instance
KEYS: tuple[str, ...] = (
    "ServerConfig.port",
    "ServerConfig.managementPort",
    "ServerConfig.metricsPort",
    "ServerConfig.interCommPort",
    "ServerConfig.httpsEnabled",
    "ServerConfig.tlsCaPath",
    "ServerConfig.tlsCaFile",
    "ServerConfig.tlsCert",
    "ServerConfig.tlsPk",
    "ServerConfig.inferMode",
    "ServerConfig.interCommTLSEnabled",
    "ServerConfig.interCommTlsCaPath",
    "ServerConfig.interCommTlsCaFiles",
    "ServerConfig.interCommTlsCert",
    "ServerConfig.interCommPk",
    "ServerConfig.tokenTimeout",
    "ServerConfig.e2eTimeout",
    "ServerConfig.distDPServerEnabled",
    "ServerConfig.layerwiseDisaggregated",
    "BackendConfig.modelInstanceNumber",
    "BackendConfig.npuDeviceIds",
    "BackendConfig.multiNodesInferEnabled",
    "BackendConfig.interNodeTLSEnabled",
    "BackendConfig.interNodeTlsCaPath",
    "BackendConfig.interNodeTlsCaFiles",
    "BackendConfig.interNodeTlsCert",
    "BackendConfig.interNodeTlsPk",
    "BackendConfig.ModelDeployConfig.maxSeqLen",
    "BackendConfig.ModelDeployConfig.maxInputTokenLen",
    f"{_MC}.modelName",
    f"{_MC}.modelWeightPath",
    f"{_MC}.worldSize",
    f"{_MC}.npuMemSize",
    f"{_MC}.cpuMemSize",
    f"{_MC}.backendType",
    f"{_MC}.dp",
    f"{_MC}.tp",
    f"{_MC}.cp",
    f"{_MC}.sp",
    f"{_MC}.pp",
    f"{_MC}.moe_ep",
    f"{_MC}.moe_tp",
    "BackendConfig.ScheduleConfig.templateType",
    "BackendConfig.ScheduleConfig.cacheBlockSize",
    "BackendConfig.ScheduleConfig.maxPrefillBatchSize",
    "BackendConfig.ScheduleConfig.maxPrefillTokens",
    "BackendConfig.ScheduleConfig.maxBatchSize",
    "BackendConfig.ScheduleConfig.maxIterTimes",
)
_PART_RE = re.compile(r"^(\w+)(?:\[(\d+)\])?$")
_SECTIONS = (
    ("BackendConfig", "BackendConfig"),
    ("ModelDeployConfig", "BackendConfig.ModelDeployConfig"),
    ("ScheduleConfig", "BackendConfig.ScheduleConfig"),
)


@dataclass(frozen=True)
class MindieValue:
    """One key's value and the line of config.json that sets it (0 when not found)."""

    key: str
    value: Any
    lineno: int
    text: str


@dataclass(frozen=True)
class MindieConfig:
    """The values of one config.json, by short key name (`maxSeqLen`, `worldSize`, …)."""

    source: str
    values: dict[str, MindieValue] = field(default_factory=dict)
    model_configs: int = 0
    problems: tuple[str, ...] = ()
    failure: str | None = None  # empty | too_large | invalid_json | not_object | no_backend
    sections: tuple[
        str, ...
    ] = ()  # which of BackendConfig, ModelDeployConfig, ScheduleConfig are objects

    @property
    def ok(self) -> bool:
        return bool(self.values)

    def get(self, name: str) -> Any:
        v = self.values.get(name)
        return v.value if v is not None else None

    def num(self, name: str) -> int | None:
        v = self.get(name)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    def where(self, name: str) -> str:
        v = self.values.get(name)
        return f"{self.source}:{v.lineno}" if v is not None and v.lineno else self.source

    def show(self, *names: str) -> str:
        """`maxSeqLen=2560, maxInputTokenLen=4096` for the named keys (absent ones skipped)."""
        return ", ".join(f"{n}={json.dumps(self.get(n))}" for n in names if n in self.values)

    @property
    def device_groups(self) -> tuple[tuple[int, ...], ...]:
        raw = self.get("npuDeviceIds")
        out = []
        if isinstance(raw, list):
            for g in raw:
                if isinstance(g, list) and all(
                    isinstance(x, int) and not isinstance(x, bool) for x in g
                ):
                    out.append(tuple(g))
        return tuple(out)


def looks_like_mindie(text: str) -> bool:
    """True when a JSON text is a MindIE Service config (a BackendConfig section)."""
    return '"BackendConfig"' in text[:65536]


def _walk(data: Any, path: str) -> tuple[bool, Any]:
    node = data
    for part in path.split("."):
        m = _PART_RE.match(part)
        if m is None or not isinstance(node, dict) or m.group(1) not in node:
            return False, None
        node = node[m.group(1)]
        if m.group(2) is not None:
            i = int(m.group(2))
            if not isinstance(node, list) or i >= len(node):
                return False, None
            node = node[i]
    return True, node


def _line_of(lines: list[str], key: str, start: int) -> tuple[int, str]:
    """First line at or after `start` (1-based) that sets `"key":`; else the first anywhere."""
    pat = re.compile(rf'"{re.escape(key)}"\s*:')
    for order in (range(start - 1, len(lines)), range(0, len(lines))):
        for i in order:
            if pat.search(lines[i]):
                return i + 1, lines[i].strip()[:300]
    return 0, ""


def _section_start(lines: list[str], path: str) -> int:
    """1-based line where the innermost named section of a dotted path opens (1 if unknown)."""
    parts = path.split(".")[:-1]
    start = 1
    for part in parts:
        name = part.split("[", 1)[0]
        n, _ = _line_of(lines, name, start)
        if n:
            start = n
    return start


def parse_mindie_json(text: str, source: str) -> MindieConfig:
    """Parse a MindIE config.json into the values the rules read; never raises."""
    probs = Problems()
    if not isinstance(text, str) or not text.strip():
        return MindieConfig(source, problems=("empty config",), failure="empty")
    if len(text) > MAX_TEXT:
        too_large = f"larger than {MAX_TEXT >> 20} MiB"
        return MindieConfig(source, problems=(too_large,), failure="too_large")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return MindieConfig(
            source, problems=(f"invalid JSON: {exc}"[:300],), failure="invalid_json"
        )
    if not isinstance(data, dict) or not isinstance(data.get("BackendConfig"), dict):
        kind = "no_backend" if isinstance(data, dict) else "not_object"
        return MindieConfig(
            source, problems=("no BackendConfig section: not a MindIE config",), failure=kind
        )
    lines = text.splitlines()
    values: dict[str, MindieValue] = {}
    for path in KEYS:
        found, value = _walk(data, path)
        if not found:
            continue
        short = path.rsplit(".", 1)[-1]
        lineno, line = _line_of(lines, short, _section_start(lines, path))
        values[short] = MindieValue(path, value, lineno, line)
    models = _walk(data, "BackendConfig.ModelDeployConfig.ModelConfig")[1]
    count = len(models) if isinstance(models, list) else 0
    if count == 0:
        probs.add("BackendConfig.ModelDeployConfig.ModelConfig is missing or empty")
    sections = tuple(
        name
        for name, path in _SECTIONS
        if isinstance(_walk(data, path)[1], dict) and _walk(data, path)[0]
    )
    return MindieConfig(source, values, count, probs.result(), None, sections)


@dataclass(frozen=True)
class WeightDir:
    """What modelWeightPath is on the node: a directory with a config and weight files, or not."""

    path: str
    kind: str | None  # "dir" | "file" | … | None when absent
    has_config: bool = False
    weight_files: int = 0
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class MindieInput:
    """One MindIE config: where it came from, what it says, and what its paths hold."""

    path: str
    origin: str
    config: MindieConfig | None = None
    error: str | None = None
    home: str = MINDIE_HOME
    weights: WeightDir | None = None
    tls_files: dict[str, bool] = field(default_factory=dict)  # node path -> exists
    env: dict[str, str] = field(default_factory=dict)


MINDIE_CONFIGS: FactKey[tuple[MindieInput, ...]] = FactKey("mindie_configs")
