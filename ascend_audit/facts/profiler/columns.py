"""Kernel-table columns: header spellings across torch_npu / msprof versions, cell cleaning,
and which layout a table has."""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ascend_audit.facts.profiler.summaries import NA
from ascend_audit.safe_io import open_regular

# Logical column -> header spellings seen across torch_npu and msprof versions.
COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "name": ("Name", "Op Name", "OP Name"),
    "type": ("Type", "OP Type", "Op Type"),
    "core": ("Accelerator Core", "Task Type", "Core Type"),
    "dur": ("Duration(us)", "Task Duration(us)", "Duration (us)", "Task Duration (us)"),
    "dtypes": ("Input Data Types",),
    "shapes": ("Input Shapes",),
}
NULL_TOKENS = frozenset({"", NA, "NA", "N/A N/A", "None", "null"})
STRIP_CHARS = ' \t"\r\n'

# --------------------------------------------------------------------------- helpers


def clean_cell(value: object) -> str | None:
    """Strip quotes, blanks and the profiler's trailing TAB; N/A and empty become None."""
    if value is None:
        return None
    s = str(value).strip(STRIP_CHARS)
    return None if s in NULL_TOKENS else s


def _to_float(value: object) -> float | None:
    s = clean_cell(value)
    if s is None:
        return None
    try:
        f = float(s)
    except ValueError:
        return None
    return f if f == f else None  # drop NaN


def type_from_name(name: str) -> str:
    """Best guess of an operator type from a kernel name (trans_Cast_19 -> Cast)."""
    n = name[6:] if name.startswith("trans_") else name
    if n.startswith("aclnn") and "_" in n:
        return n.rsplit("_", 1)[-1] or n
    m = re.match(r"^(.+?)(?:[-_]?\d+)+$", n)
    return m.group(1) if m else n


def shorten(text: str, limit: int = 120) -> str:
    text = text.replace("\r", "").replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit] + "…"


def is_ai_cpu(core: str | None) -> bool:
    return core is not None and core.upper() in ("AI_CPU", "AICPU")


@dataclass(frozen=True)
class TableLayout:
    name: str
    header: tuple[str, ...]
    columns: Mapping[str, str]  # logical -> raw header name
    indices: Mapping[str, int]
    problem: str | None = None
    raw_header: tuple[str, ...] = ()


def read_header(path: Path) -> tuple[tuple[str, ...] | None, str | None]:
    """First CSV record of a file, or (None, problem)."""
    try:
        with open_regular(path) as fh:
            head = fh.read(1 << 16)
    except OSError as exc:
        return None, f"cannot read {path}: {exc.strerror or exc}"
    if not head.strip():
        return None, f"{path.name}: empty file"
    if b"\x00" in head[:4096]:
        return None, f"{path.name}: binary data, not a CSV table"
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    first = text.splitlines()[0] if text.splitlines() else ""
    try:
        header = next(csv.reader([first]))
    except (csv.Error, StopIteration):
        return None, f"{path.name}: the first line is not a CSV header"
    return tuple(header), None


def detect_layout(header: tuple[str, ...], filename: str) -> TableLayout:
    stripped = [h.strip(STRIP_CHARS) for h in header]
    lower = {h.lower(): i for i, h in reversed(list(enumerate(stripped)))}
    columns: dict[str, str] = {}
    indices: dict[str, int] = {}
    for logical, spellings in COLUMN_ALIASES.items():
        for sp in spellings:
            i = lower.get(sp.lower())
            if i is not None:
                columns[logical] = header[i]
                indices[logical] = i
                break
    names = set(stripped)
    found = ", ".join(shorten(h, 40) for h in stripped[:40]) + (" …" if len(stripped) > 40 else "")
    if (
        "core" not in columns
        or "dur" not in columns
        or not ("type" in columns or "name" in columns)
    ):
        if {"Count", "Total Time(us)"} <= names:
            why = "this is an op_statistic table (use parse_op_statistic), not a kernel table"
        else:
            why = "no accelerator-core, duration and operator type/name columns"
        return TableLayout(
            "unknown",
            tuple(stripped),
            {},
            {},
            f"{filename}: unknown kernel table layout ({why}); columns found: {found}",
        )
    core_col = columns["core"].strip(STRIP_CHARS)
    if core_col == "Accelerator Core":
        if "OP State" in names or "HF32 Eligible" in names:
            name = "kernel_details_2025"
        elif "Step Id" in names:
            name = "kernel_details_2023"
        else:
            name = "kernel_details_minimal"
    elif core_col == "Task Type":
        name = "op_summary_block_dim" if "Block Dim" in names else "op_summary"
    else:
        name = "kernel_table_core_type"
    return TableLayout(name, tuple(stripped), columns, indices, raw_header=tuple(header))
