"""HTML renderer: one self-contained, offline, printable file per report (and per fleet)."""

from __future__ import annotations

import base64
import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

from ascend_audit.reports import localize, svg
from ascend_audit.reports.json_report import report_json, write_atomic
from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup

from ascend_audit import i18n
from ascend_audit.model import LAYERS, Report

TEMPLATES = Path(__file__).resolve().parent / "templates"
EXCERPT_HEAD, EXCERPT_TAIL = 4000, 1500
VALUES_CAP = 4000
# Characters of evidence text the whole page may carry; shared out between the evidence items so
# that a report with hundreds of long excerpts still stays a readable, attachable size (< 2 MB).
EVIDENCE_BUDGET = 1_400_000
MIN_PER_ITEM = 600
STATUS_ORDER = ("ERROR", "FAIL", "BLOCKED", "WARN", "WAIVED", "SKIP", "PASS")

# The only script: close every open <details> (evidence) before printing, reopen it after, so
# that a printed report carries verdicts and fixes, not pages of evidence (CSS does the same).
PRINT_SCRIPT = (
    "(function(){var o=[];addEventListener('beforeprint',function(){"
    "document.querySelectorAll('details[open]').forEach(function(d){d.open=false;o.push(d)})"
    "});addEventListener('afterprint',function(){o.forEach(function(d){d.open=true});o=[]})})();"
)


def _csp() -> str:
    digest = base64.b64encode(hashlib.sha256(PRINT_SCRIPT.encode()).digest()).decode()
    return (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )


def _finalize(value: Any) -> Any:
    """Every {{ expression }} from node data is cleaned of characters HTML must not carry."""
    if value is None:
        return ""
    if isinstance(value, Markup):
        return value
    if isinstance(value, str):
        return svg.clean(value)
    return value


def _fmt_ms(ms: Any) -> str:
    try:
        v = float(ms)
    except (TypeError, ValueError):
        return ""
    if v >= 1000:
        return f"{v / 1000:.2f} s"
    return f"{v:.0f} ms" if v >= 10 else f"{v:.1f} ms"


@cache
def _env() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["fmt_ms"] = _fmt_ms
    env.filters["short"] = svg.shorten
    env.globals["STATUS_ICON"] = svg.STATUS_ICON
    env.globals["VERDICT_ICON"] = svg.VERDICT_ICON
    return env


def cap_text(text: Any, head: int = EXCERPT_HEAD, tail: int = EXCERPT_TAIL) -> str:
    """Long text shortened to its head and tail, saying how much was left out."""
    s = text if isinstance(text, str) else str(text)
    if len(s) <= head + tail + 200:
        return s
    omitted = len(s) - head - tail
    note = f"… [{omitted} characters omitted here; the JSON report has them all] …"
    return f"{s[:head]}\n{note}\n{s[-tail:]}"


