"""Inline SVG pictures for the HTML report: node topology and operator-layer bar charts.

Everything here reads report data defensively (shapes may be partial or absent) and escapes
every piece of text that came from the node; the output is returned as `Markup`.
"""

from __future__ import annotations

import re
from typing import Any

from markupsafe import Markup, escape

_BAD_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")

STATUS_ICON = {
    "PASS": "✓",
    "WARN": "!",
    "FAIL": "✗",
    "ERROR": "✗!",
    "SKIP": "–",
    "BLOCKED": "⊘",
    "WAIVED": "~",
}
VERDICT_ICON = {
    "READY": "✓",
    "DEGRADED": "!",
    "NOT_READY": "✗",
    "MISSING": "?",
    "BLOCKED": "⊘",
}


def clean(value: Any) -> str:
    """Text safe for HTML/SVG/XML: forbidden control characters and lone surrogates → U+FFFD."""
    return _BAD_CHARS.sub("\ufffd", value if isinstance(value, str) else str(value))


def esc(value: Any) -> Markup:
    """Clean then HTML-escape one piece of text (quotes included)."""
    return escape(clean(value))


def shorten(text: Any, width: int) -> str:
    """One line of at most WIDTH characters, ellipsised."""
    flat = " ".join(clean(text).split())
    return flat if len(flat) <= width else flat[: max(1, width - 1)] + "…"


def _get(d: Any, *keys: str, default: Any = None) -> Any:
    """The first present key of a dict (None-safe)."""
    if not isinstance(d, dict):
        return default
    for k in keys:
        if k in d and d[k] is not None:
            return d[k]
    return default


def _num(x: Any) -> float | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return float(x)
    try:
        return float(str(x).strip().split()[0])
    except (ValueError, IndexError):
        return None


def _numa_key(x: Any) -> str:
    """A NUMA node label: the integer when it is one and >= 0, else '?'."""
    n = _num(x)
    if n is None or n < 0:
        return "?"
    return str(int(n))


def _norm_bdf(bdf: Any) -> str:
    s = str(bdf or "").strip().lower()
    return s[5:] if re.match(r"^[0-9a-f]{4}:", s) and s.count(":") == 2 else s


def _fmt_speed(x: Any) -> str:
    n = _num(x)
    if n is None:
        return "?" if x in (None, "") else shorten(x, 16)
    return f"{n:g} GT/s"


# --------------------------------------------------------------------------- topology


def _link_text(link: Any) -> tuple[str, str]:
    """('16 GT/s x16 of 16 GT/s x16', state) with state in ok|degraded|unknown."""
    if not isinstance(link, dict) or not link:
        return "link unknown", "unknown"
    cs, cw = link.get("current_speed"), link.get("current_width")
    ms, mw = link.get("max_speed"), link.get("max_width")
    text = f"{_fmt_speed(cs)} x{cw if cw is not None else '?'}"
    if ms is not None or mw is not None:
        text += f" of {_fmt_speed(ms)} x{mw if mw is not None else '?'}"
    ncs, nms, ncw, nmw = _num(cs), _num(ms), _num(cw), _num(mw)
    if ncs is None or ncw is None:
        return text, "unknown"
    if (nms is not None and ncs < nms) or (nmw is not None and ncw < nmw):
        return text, "degraded"
    return text, "ok"


class _Groups:
    """Devices gathered per NUMA node; each (kind, id) is placed once, by the first source."""

    def __init__(self) -> None:
        self.by_node: dict[str, dict[str, Any]] = {}
        self.seen: set[tuple[str, str]] = set()

    def group(self, node: Any) -> dict[str, Any]:
        key = _numa_key(node)
        return self.by_node.setdefault(key, {"node": key, "cpus": None, "items": []})

    def add(self, node: Any, kind: str, ident: str, item: dict[str, Any]) -> None:
        if (kind, ident) in self.seen:
            return
        self.seen.add((kind, ident))
        self.group(node)["items"].append({"kind": kind, **item})

    def ordered(self) -> list[dict[str, Any]]:
        """Numbered nodes in order, the unknown node last; empty nodes dropped."""
        ordered = sorted(
            self.by_node.values(),
            key=lambda g: (g["node"] == "?", int(g["node"]) if g["node"].isdigit() else 0),
        )
        return [g for g in ordered if g["items"] or g["cpus"]]


