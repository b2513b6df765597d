"""Profiler SQLite exports (ascend_pytorch_profiler_*.db, msprof_*.db) as a kernel summary.

The unified msprof DB schema (msprof's `analysis/csrc/viewer/database/finals/msprof_db.cpp`, read
the same way by msprof-analyze's `advisor/common/profiling/op_summary.py` OpSummaryDB): every
operator is a `COMPUTE_TASK_INFO` row (name, opType, taskType, inputShapes, inputDataTypes as
`STRING_IDS.id`) joined to its `TASK` row on globalTaskId; duration is `TASK.endNs - startNs`.
Collectives are `COMMUNICATION_OP` rows (opName, opType, startNs, endNs). The rows are streamed in
batches into the same aggregation the CSV reader feeds, so a .db is judged exactly as its
kernel_details.csv: one row per task, core = the task type (`AI_CPU`, `AI_CORE`, …), HCCL for
collectives. The file is opened read-only and immutable (`file:…?mode=ro&immutable=1`): no
journal, no lock, nothing written beside it.
"""

from __future__ import annotations

import os
import re
import sqlite3
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

from ascend_audit.facts.profiler import KernelSummary
from ascend_audit.facts.profiler.accumulate import KernelAccumulator, absorb_rows
from ascend_audit.facts.profiler.columns import TableLayout
from ascend_audit.safe_io import open_regular

__all__ = ["DB_NAME_RE", "is_profiler_db", "summarize_profiler_db"]

DB_NAME_RE = re.compile(
    r"^(ascend_pytorch_profiler(?:_\d+)?|ascend_mindspore_profiler(?:_\d+)?|msprof_\d{14})\.db$"
)
BATCH_ROWS = 65_536
SQLITE_MAGIC = b"SQLite format 3\x00"
REQUIRED = ("TASK", "COMPUTE_TASK_INFO", "STRING_IDS")
HEADER = ("Name", "Type", "Accelerator Core", "Duration(us)", "Input Data Types", "Input Shapes")
LAYOUT = TableLayout(
    "profiler_db",
    HEADER,
    {
        "name": "Name",
        "type": "Type",
        "core": "Accelerator Core",
        "dur": "Duration(us)",
        "dtypes": "Input Data Types",
        "shapes": "Input Shapes",
    },
    {"name": 0, "type": 1, "core": 2, "dur": 3, "dtypes": 4, "shapes": 5},
)
_COMPUTE_SQL = """
SELECT n.value, o.value, k.value, t.endNs - t.startNs, d.value, s.value
FROM TASK AS t
JOIN COMPUTE_TASK_INFO AS c ON c.globalTaskId = t.globalTaskId
LEFT JOIN STRING_IDS AS n ON n.id = c.name
LEFT JOIN STRING_IDS AS o ON o.id = c.opType
LEFT JOIN STRING_IDS AS k ON k.id = c.taskType
LEFT JOIN STRING_IDS AS d ON d.id = c.inputDataTypes
LEFT JOIN STRING_IDS AS s ON s.id = c.inputShapes
"""
_COMM_SQL = """
SELECT n.value, o.value, 'HCCL', c.endNs - c.startNs, NULL, NULL
FROM COMMUNICATION_OP AS c
LEFT JOIN STRING_IDS AS n ON n.id = c.opName
LEFT JOIN STRING_IDS AS o ON o.id = c.opType
"""


def is_profiler_db(name: str) -> bool:
    """True for the file names torch_npu, MindSpore and msprof give their SQLite exports."""
    return bool(DB_NAME_RE.match(name))


def _open(path: Path) -> sqlite3.Connection:
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro&immutable=1"
    con = sqlite3.connect(uri, uri=True, timeout=1.0, check_same_thread=False)
    con.execute("PRAGMA query_only = 1")
    con.execute("PRAGMA temp_store = MEMORY")
    con.execute("PRAGMA cache_size = -16384")  # 16 MiB page cache, whatever the file's size
    return con


def _batches(con: sqlite3.Connection, sql: str) -> Iterator[list[tuple[object, ...]]]:
    cur = con.execute(sql)
    while True:
        rows = cur.fetchmany(BATCH_ROWS)
        if not rows:
            return
        yield rows


def _as_is(v: str | None) -> str | None:
    return v


def _text(v: object) -> str | None:
    if v is None:
        return None
    s = str(v)
    return s if s else None


def _feed(acc: KernelAccumulator, rows: list[tuple[object, ...]]) -> int:
    """One batch of (name, type, core, duration ns, dtypes, shapes) into the accumulator."""
    out: list[tuple[str | None, ...]] = []
    bad = 0
    for name, op_type, core, dur_ns, dtypes, shapes in rows:
        if isinstance(dur_ns, (int, float)) and not isinstance(dur_ns, bool) and dur_ns >= 0:
            dur = repr(dur_ns / 1000.0)
        else:
            dur = None
            bad += 1
        cells = (_text(name), _text(op_type), _text(core), dur, _text(dtypes), _text(shapes))
        out.append(cells)
    absorb_rows(acc, out, LAYOUT.indices, _as_is)
    return bad


def summarize_profiler_db(path: str | os.PathLike[str]) -> KernelSummary:
    """Summarise a profiler .db in bounded memory (batches of rows); never raises."""
    p = Path(path)
    source = str(p)
    try:
        with open_regular(p) as fh:
            magic = fh.read(len(SQLITE_MAGIC))
    except OSError as exc:
        return KernelSummary(source, "", problems=(f"{source}: {exc.strerror or exc}",))
    if magic != SQLITE_MAGIC:
        return KernelSummary(source, "unknown", problems=(f"{p.name}: not an SQLite database",))
    try:
        con = _open(p)
    except sqlite3.Error as exc:
        return KernelSummary(source, "unknown", problems=(f"{p.name}: cannot open: {exc}",))
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        missing = [t for t in REQUIRED if t not in tables]
        if missing:
            found = ", ".join(sorted(tables)[:20]) or "none"
            return KernelSummary(
                source,
                "unknown",
                problems=(
                    f"{p.name}: no {', '.join(missing)} table (tables found: {found}); "
                    "export the profile with operator data (torch_npu export_type Db, or "
                    "msprof --type=db)",
                ),
            )
        acc = KernelAccumulator()
        bad = 0
        for rows in _batches(con, _COMPUTE_SQL):
            bad += _feed(acc, rows)
        if "COMMUNICATION_OP" in tables:
            for rows in _batches(con, _COMM_SQL):
                bad += _feed(acc, rows)
        why = "endNs < startNs or not a number"
        extra = [f"{p.name}: {bad} task(s) without a valid start/end time ({why})"] if bad else []
        return acc.finish(source, LAYOUT, extra)
    except (sqlite3.Error, ValueError, OverflowError) as exc:
        return KernelSummary(
            source, "unknown", problems=(f"{p.name}: cannot read: {type(exc).__name__}: {exc}",)
        )
    finally:
        con.close()
