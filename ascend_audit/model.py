"""The one data model: statuses, evidence, results, layer verdicts and the Report."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

LAYERS: tuple[str, ...] = ("driver", "operator", "framework")
SCHEMA_VERSION = "1.0"


class Status(str, enum.Enum):
    """Outcome of one check."""

    PASS = "PASS"
    WARN = "WARN"
    FAIL = "FAIL"
    ERROR = "ERROR"
    SKIP = "SKIP"
    BLOCKED = "BLOCKED"
    WAIVED = "WAIVED"

    def __str__(self) -> str:
        return self.value


class Verdict(str, enum.Enum):
    """Judgement of one layer, and of the whole audit."""

    READY = "READY"
    DEGRADED = "DEGRADED"
    NOT_READY = "NOT_READY"
    MISSING = "MISSING"
    BLOCKED = "BLOCKED"

    def __str__(self) -> str:
        return self.value


SEVERITIES: tuple[str, ...] = ("critical", "high", "medium", "low", "info")
GATING: frozenset[Status] = frozenset({Status.FAIL, Status.ERROR})


@dataclass
class Evidence:
    """What a result stands on: where it came from, the excerpt that matters, parsed values."""

    kind: str
    source: str
    excerpt: str = ""
    values: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "source": self.source,
            "excerpt": self.excerpt,
            "values": self.values,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Evidence:
        return cls(d["kind"], d["source"], d.get("excerpt", ""), dict(d.get("values") or {}))


@dataclass
class Outcome:
    """What a check function returns: status, one-line summary, evidence, metrics."""

    status: Status
    summary: str
    evidence: list[Evidence] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    remediation: str | None = None  # overrides the check's generic remediation when specific


def passed(summary: str, evidence: list[Evidence] | None = None, **metrics: Any) -> Outcome:
    return Outcome(Status.PASS, summary, evidence or [], metrics)


def warn(
    summary: str,
    evidence: list[Evidence] | None = None,
    remediation: str | None = None,
    **metrics: Any,
) -> Outcome:
    return Outcome(Status.WARN, summary, evidence or [], metrics, remediation)


def fail(
    summary: str,
    evidence: list[Evidence] | None = None,
    remediation: str | None = None,
    **metrics: Any,
) -> Outcome:
    return Outcome(Status.FAIL, summary, evidence or [], metrics, remediation)


def error(summary: str, evidence: list[Evidence] | None = None, **metrics: Any) -> Outcome:
    return Outcome(Status.ERROR, summary, evidence or [], metrics)


def skip(summary: str, evidence: list[Evidence] | None = None) -> Outcome:
    return Outcome(Status.SKIP, summary, evidence or [])


def worst(outcomes: list[Outcome], summary_ok: str) -> Outcome:
    """Fold several findings into one outcome: worst status wins, summaries joined."""
    order = [Status.ERROR, Status.FAIL, Status.WARN]
    for status in order:
        bad = [o for o in outcomes if o.status is status]
        if bad:
            ev = [e for o in outcomes for e in o.evidence]
            metrics: dict[str, Any] = {}
            for o in outcomes:
                metrics.update(o.metrics)
            rem = next((o.remediation for o in bad if o.remediation), None)
            return Outcome(status, "; ".join(o.summary for o in bad), ev, metrics, rem)
    ev = [e for o in outcomes for e in o.evidence]
    metrics = {}
    for o in outcomes:
        metrics.update(o.metrics)
    return Outcome(Status.PASS, summary_ok, ev, metrics)


@dataclass
class Result:
    """One check's judgement, with the check's metadata attached."""

    id: str
    layer: str
    status: Status
    severity: str
    title: str
    summary: str
    remediation: str = ""
    evidence: list[Evidence] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    duration_ms: float = 0.0
    blocked_by: list[str] = field(default_factory=list)
    waiver: dict[str, Any] | None = None
    on_broken_layer: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "layer": self.layer,
            "status": self.status.value,
            "severity": self.severity,
            "title": self.title,
            "summary": self.summary,
            "remediation": self.remediation,
            "evidence": [e.to_dict() for e in self.evidence],
            "metrics": self.metrics,
            "duration_ms": round(self.duration_ms, 3),
            "blocked_by": list(self.blocked_by),
            "waiver": self.waiver,
            "on_broken_layer": self.on_broken_layer,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Result:
        return cls(
            id=d["id"],
            layer=d["layer"],
            status=Status(d["status"]),
            severity=d.get("severity", "info"),
            title=d.get("title", ""),
            summary=d.get("summary", ""),
            remediation=d.get("remediation", ""),
            evidence=[Evidence.from_dict(e) for e in d.get("evidence") or []],
            metrics=dict(d.get("metrics") or {}),
            duration_ms=float(d.get("duration_ms") or 0.0),
            blocked_by=list(d.get("blocked_by") or []),
            waiver=d.get("waiver"),
            on_broken_layer=bool(d.get("on_broken_layer")),
        )


@dataclass
class LayerReport:
    """A layer's verdict and what blocks it."""

    name: str
    verdict: Verdict
    required: bool = True
    blocked_by: list[str] = field(default_factory=list)
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "verdict": self.verdict.value,
            "required": self.required,
            "blocked_by": list(self.blocked_by),
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LayerReport:
        return cls(
            d["name"],
            Verdict(d["verdict"]),
            bool(d.get("required", True)),
            list(d.get("blocked_by") or []),
            d.get("reason", ""),
        )


@dataclass
class Report:
    """Everything an audit learned and judged; every output format renders this."""

    tool: dict[str, str]
    host: dict[str, str]
    started_at: str
    finished_at: str
    inputs: dict[str, Any]
    verdict: Verdict
    layers: list[LayerReport]
    results: list[Result]
    inventory: dict[str, Any]
    policy: dict[str, Any] = field(default_factory=dict)
    duration_ms: float = 0.0
    schema_version: str = SCHEMA_VERSION
    lang: str = "en"  # the language its human-readable outputs were rendered in; JSON stays English

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "lang": self.lang,
            "tool": dict(self.tool),
            "host": dict(self.host),
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "duration_ms": round(self.duration_ms, 3),
            "inputs": self.inputs,
            "policy": self.policy,
            "verdict": self.verdict.value,
            "layers": [layer.to_dict() for layer in self.layers],
            "results": [r.to_dict() for r in self.results],
            "inventory": self.inventory,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Report:
        return cls(
            tool=dict(d.get("tool") or {}),
            host=dict(d.get("host") or {}),
            started_at=d.get("started_at", ""),
            finished_at=d.get("finished_at", ""),
            inputs=dict(d.get("inputs") or {}),
            verdict=Verdict(d["verdict"]),
            layers=[LayerReport.from_dict(x) for x in d.get("layers") or []],
            results=[Result.from_dict(x) for x in d.get("results") or []],
            inventory=dict(d.get("inventory") or {}),
            policy=dict(d.get("policy") or {}),
            duration_ms=float(d.get("duration_ms") or 0.0),
            schema_version=d.get("schema_version", SCHEMA_VERSION),
            lang=str(d["lang"]) if d.get("lang") in ("en", "zh") else "en",
        )

    def layer(self, name: str) -> LayerReport | None:
        return next((x for x in self.layers if x.name == name), None)

    def result(self, check_id: str) -> Result | None:
        return next((r for r in self.results if r.id == check_id), None)


class Progress:
    """Callbacks for live output as a run produces results; the default does nothing.

    It lives beside the model so renderers can stream results without importing the engine.
    """

    def layer_started(self, layer: str) -> None: ...

    def result(self, result: Result) -> None: ...

    def layer_finished(self, layer: LayerReport) -> None: ...
