"""`npu-smi info -t topo`: the link matrix and CPU affinity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems as _Problems
from ascend_audit.facts.npu_smi._text import _NA, _NPU_LABEL_RE, _RANGE_RE, _lines

KNOWN_LINK_TYPES = frozenset({"X", "HCCS", "PIX", "PXB", "PHB", "SYS", "NA", "SIO", "UB"})


@dataclass(frozen=True)
class TopoLink:
    """The link type between two NPUs."""

    a: int
    b: int
    kind: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {"a": self.a, "b": self.b, "kind": self.kind}


@dataclass(frozen=True)
class NpuTopo:
    """The `npu-smi info -t topo` matrix, CPU affinity and legend."""

    npus: tuple[int, ...] = ()
    links: tuple[TopoLink, ...] = ()
    affinity: tuple[tuple[int, tuple[tuple[int, int], ...]], ...] = ()
    legend: tuple[tuple[str, str], ...] = ()
    problems: tuple[str, ...] = ()

    def link(self, a: int, b: int) -> str | None:
        """The link type from NPU a to NPU b (`X` for a == b when listed)."""
        for lk in self.links:
            if lk.a == a and lk.b == b:
                return lk.kind
        return None

    def affinity_of(self, npu: int) -> tuple[tuple[int, int], ...]:
        """CPU ranges (inclusive) with affinity to one NPU; () when unknown."""
        for k, ranges in self.affinity:
            if k == npu:
                return ranges
        return ()

    def cpus_of(self, npu: int, limit: int = 65536) -> frozenset[int]:
        """The CPU numbers with affinity to one NPU (capped at LIMIT)."""
        out: set[int] = set()
        for lo, hi in self.affinity_of(npu):
            out.update(range(lo, min(hi, lo + limit) + 1))
            if len(out) >= limit:
                break
        return frozenset(out)

    @property
    def link_types(self) -> frozenset[str]:
        """Every link type between distinct NPUs."""
        return frozenset(lk.kind for lk in self.links if lk.a != lk.b)

    def peers(self, npu: int, kind: str) -> tuple[int, ...]:
        """NPUs that NPU reaches over KIND."""
        return tuple(lk.b for lk in self.links if lk.a == npu and lk.kind == kind and lk.b != npu)

    def is_full_mesh(self, kind: str) -> bool:
        """True when every pair of distinct NPUs is linked by KIND."""
        pairs = [lk for lk in self.links if lk.a != lk.b]
        n = len(self.npus)
        return n > 1 and len(pairs) == n * (n - 1) and all(lk.kind == kind for lk in pairs)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "npus": list(self.npus),
            "links": [lk.to_dict() for lk in self.links if lk.a != lk.b],
            "affinity": {str(k): [list(r) for r in v] for k, v in self.affinity},
            "legend": dict(self.legend),
            "problems": list(self.problems),
        }


def parse_affinity(value: str) -> tuple[tuple[int, int], ...] | None:
    """Parse `0-23,48-71` (or `5`) into inclusive ranges; None when unreadable."""
    v = value.strip()
    if not v:
        return None
    out: list[tuple[int, int]] = []
    for part in v.split(","):
        m = _RANGE_RE.match(part.strip())
        if not m:
            return None
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            return None
        out.append((lo, hi))
    return tuple(out)


def parse_topo(text: str) -> NpuTopo:
    """Parse the `npu-smi info -t topo` matrix with its CPU Affinity column and legend."""
    probs = _Problems()
    cols: list[int] = []
    has_affinity = False
    row_ids: list[int] = []
    links: dict[tuple[int, int], str] = {}
    affinity: list[tuple[int, tuple[tuple[int, int], ...]]] = []
    legend: list[tuple[str, str]] = []
    in_legend = False
    for n, raw in enumerate(_lines(text), 1):
        s = raw.strip()
        if not s:
            continue
        words = s.split()
        if s.lower().startswith("legend"):
            in_legend = True
            continue
        if in_legend and "=" in s:
            code, _, desc = s.partition("=")
            if code.strip():
                legend.append((code.strip(), desc.strip()))
            continue
        if _NPU_LABEL_RE.match(words[0]) and all(
            _NPU_LABEL_RE.match(w) for w in words[1:] if w.lower() not in ("cpu", "affinity")
        ):
            if cols:
                probs.add(f"line {n}: a second topology header; only the first matrix is read")
                break
            cols = [int(w[3:]) for w in words if _NPU_LABEL_RE.match(w)]
            has_affinity = "affinity" in s.lower()
            continue
        m = _NPU_LABEL_RE.match(words[0])
        if not m or not cols:
            continue
        npu = int(m.group(1))
        cells = words[1:]
        if len(cells) < len(cols):
            probs.add(f"line {n}: expected {len(cols)} link cells for NPU{npu}, got {len(cells)}")
        row_ids.append(npu)
        for col, kind in zip(cols, cells):
            links[(npu, col)] = kind
        if has_affinity:
            if len(cells) > len(cols):
                rest = "".join(cells[len(cols) :])
                ranges = parse_affinity(rest)
                if ranges is None:
                    if rest not in _NA:
                        probs.add(f"line {n}: unreadable CPU affinity {rest!r}")
                    ranges = ()
                affinity.append((npu, ranges))
            else:
                probs.add(f"line {n}: no CPU affinity for NPU{npu}")
    if not cols:
        probs.add("no topology header (NPU0 NPU1 ... CPU Affinity) found")
    seen_rows = set(row_ids)
    missing = [c for c in cols if c not in seen_rows]
    if missing:
        probs.add(f"no matrix row for NPU {', '.join(map(str, missing[:20]))}")
    known = KNOWN_LINK_TYPES | {c for c, _ in legend}
    unknown = sorted({k for k in links.values() if k not in known})
    for k in unknown[:20]:
        probs.add(f"unknown link type {k!r}")
    for (a, b), kind in links.items():
        if a == b and kind != "X":
            probs.add(f"NPU{a} to itself is {kind!r}, expected 'X'")
        back = links.get((b, a))
        if a < b and back is not None and back != kind:
            probs.add(f"asymmetric link NPU{a}-NPU{b}: {kind!r} vs {back!r}")
    order = list(dict.fromkeys([*cols, *row_ids]))
    return NpuTopo(
        npus=tuple(order),
        links=tuple(TopoLink(a, b, k) for (a, b), k in links.items()),
        affinity=tuple(affinity),
        legend=tuple(legend),
        problems=probs.result(),
    )