def topology_groups(inventory: dict[str, Any]) -> list[dict[str, Any]]:
    """Devices of the topology grouped by NUMA node: [{node, cpus, items: [{kind,label,...}]}].

    Sources, in the order that decides where a device is drawn: the NUMA map's CPUs, the PCI
    NPUs (with their link state), NVMe and NVMe-oF devices, NICs, then the NUMA map's members.
    """
    topo = inventory.get("topology") if isinstance(inventory, dict) else None
    if not isinstance(topo, dict):
        topo = {}
    storage: dict[str, Any] = (
        inventory["storage"] if isinstance(inventory.get("storage"), dict) else {}
    )
    groups = _Groups()
    entries = _numa_entries(topo)
    _place_numa_cpus(groups, entries)
    _place_pci_npus(groups, topo, _npus_by_bdf(inventory))
    _place_nvme(groups, [topo.get("nvme"), topo.get("nvmeof"), storage.get("nvme")])
    _place_nics(groups, topo)
    _place_numa_members(groups, entries)
    return groups.ordered()


def _npus_by_bdf(inventory: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in inventory.get("npus") or []:
        if isinstance(n, dict) and n.get("bus_id"):
            out[_norm_bdf(n["bus_id"])] = n
    return out


def _numa_entries(topo: dict[str, Any]) -> list[tuple[Any, Any]]:
    """(node, entry) of the NUMA map, which comes as a dict by node or a list of entries."""
    numa_map = topo.get("numa_map")
    if isinstance(numa_map, dict):
        return list(numa_map.items())
    if isinstance(numa_map, list):
        return [(_get(e, "node", "numa_node", "id"), e) for e in numa_map]
    return []


def _place_numa_cpus(groups: _Groups, entries: list[tuple[Any, Any]]) -> None:
    for node, val in entries:
        g = groups.group(node)
        cpus = _get(val, "cpulist", "cpus", "cpu_list")
        if cpus is not None:
            g["cpus"] = shorten(
                cpus if not isinstance(cpus, list) else ",".join(map(str, cpus)), 40
            )


def _place_pci_npus(groups: _Groups, topo: dict[str, Any], npu_by_bdf: dict[str, Any]) -> None:
    for p in topo.get("pci_npus") or []:
        if not isinstance(p, dict):
            continue
        bdf = str(p.get("bdf") or "")
        text, state = _link_text(p.get("link"))
        npu = npu_by_bdf.get(_norm_bdf(bdf))
        name = f"NPU {npu.get('npu_id')}" if isinstance(npu, dict) else "NPU"
        groups.add(
            p.get("numa_node"),
            "npu",
            _norm_bdf(bdf) or str(id(p)),
            {"label": f"{name} {bdf}".strip(), "detail": text, "state": state},
        )


def _place_nvme(groups: _Groups, nvme_lists: list[Any]) -> None:
    for lst in nvme_lists:
        for d in lst or []:
            if not isinstance(d, dict):
                d = {"name": d}
            name = str(_get(d, "name", "device", "dev", default="nvme"))
            transport = str(_get(d, "transport", default="pcie") or "pcie").lower()
            fabric = transport not in ("pcie", "pci", "")
            kind = "nvmeof" if fabric else "nvme"
            bits = [transport if fabric else "", str(_get(d, "model", default="") or "")]
            bits.append(str(_get(d, "bdf", "address", "traddr", default="") or ""))
            groups.add(
                _get(d, "numa_node", "numa"),
                kind,
                name,
                {
                    "label": f"{'NVMe-oF' if fabric else 'NVMe'} {name}",
                    "detail": " ".join(b for b in bits if b),
                    "state": "ok",
                },
            )


def _place_nics(groups: _Groups, topo: dict[str, Any]) -> None:
    for key in ("rdma", "nics", "net"):
        for d in topo.get(key) or []:
            if not isinstance(d, dict):
                d = {"name": d}
            name = str(_get(d, "name", "ifname", "device", default="nic"))
            extra = [str(_get(d, "bdf", "pci_bdf", default="") or "")]
            state = str(_get(d, "state", "link_state", default="") or "")
            if state:
                extra.append(state)
            bad = state.lower() in ("down", "disabled", "polling")
            groups.add(
                _get(d, "numa_node", "numa"),
                "nic",
                name,
                {
                    "label": f"NIC {name}",
                    "detail": " ".join(e for e in extra if e),
                    "state": "degraded" if bad else "ok",
                },
            )


def _place_numa_members(groups: _Groups, entries: list[tuple[Any, Any]]) -> None:
    """Devices the NUMA map lists by name that no richer source placed already."""
    for node, val in entries:
        if not isinstance(val, dict):
            continue
        for lk, kind, prefix in (
            ("npus", "npu", "NPU"),
            ("nvme", "nvme", "NVMe"),
            ("rdma", "nic", "NIC"),
            ("nics", "nic", "NIC"),
        ):
            for d in val.get(lk) or []:
                ident = str(
                    _get(d, "name", "bdf", "npu_id", default=d) if isinstance(d, dict) else d
                )
                ident_n = _norm_bdf(ident) if kind == "npu" else ident
                groups.add(
                    node, kind, ident_n, {"label": f"{prefix} {ident}", "detail": "", "state": "ok"}
                )


_KIND_STYLE = {
    "npu": ("#dbe8ff", "#1f4e9c"),
    "nvme": ("#e7f5e9", "#256b35"),
    "nvmeof": ("#e7f5e9", "#256b35"),
    "nic": ("#f3e8fb", "#6b2f8a"),
}
_STATE_WORD = {"ok": "✓ ok", "degraded": "⚠ DEGRADED", "unknown": "? unknown"}


def topology_svgs(inventory: dict[str, Any]) -> list[Markup]:
    """One SVG per NUMA node with its NPUs (PCIe link state), NVMe/NVMe-oF devices and NICs."""
    out: list[Markup] = []
    width, row = 360, 40
    for g in topology_groups(inventory):
        items = g["items"]
        height = 44 + row * max(1, len(items)) + 8
        title = f"NUMA node {g['node']}" if g["node"] != "?" else "NUMA node unknown"
        parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" class="topo" role="img" '
            f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'aria-label="{esc(title)}">',
            f"<title>{esc(title)}</title>",
            f'<rect x="1" y="1" width="{width - 2}" height="{height - 2}" rx="8" '
            f'fill="#fafafa" stroke="#555" stroke-width="1.5"/>',
            f'<text x="12" y="24" class="h">{esc(title)}</text>',
        ]
        if g["cpus"]:
            parts.append(
                f'<text x="{width - 12}" y="24" text-anchor="end" class="s">'
                f"CPUs {esc(shorten(g['cpus'], 24))}</text>"
            )
        if not items:
            parts.append(f'<text x="12" y="{44 + 22}" class="s">no devices listed</text>')
        for i, it in enumerate(items):
            y = 40 + i * row
            fill, stroke = _KIND_STYLE.get(it["kind"], ("#eee", "#444"))
            state = it.get("state", "ok")
            if state == "degraded":
                fill, stroke = "#fff0d6", "#a15c00"
            sw = 2 if state == "degraded" else 1
            full = f"{it['label']} — {it.get('detail') or ''} ({_STATE_WORD.get(state, state)})"
            parts.append(f"<g><title>{esc(full)}</title>")
            parts.append(
                f'<rect x="10" y="{y}" width="{width - 20}" height="{row - 6}" rx="4" '
                f'fill="{fill}" stroke="{stroke}" stroke-width="{sw}"/>'
            )
            parts.append(
                f'<text x="18" y="{y + 15}" class="b">{esc(shorten(it["label"], 30))}</text>'
            )
            parts.append(
                f'<text x="{width - 18}" y="{y + 15}" text-anchor="end" class="st {state}">'
                f"{esc(_STATE_WORD.get(state, state))}</text>"
            )
            if it.get("detail"):
                parts.append(
                    f'<text x="18" y="{y + 29}" class="s">{esc(shorten(it["detail"], 52))}</text>'
                )
            parts.append("</g>")
        parts.append("</svg>")
        out.append(Markup("".join(parts)))
    return out