def _json_text(value: Any, cap: int = VALUES_CAP) -> str:
    try:
        text = json.dumps(value, indent=1, ensure_ascii=False, default=str, sort_keys=True)
        if len(text) > cap:
            text = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return cap_text(text, cap * 4 // 5, cap // 5)


def _is_scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def values_view(values: Any, cap: int = VALUES_CAP) -> dict[str, Any]:
    """A small key/value table when values are flat and few, else capped pretty JSON."""
    if not isinstance(values, dict) or not values:
        return {"rows": [], "json": ""}
    if len(values) <= 24 and all(_is_scalar(v) for v in values.values()):
        rows = [(str(k), svg.shorten("" if v is None else v, 300)) for k, v in values.items()]
        return {"rows": rows, "json": ""}
    return {"rows": [], "json": _json_text(values, cap)}


def _evidence_view(e: dict[str, Any], budget: int) -> dict[str, Any]:
    values: dict[str, Any] = e["values"] if isinstance(e.get("values"), dict) else {}
    run: dict[str, Any] = {}
    for key, names in (
        ("rc", ("rc", "exit_code", "returncode")),
        ("duration_ms", ("duration_ms",)),
        ("status", ("status",)),
    ):
        for n in names:
            if values.get(n) is not None:
                run[key] = values[n]
                break
    rest = {
        k: v
        for k, v in values.items()
        if k not in ("rc", "exit_code", "returncode", "duration_ms", "status")
    }
    return {
        "kind": str(e.get("kind", "")),
        "source": str(e.get("source", "")),
        "excerpt": cap_text(e.get("excerpt") or "", budget * 3 // 4 * 3 // 4, budget * 3 // 4 // 4),
        "excerpt_len": len(e.get("excerpt") or ""),
        "run": run,
        "duration": _fmt_ms(run["duration_ms"]) if "duration_ms" in run else "",
        "values": values_view(rest, max(300, budget // 4)),
    }


def key_evidence(r: dict[str, Any]) -> dict[str, str] | None:
    """The evidence line a failure stands on: the first evidence item's source and the first
    line of its excerpt that carries a value (or its values when it has no excerpt)."""
    for e in r.get("evidence") or []:
        if not isinstance(e, dict):
            continue
        lines = [x.strip() for x in str(e.get("excerpt") or "").splitlines() if x.strip()]
        values = e.get("values") if isinstance(e.get("values"), dict) else {}
        if not lines and values:
            lines = [", ".join(f"{k}={v}" for k, v in list(values.items())[:6] if _is_scalar(v))]
        if lines and lines[0]:
            # a table's header line says nothing yet: the first line carrying a value does
            line = next((x for x in lines[:12] if any(c.isdigit() for c in x)), lines[0])
            return {
                "kind": str(e.get("kind", "")),
                "source": svg.shorten(e.get("source", ""), 160),
                "line": svg.shorten(line, 300),
            }
    return None


def _result_view(r: dict[str, Any], index: int, budget: int, lang: str = "en") -> dict[str, Any]:
    metrics = r.get("metrics") if isinstance(r.get("metrics"), dict) else {}
    return {
        "anchor": f"c-{index}",
        "id": str(r.get("id", "")),
        "layer": str(r.get("layer", "")),
        "status": str(r.get("status", "")),
        "severity": str(r.get("severity", "")),
        "title": localize.title(r, lang),
        "summary": localize.summary(r, lang),
        "remediation": localize.remediation(r, lang),
        "key_evidence": key_evidence(r) if r.get("status") in ("FAIL", "ERROR") else None,
        "duration": _fmt_ms(r.get("duration_ms")),
        "blocked_by": [str(x) for x in r.get("blocked_by") or []],
        "waiver": r.get("waiver") if isinstance(r.get("waiver"), dict) else None,
        "on_broken_layer": bool(r.get("on_broken_layer")),
        "evidence": [
            _evidence_view(e, budget) for e in r.get("evidence") or [] if isinstance(e, dict)
        ],
        "metrics": values_view(metrics, max(300, budget // 2)),
    }


def _layer_views(
    d: dict[str, Any], results: list[dict[str, Any]], lang: str = "en"
) -> list[dict[str, Any]]:
    by_name = {x.get("name"): x for x in d.get("layers") or [] if isinstance(x, dict)}
    out = []
    for name in LAYERS:
        layer = by_name.get(name)
        mine = [r for r in results if r["layer"] == name]
        counts: dict[str, int] = {}
        for r in mine:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        out.append(
            {
                "name": name,
                "verdict": str(layer.get("verdict")) if layer else "MISSING",
                "judged": layer is not None,
                "required": bool(layer.get("required", True)) if layer else False,
                "blocked_by": [str(x) for x in (layer or {}).get("blocked_by") or []],
                "reason": localize.layer_reason(layer, d.get("results") or [], lang),
                "failing": [r for r in mine if r["status"] in ("FAIL", "ERROR")],
                "counts": [(s, counts[s]) for s in STATUS_ORDER if s in counts],
                "results": mine,
            }
        )
    return out


def json_sha256(json_text: str) -> str:
    """SHA-256 of the exact JSON text a report was rendered from."""
    return hashlib.sha256(json_text.encode("utf-8", "surrogatepass")).hexdigest()


def _versions_rows(versions: Any, prefix: str = "") -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    if not isinstance(versions, dict):
        return rows
    for k, v in versions.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            rows.extend(_versions_rows(v, key + "."))
        else:
            rows.append((key, svg.shorten("" if v is None else v, 200)))
    return rows


def report_view(d: dict[str, Any], json_text: str, lang: str | None = None) -> dict[str, Any]:
    """Everything the report template shows, precomputed, in LANG (default: the report's)."""
    lang = i18n.normalise(lang or d.get("lang"))
    raw = [r for r in d.get("results") or [] if isinstance(r, dict)]
    items = sum(len(r.get("evidence") or []) + 1 for r in raw)
    budget = max(
        MIN_PER_ITEM,
        min(EXCERPT_HEAD + EXCERPT_TAIL + VALUES_CAP, EVIDENCE_BUDGET // max(1, items)),
    )
    results = [_result_view(r, i, budget, lang) for i, r in enumerate(raw)]
    counts: dict[str, int] = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    inv: dict[str, Any] = d["inventory"] if isinstance(d.get("inventory"), dict) else {}
    policy: dict[str, Any] = d["policy"] if isinstance(d.get("policy"), dict) else {}
    npus = [n for n in inv.get("npus") or [] if isinstance(n, dict)]
    npu_cols = ["npu_id", "chip_id", "name", "health", "bus_id"]
    for n in npus:
        for k in n:
            if k not in npu_cols and _is_scalar(n[k]) and len(npu_cols) < 10:
                npu_cols.append(k)
    return {
        "verdict": str(d.get("verdict", "")),
        "tool": d.get("tool") or {},
        "host": [(str(k), str(v)) for k, v in (d.get("host") or {}).items()],
        "hostname": str((d.get("host") or {}).get("hostname", "?")),
        "started_at": str(d.get("started_at", "")),
        "finished_at": str(d.get("finished_at", "")),
        "duration": _fmt_ms(d.get("duration_ms")),
        "schema_version": str(d.get("schema_version", "")),
        "policy_digest": str(policy.get("digest", "") or "(none)"),
        "policy_source": str(policy.get("source", "") or ""),
        "json_sha256": json_sha256(json_text),
        "inputs": _json_text(d.get("inputs") or {}) if d.get("inputs") else "",
        "layers": _layer_views(d, results, lang),
        "counts": [(s, counts[s]) for s in STATUS_ORDER if s in counts],
        "fix_first": [r for r in results if r["status"] in ("FAIL", "ERROR")],
        "warnings": [r for r in results if r["status"] == "WARN"],
        "npus": npus,
        "npu_cols": npu_cols,
        "versions": _versions_rows(inv.get("versions")),
        "topology": svg.topology_svgs(inv),
        "charts": svg.operator_charts(d),
        "csp": _csp(),
        "script": Markup(PRINT_SCRIPT),
        **_words(lang),
    }


def _words(lang: str) -> dict[str, Any]:
    """The catalog's words for a template: t(key, **fields), status, verdict and layer words."""
    return {
        "lang": lang,
        "t": lambda key, **fields: i18n.t(key, lang, **fields),
        "sw": lambda s: i18n.status_word(s, lang),
        "vw": lambda v: i18n.verdict_word(v, lang),
        "lw": lambda name: i18n.layer_word(name, lang),
        "hl": lambda key: i18n.messages(lang).get(f"host.{key}") or key,
    }


def render_html(
    report: Report | dict[str, Any], json_text: str | None = None, lang: str | None = None
) -> str:
    """The report as one self-contained HTML page; JSON_TEXT is the exact JSON it came from."""
    d = report.to_dict() if isinstance(report, Report) else report
    if json_text is None:
        json_text = (
            report_json(report) if isinstance(report, Report) else report_json(Report.from_dict(d))
        )
    return _env().get_template("report.html.j2").render(**report_view(d, json_text, lang))


def write_html(
    report: Report | dict[str, Any],
    path: str,
    json_text: str | None = None,
    lang: str | None = None,
) -> None:
    """Render and atomically write the HTML report."""
    write_atomic(path, render_html(report, json_text, lang))


# Checks per table of the checks × nodes matrix: one table of 12 check columns beside the node
# column fits the width of an A4 page at print size, so a fleet with any number of checks prints
# every column (more checks make more tables, each breaking across pages by rows).
MATRIX_COLUMNS = 12
FAILING = ("FAIL", "ERROR")
VERSION_KEYS = ("driver", "firmware", "cann", "torch_npu", "vllm_ascend")
# Layer verdicts that a failing check of the layer explains, or that are not a fault of the layer.
EXPLAINED_VERDICTS = ("READY", "DEGRADED", "BLOCKED")


def node_findings(node: dict[str, Any], checks: list[dict[str, Any]]) -> dict[str, Any]:
    """What stands between a node and READY: its failing checks (FAIL, ERROR) with their
    summaries, its warnings, and each layer judged neither ready nor blocked without a failing
    check of its own (a missing or unproven proof), with the layer's reason."""
    cells = node.get("cells") or {}
    layer_of = {c["id"]: c.get("layer", "") for c in checks}
    title_of = {c["id"]: c.get("title", "") for c in checks}

    def item(cid: str) -> dict[str, str]:
        cell = cells[cid]
        return {
            "id": cid,
            "status": str(cell.get("status", "")),
            "title": str(title_of.get(cid, "")),
            "summary": svg.shorten(cell.get("summary") or "", 240),
        }

    order = [c["id"] for c in checks if c["id"] in cells]
    failing = [item(c) for c in order if cells[c].get("status") in FAILING]
    failing_layers = {layer_of.get(f["id"]) for f in failing}
    reasons = node.get("layer_reasons") or {}
    missing = [
        {"layer": layer, "verdict": verdict, "reason": svg.shorten(reasons.get(layer, ""), 240)}
        for layer, verdict in (node.get("layers") or {}).items()
        if verdict not in EXPLAINED_VERDICTS and layer not in failing_layers
    ]
    warnings = [item(c) for c in order if cells[c].get("status") == "WARN"]
    return {"failing": failing, "missing": missing, "warnings": warnings}


def fleet_view(fleet: dict[str, Any]) -> dict[str, Any]:
    """Everything the fleet template shows: the fleet, each node's findings, the matrix tables."""
    checks = list(fleet.get("checks") or [])
    nodes = [dict(n, findings=node_findings(n, checks)) for n in fleet.get("nodes") or []]
    versions: dict[str, list[tuple[str, int]]] = {}
    for key in VERSION_KEYS:
        seen: dict[str, int] = {}
        for n in nodes:
            value = (n.get("versions") or {}).get(key)
            if value:
                seen[str(value)] = seen.get(str(value), 0) + 1
        versions[key] = sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))
    return {
        "fleet": fleet,
        "nodes": nodes,
        "versions": versions,
        "version_keys": VERSION_KEYS,
        "troubled": [n for n in nodes if n["findings"]["failing"] or n["findings"]["missing"]],
        "matrix": [checks[i : i + MATRIX_COLUMNS] for i in range(0, len(checks), MATRIX_COLUMNS)],
        "csp": _csp(),
        "script": Markup(PRINT_SCRIPT),
    }


def render_fleet_html(fleet: dict[str, Any]) -> str:
    """The fleet roll-up (from merge.merge_reports) as one self-contained HTML page."""
    return _env().get_template("fleet.html.j2").render(**fleet_view(fleet))
