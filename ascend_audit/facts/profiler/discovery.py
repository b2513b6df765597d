"""Finding the traces under a path (ranks, *_ascend_pt, PROF_*) and reading them all."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from ascend_audit.facts.profiler.columns import STRIP_CHARS, read_header
from ascend_audit.facts.profiler.kernels import merge_summaries, summarize_kernels
from ascend_audit.facts.profiler.op_statistic import parse_op_statistic
from ascend_audit.facts.profiler.summaries import (
    KernelSummary,
    OpStat,
    OpStatistic,
    OpStatisticRow,
    ProfilerFacts,
    RankTraces,
    TraceSource,
    TraceViewSummary,
)
from ascend_audit.facts.profiler.trace_view import summarize_trace_view

# --------------------------------------------------------------------------- discovery

MAX_DEPTH = 8
MAX_ENTRIES = 200_000
_RANK_DIR_RE = re.compile(r"^rank[_-]?(\d+)$", re.IGNORECASE)
_PROFILER_INFO_RE = re.compile(r"^profiler_info_(\d+)\.json$")


def _kind_of(name: str) -> str | None:
    low = name.lower()
    if low.endswith(".csv"):
        if low == "kernel_details.csv" or low.startswith("kernel_details_"):
            return "kernel_details"
        if low.startswith("op_summary"):
            return "op_summary"
        if low.startswith("op_statistic"):
            return "op_statistic"
        return None
    if low.endswith(".db"):
        from ascend_audit.facts.profiler_db import is_profiler_db

        return "profiler_db" if is_profiler_db(name) else None
    if low == "trace_view.json":
        return "trace_view"
    if low.startswith("msprof_") and low.endswith(".json"):
        return "msprof_json"
    return None


def _ascend_pt_label(d: Path) -> str:
    try:
        for entry in os.scandir(d):
            m = _PROFILER_INFO_RE.match(entry.name)
            if m:
                return f"rank_{m.group(1)}"
    except OSError:
        pass
    return d.name[: -len("_ascend_pt")] or d.name


def _rank_label(file: Path, root: Path) -> str:
    """Rank a file belongs to: rank_N dir, *_ascend_pt dir, PROF_* dir, else 'default'."""
    try:
        rel = file.parent.relative_to(root)
        dirs = [root, *[root.joinpath(*rel.parts[: i + 1]) for i in range(len(rel.parts))]]
    except ValueError:
        dirs = [file.parent]
    for d in dirs:
        m = _RANK_DIR_RE.match(d.name)
        if m:
            return f"rank_{m.group(1)}"
    for d in dirs:
        if d.name.endswith("_ascend_pt"):
            return _ascend_pt_label(d)
    for d in dirs:
        if d.name.startswith("PROF_"):
            return d.name
    return "default"


def discover_traces(path: str | os.PathLike[str]) -> list[TraceSource]:
    """Profiler files under a path (file or dir), with a rank label each; bounded walk."""
    root = Path(path)
    try:
        if root.is_file():
            kind = _kind_of(root.name)
            if kind is None and root.suffix.lower() == ".csv":
                kind = _sniff_csv_kind(root)
            if kind is None and root.suffix.lower() == ".json":
                kind = "trace_view"
            if kind is None and root.suffix.lower() == ".db":
                kind = "profiler_db"
            if kind is None:
                return []
            return [TraceSource(str(root), kind, _rank_label(root, root.parent))]
        if not root.is_dir():
            return []
    except OSError:
        return []
    found: list[TraceSource] = []
    seen: set[str] = set()
    budget = [MAX_ENTRIES]

    def walk(d: Path, depth: int) -> None:
        try:
            real = os.path.realpath(d)
        except OSError:
            return
        if real in seen or depth > MAX_DEPTH:
            return
        seen.add(real)
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            return
        for e in entries:
            budget[0] -= 1
            if budget[0] < 0:
                return
            try:
                if e.is_dir():
                    walk(Path(e.path), depth + 1)
                elif e.is_file():
                    kind = _kind_of(e.name)
                    if kind:
                        fp = Path(e.path)
                        found.append(TraceSource(str(fp), kind, _rank_label(fp, root)))
            except OSError:
                continue

    walk(root, 0)
    return found


def _sniff_csv_kind(p: Path) -> str | None:
    header, _ = read_header(p)
    if header is None:
        return None
    stripped = {h.strip(STRIP_CHARS) for h in header}
    if {"Count", "Total Time(us)"} <= stripped:
        return "op_statistic"
    if "Task Type" in stripped:
        return "op_summary"
    return "kernel_details"


def _summarize_table(
    s: TraceSource, progress: Callable[[int], None] | None = None
) -> KernelSummary:
    """A kernel table: a CSV, or a profiler SQLite export read by facts.profiler_db."""
    if s.kind == "profiler_db":
        from ascend_audit.facts.profiler_db import summarize_profiler_db

        return summarize_profiler_db(s.path)
    return summarize_kernels(s.path, progress)


def collect_profiler_facts(
    path: str | os.PathLike[str], progress: Callable[[int], None] | None = None
) -> ProfilerFacts:
    """Discover and summarise every rank's profiler output under a path; never raises.

    PROGRESS (see ascend_audit.progress) is fed the bytes of the kernel tables as they are read."""
    source = str(path)
    try:
        sources = discover_traces(path)
    except Exception as exc:  # pragma: no cover - discover_traces already guards I/O
        return ProfilerFacts(source, problems=(f"cannot walk {source}: {exc}",))
    problems: list[str] = []
    if not sources:
        what = "does not exist" if not Path(path).exists() else "holds no profiler output"
        problems.append(
            f"{source} {what} (looked for kernel_details.csv, op_summary_*.csv, "
            "ascend_pytorch_profiler_*.db, msprof_*.db, "
            "op_statistic*.csv, trace_view.json, msprof_*.json)"
        )
        return ProfilerFacts(source, problems=tuple(problems))
    by_rank: dict[str, list[TraceSource]] = {}
    for s in sources:
        by_rank.setdefault(s.rank, []).append(s)
    ranks: list[RankTraces] = []
    for rank, items in by_rank.items():
        kd = [s for s in items if s.kind == "kernel_details"]
        tables = (
            kd
            or [s for s in items if s.kind == "op_summary"]
            or [s for s in items if s.kind == "profiler_db"]  # SQLite export (issue 16)
        )
        kernels: KernelSummary | None = None
        if tables:
            parts = [_summarize_table(s, progress) for s in tables]
            kernels = parts[0] if len(parts) == 1 else merge_summaries(parts)
            kernels = _with_ranks(kernels, (rank,))
        stats = [parse_op_statistic(s.path) for s in items if s.kind == "op_statistic"]
        views = [
            summarize_trace_view(s.path) for s in items if s.kind in ("trace_view", "msprof_json")
        ]
        ranks.append(
            RankTraces(
                rank=rank,
                kernels=kernels,
                op_statistic=_merge_op_statistics(stats) if stats else None,
                trace_view=_merge_trace_views(views) if views else None,
            )
        )
    with_kernels = [r.kernels for r in ranks if r.kernels is not None]
    merged = merge_summaries(with_kernels) if with_kernels else None
    if not with_kernels:
        problems.append(f"{source}: no kernel table (kernel_details.csv or op_summary_*.csv) found")
    return ProfilerFacts(source, tuple(sources), tuple(ranks), merged, tuple(problems))


def _with_ranks(s: KernelSummary, ranks: tuple[str, ...]) -> KernelSummary:
    return replace(s, ranks=ranks)


def _merge_op_statistics(stats: list[OpStatistic]) -> OpStatistic:
    if len(stats) == 1:
        return stats[0]
    merged: dict[tuple[str, str], OpStat] = {}
    problems: list[str] = []
    for st in stats:
        for r in st.rows:
            merged[(r.op_type, r.core)] = merged.get((r.op_type, r.core), OpStat()) + OpStat(
                r.count, r.total_us
            )
        problems.extend(st.problems)
    rows = tuple(
        OpStatisticRow(t, c, s.count, s.total_us)
        for (t, c), s in sorted(merged.items(), key=lambda kv: (-kv[1].total_us, kv[0]))
    )
    cores: dict[str, OpStat] = {}
    for r in rows:
        cores[r.core] = cores.get(r.core, OpStat()) + OpStat(r.count, r.total_us)
    return OpStatistic(
        source="+".join(s.source for s in stats),
        layout=stats[0].layout,
        rows=rows,
        cores=tuple(sorted(cores.items(), key=lambda kv: (-kv[1].total_us, kv[0]))),
        total_us=sum(r.total_us for r in rows),
        problems=tuple(problems),
    )


def _merge_trace_views(views: list[TraceViewSummary]) -> TraceViewSummary:
    if len(views) == 1:
        return views[0]

    def add(pairs: Iterator[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
        out: dict[str, int] = {}
        for k, v in pairs:
            out[k] = out.get(k, 0) + v
        return tuple(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))

    return TraceViewSummary(
        source="+".join(v.source for v in views),
        events=sum(v.events for v in views),
        aclop_compile_execute=sum(v.aclop_compile_execute for v in views),
        has_device_timeline=any(v.has_device_timeline for v in views),
        task_types=add(kv for v in views for kv in v.task_types),
        ai_cpu_tasks=add(kv for v in views for kv in v.ai_cpu_tasks),
        categories=add(kv for v in views for kv in v.categories),
        problems=tuple(p for v in views for p in v.problems),
    )
