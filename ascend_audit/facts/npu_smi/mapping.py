"""`npu-smi info -m`: the NPU / chip / logic id mapping."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.common import Problems as _Problems
from ascend_audit.facts.npu_smi._text import _NA, _lines, _to_int


@dataclass(frozen=True)
class MappingRow:
    """One row of `npu-smi info -m`."""

    npu_id: int
    chip_id: int | None
    chip_name: str
    chip_logic_id: int | None = None
    chip_phy_id: int | None = None
    slot_id: int | None = None
    line: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class NpuMapping:
    """The `npu-smi info -m` table."""

    rows: tuple[MappingRow, ...] = ()
    columns: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def npus(self) -> tuple[int, ...]:
        """Distinct NPU ids in order (an id of -1 means an unavailable NPU)."""
        return tuple(dict.fromkeys(r.npu_id for r in self.rows))

    @property
    def chip_names(self) -> tuple[str, ...]:
        """Distinct chip names in order."""
        return tuple(dict.fromkeys(r.chip_name for r in self.rows))

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "columns": list(self.columns),
            "rows": [r.to_dict() for r in self.rows],
            "problems": list(self.problems),
        }


_MAP_FIELDS = {
    "npu id": "npu_id",
    "chip id": "chip_id",
    "chip logic id": "chip_logic_id",
    "chip phy-id": "chip_phy_id",
    "chip phy id": "chip_phy_id",
    "slot id": "slot_id",
    "chip name": "chip_name",
}


def _split_columns(line: str) -> list[str]:
    """Split a header on runs of 2+ blanks (tabs count as blanks)."""
    out: list[str] = []
    cur: list[str] = []
    blanks = 0
    for ch in line.expandtabs(4).strip():
        if ch == " ":
            blanks += 1
            continue
        if blanks >= 2 and cur:
            out.append("".join(cur))
            cur = []
        elif blanks == 1 and cur:
            cur.append(" ")
        blanks = 0
        cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


def parse_mapping(text: str) -> NpuMapping:
    """Parse `npu-smi info -m` (NPU ID / Chip ID / Chip Logic ID or Phy-ID / Chip Name)."""
    probs = _Problems()
    cols: list[str] = []
    header: list[str] = []
    rows: list[MappingRow] = []
    for n, raw in enumerate(_lines(text), 1):
        s = raw.strip()
        if not s:
            continue
        low = s.lower()
        if "npu id" in low and "chip name" in low:
            cols = [_MAP_FIELDS.get(c.lower(), c.lower()) for c in _split_columns(s)]
            header = cols
            continue
        if not cols:
            continue
        words = s.split()
        if cols[0] == "npu_id" and _to_int(words[0]) is None:
            cols = []  # the table ended
            continue
        try:
            k = cols.index("chip_name")
        except ValueError:
            k = len(cols) - 1
        after = len(cols) - 1 - k
        if len(words) < len(cols) - 1:
            probs.add(f"line {n}: expected {len(cols)} columns, got {s!r}")
            continue
        before_vals = words[:k]
        after_vals = words[len(words) - after :] if after else []
        name = " ".join(words[k : len(words) - after])
        vals: dict[str, Any] = {"chip_name": name}
        bad = False
        for c, v in zip(cols[:k] + cols[k + 1 :], before_vals + after_vals):
            iv = _to_int(v)
            if iv is None and v not in _NA:
                bad = True
            vals[c] = iv
        if bad or vals.get("npu_id") is None:
            probs.add(f"line {n}: unreadable mapping row {s!r}")
            continue
        rows.append(
            MappingRow(
                npu_id=vals["npu_id"],
                chip_id=vals.get("chip_id"),
                chip_name=name,
                chip_logic_id=vals.get("chip_logic_id"),
                chip_phy_id=vals.get("chip_phy_id"),
                slot_id=vals.get("slot_id"),
                line=n,
            )
        )
    if not rows:
        probs.add("no npu-smi info -m table found")
    return NpuMapping(rows=tuple(rows), columns=tuple(header), problems=probs.result())
