"""op_statistic tables (torch_npu or msprof): per-operator counts and times."""

from __future__ import annotations

import csv
import os
from pathlib import Path

from ascend_audit.facts.profiler.columns import (
    STRIP_CHARS,
    _to_float,
    clean_cell,
    read_header,
    shorten,
)
from ascend_audit.facts.profiler.summaries import MAX_TYPES, NA, OpStat, OpStatistic, OpStatisticRow
from ascend_audit.safe_io import bounded_lines, open_regular

# --------------------------------------------------------------------------- op_statistic


def parse_op_statistic(path: str | os.PathLike[str]) -> OpStatistic:
    """Read an op_statistic table (torch_npu or msprof); never raises."""
    p = Path(path)
    source = str(p)
    try:
        if not p.is_file():
            return OpStatistic(source, "", problems=(f"{source}: no such file",))
        header, problem = read_header(p)
        if header is None:
            return OpStatistic(source, "unknown", problems=(problem or "unreadable",))
        stripped = [h.strip(STRIP_CHARS) for h in header]
        idx = {h: i for i, h in reversed(list(enumerate(stripped)))}
        type_i = idx.get("OP Type", idx.get("Op Type", idx.get("Type")))
        core_name = next(
            (c for c in ("Core Type", "Task Type", "Accelerator Core") if c in idx), None
        )
        count_i = idx.get("Count")
        total_i = idx.get("Total Time(us)")
        if type_i is None or core_name is None or count_i is None or total_i is None:
            found = ", ".join(shorten(h, 40) for h in stripped[:40])
            return OpStatistic(
                source,
                "unknown",
                problems=(f"{p.name}: unknown op_statistic layout; columns found: {found}",),
            )
        core_i = idx[core_name]
        layout = "op_statistic" if core_name == "Core Type" else "op_statistic_task_type"
        merged: dict[tuple[str, str], list[float]] = {}
        problems: list[str] = []
        bad = 0
        with open_regular(p, "r", encoding="utf-8", errors="replace", newline="") as fh:
            reader = csv.reader(line.replace("\x00", "") for line in bounded_lines(fh))
            next(reader, None)
            while True:
                try:
                    row = next(reader)
                except StopIteration:
                    break
                except csv.Error:
                    bad += 1
                    continue
                if not row:
                    continue
                need = max(type_i, core_i, count_i, total_i)
                if len(row) <= need:
                    bad += 1
                    continue
                op_type = clean_cell(row[type_i]) or NA
                core = clean_cell(row[core_i]) or NA
                count = _to_float(row[count_i])
                total = _to_float(row[total_i])
                if count is None:
                    bad += 1
                    continue
                if len(merged) >= MAX_TYPES and (op_type, core) not in merged:
                    op_type = "<other>"
                slot = merged.setdefault((op_type, core), [0, 0.0])
                slot[0] += int(count)
                slot[1] += total or 0.0
        if bad:
            problems.append(f"{p.name}: {bad} malformed row(s) skipped")
        rows = tuple(
            OpStatisticRow(t, c, int(n), float(tt))
            for (t, c), (n, tt) in sorted(merged.items(), key=lambda kv: (-kv[1][1], kv[0]))
        )
        cores: dict[str, OpStat] = {}
        for r in rows:
            cores[r.core] = cores.get(r.core, OpStat()) + OpStat(r.count, r.total_us)
        return OpStatistic(
            source=source,
            layout=layout,
            rows=rows,
            cores=tuple(sorted(cores.items(), key=lambda kv: (-kv[1].total_us, kv[0]))),
            total_us=sum(r.total_us for r in rows),
            problems=tuple(problems),
        )
    except Exception as exc:
        return OpStatistic(
            source, "unknown", problems=(f"{p.name}: cannot read: {type(exc).__name__}: {exc}",)
        )