# --------------------------------------------------------------------------- charts


def _fmt_us(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.2f} s"
    if us >= 1e3:
        return f"{us / 1e3:.1f} ms"
    return f"{us:.0f} µs"


def bar_chart_svg(title: str, bars: list[tuple[str, float, str]], limit: int = 30) -> Markup:
    """A horizontal bar chart: bars are (label, value, value text); text is escaped."""
    bars = [(lbl, v, t) for lbl, v, t in bars if v is not None and v >= 0][:limit]
    if not bars:
        return Markup("")
    label_w, bar_w, value_w, row = 200, 300, 150, 22
    width = label_w + bar_w + value_w
    height = 30 + row * len(bars) + 6
    top = max(v for _, v, _ in bars) or 1.0
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'aria-label="{esc(title)}">',
        f"<title>{esc(title)}</title>",
        f'<text x="4" y="18" class="h">{esc(shorten(title, 80))}</text>',
    ]
    for i, (lbl, v, txt) in enumerate(bars):
        y = 28 + i * row
        w = max(1.0, bar_w * v / top)
        parts.append(f"<g><title>{esc(lbl)}: {esc(txt)}</title>")
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 15}" text-anchor="end" class="s">'
            f"{esc(shorten(lbl, 30))}</text>"
        )
        parts.append(
            f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{row - 8}" fill="#3b6fb6"/>'
        )
        parts.append(f'<text x="{label_w + w + 6:.1f}" y="{y + 15}" class="s">{esc(txt)}</text>')
        parts.append("</g>")
    parts.append("</svg>")
    return Markup("".join(parts))


