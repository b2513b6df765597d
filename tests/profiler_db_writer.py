"""Write a profiler SQLite export (the unified msprof DB schema) from a kernel_details.csv.

Schema: the tables and columns of msprof's `analysis/csrc/viewer/database/finals/msprof_db.cpp`
as listed in ../shared/reference/profiler_db.md, and as msprof-analyze's OpSummaryDB queries them
(`msprof_analyze/advisor/common/profiling/op_summary.py`: COMPUTE_TASK_INFO joined to TASK on
globalTaskId, every text column a STRING_IDS.id, duration = endNs - startNs; collectives in
COMMUNICATION_OP). Each CSV row becomes one TASK row; HCCL rows become COMMUNICATION_OP rows.
"""

from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

SCHEMA = """
CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);
CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER,
    globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER,
    streamId INTEGER, taskId INTEGER, modelId INTEGER);
CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER PRIMARY KEY, blockDim INTEGER,
    mixBlockDim INTEGER, taskType INTEGER, opType INTEGER, inputFormats INTEGER,
    inputDataTypes INTEGER, inputShapes INTEGER, outputFormats INTEGER, outputDataTypes INTEGER,
    outputShapes INTEGER, attrInfo INTEGER);
CREATE TABLE COMMUNICATION_OP (opName INTEGER, startNs INTEGER, endNs INTEGER,
    connectionId INTEGER, groupName INTEGER, opId INTEGER PRIMARY KEY, relay INTEGER,
    retry INTEGER, dataType INTEGER, algType INTEGER, count NUMERIC, opType INTEGER);
"""
NA = ("", "N/A", "NA")


def _clean(v: str | None) -> str | None:
    if v is None:
        return None
    s = v.strip().strip('"').strip()
    return None if s in NA else s


def _int(v: str | None, default: int = 0) -> int:
    s = _clean(v)
    try:
        return int(float(s)) if s is not None else default
    except ValueError:
        return default


def csv_to_db(csv_path: Path, db_path: Path) -> int:
    """Write db_path from a kernel_details.csv; returns the number of rows written."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(str(db_path))
    con.executescript(SCHEMA)
    ids: dict[str, int] = {}

    def sid(v: str | None) -> int | None:
        s = _clean(v)
        if s is None:
            return None
        if s not in ids:
            ids[s] = len(ids) + 1
            con.execute("INSERT INTO STRING_IDS VALUES (?, ?)", (ids[s], s))
        return ids[s]

    n = 0
    with csv_path.open(newline="", encoding="utf-8", errors="replace") as fh:
        for gid, row in enumerate(csv.DictReader(fh), 1):
            start_us = float((_clean(row.get("Start Time(us)")) or "0").replace("\t", ""))
            dur_us = float(_clean(row.get("Duration(us)")) or "0")
            start = round(start_us * 1000)
            end = start + round(dur_us * 1000)
            core = _clean(row.get("Accelerator Core"))
            if core == "HCCL":
                con.execute(
                    "INSERT INTO COMMUNICATION_OP (opName, startNs, endNs, connectionId, opId, "
                    "opType) VALUES (?, ?, ?, ?, ?, ?)",
                    (sid(row.get("Name")), start, end, gid, gid, sid(row.get("Type"))),
                )
            else:
                con.execute(
                    "INSERT INTO TASK VALUES (?, ?, 0, ?, ?, 1, ?, ?, ?, ?, ?)",
                    (
                        start,
                        end,
                        gid,
                        gid,
                        sid(core),
                        _int(row.get("Context ID"), 4294967295),
                        _int(row.get("Stream ID")),
                        _int(row.get("Task ID")),
                        _int(row.get("Model ID"), 4294967295),
                    ),
                )
                con.execute(
                    "INSERT INTO COMPUTE_TASK_INFO VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        sid(row.get("Name")),
                        gid,
                        _int(row.get("Block Dim")),
                        _int(row.get("Mix Block Dim")),
                        sid(core),
                        sid(row.get("Type")),
                        sid(row.get("Input Formats")),
                        sid(row.get("Input Data Types")),
                        sid(row.get("Input Shapes")),
                        sid(row.get("Output Formats")),
                        sid(row.get("Output Data Types")),
                        sid(row.get("Output Shapes")),
                        None,
                    ),
                )
            n += 1
    con.commit()
    con.close()
    return n