def _core_bars(d: Any) -> list[tuple[str, float, str]]:
    if not isinstance(d, dict):
        return []
    bars = []
    for k, v in d.items():
        n = _num(v)
        if n is not None:
            bars.append((str(k), n, _fmt_us(n)))
    return sorted(bars, key=lambda b: -b[1])


def _op_bars(ops: Any) -> list[tuple[str, float, str]]:
    if not isinstance(ops, list):
        return []
    bars = []
    for op in ops:
        if not isinstance(op, dict):
            continue
        n = _num(_get(op, "total_us", "time_us", "duration_us"))
        if n is None:
            continue
        count = _get(op, "count", "calls")
        label = str(_get(op, "type", "name", "op", default="?"))
        txt = _fmt_us(n) + (f" · {count}×" if count is not None else "")
        bars.append((label, n, txt))
    return sorted(bars, key=lambda b: -b[1])


def operator_charts(report: dict[str, Any]) -> list[Markup]:
    """Charts of device time per core and top AI CPU operators, from operator results/inventory."""
    sources: list[tuple[str, dict[str, Any]]] = []
    inv_op = (report.get("inventory") or {}).get("operator")
    if isinstance(inv_op, dict):
        sources.append(("inventory", inv_op))
    for r in report.get("results") or []:
        if r.get("layer") == "operator" and isinstance(r.get("metrics"), dict):
            sources.append((str(r.get("id", "?")), r["metrics"]))
    charts: list[Markup] = []
    seen: set[str] = set()
    for origin, m in sources:
        for key, title, fn in (
            ("time_by_core_us", "Device time per accelerator core", _core_bars),
            ("top_aicpu_ops", "Top AI CPU operators by total time", _op_bars),
        ):
            bars = fn(m.get(key))
            sig = f"{key}:{bars!r}"
            if bars and sig not in seen:
                seen.add(sig)
                charts.append(bar_chart_svg(f"{title} (from {origin})", bars))
    return charts
