"""Facts from Ascend profiler output: torch_npu kernel_details / msprof op_summary tables,
op_statistic tables and trace_view / msprof JSON timelines, read in bounded memory."""

from __future__ import annotations

import csv
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ascend_audit.safe_io import bounded_lines, open_regular

__all__ = [
    "AiCpuOp",
    "KernelSummary",
    "OpStat",
    "OpStatistic",
    "OpStatisticRow",
    "ProfilerFacts",
    "RankTraces",
    "TraceSource",
    "TraceViewSummary",
    "collect_profiler_facts",
    "discover_traces",
    "merge_summaries",
    "parse_op_statistic",
    "summarize_kernels",
    "summarize_trace_view",
]

AI_CPU = "AI_CPU"
NA = "N/A"
MAX_PROBLEMS = 50
MAX_AICPU_KEYS = 10_000  # distinct (type, name) AI CPU operators kept; more are folded per type
MAX_TYPES = 20_000  # distinct operator types kept per summary
MAX_SAMPLES = 3
CHUNK_BYTES = 16 << 20  # bytes of CSV handed to pyarrow at a time
PARSE_BLOCK = 2 << 20  # pyarrow's parallel parse unit inside a chunk
MAX_LINE_BYTES = 64 << 20
FALLBACK_BATCH_ROWS = 65_536

# Logical column -> header spellings seen across torch_npu and msprof versions.
_COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "name": ("Name", "Op Name", "OP Name"),
    "type": ("Type", "OP Type", "Op Type"),
    "core": ("Accelerator Core", "Task Type", "Core Type"),
    "dur": ("Duration(us)", "Task Duration(us)", "Duration (us)", "Task Duration (us)"),
    "dtypes": ("Input Data Types",),
    "shapes": ("Input Shapes",),
}
_NULL_TOKENS = frozenset({"", NA, "NA", "N/A N/A", "None", "null"})
_STRIP = ' \t"\r\n'

FUSED_ATTENTION_RE = re.compile(
    r"FlashAttention|FusedInferAttention|PagedAttention|IncreFlashAttention|PromptFlashAttention"
    r"|npu_fusion_attention|FusionAttention|FusedAttention|MultiHeadAttention|MlaProlog",
    re.IGNORECASE,
)
BATCH_MATMUL_RE = re.compile(r"^BatchMatMul(V\d+)?$")
SOFTMAX_RE = re.compile(r"^Softmax(V\d+)?$")
FUSED_RMSNORM_RE = re.compile(r"RmsNorm", re.IGNORECASE)
RMSNORM_PIECES = ("Pow", "ReduceMean", "ReduceMeanD", "Rsqrt", "Square")
_SEQ_TYPES_RE = re.compile(r"^(BatchMatMul(V\d+)?|Softmax(V\d+)?|Pow|ReduceMeanD?|Rsqrt)$")


# --------------------------------------------------------------------------- dataclasses


@dataclass(frozen=True)
class OpStat:
    """Count and total device time (us) of a group of kernels."""

    count: int = 0
    total_us: float = 0.0

    @property
    def mean_us(self) -> float:
        return self.total_us / self.count if self.count else 0.0

    def __add__(self, other: OpStat) -> OpStat:
        return OpStat(self.count + other.count, self.total_us + other.total_us)

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "total_us": round(self.total_us, 3),
            "mean_us": round(self.mean_us, 3),
        }


@dataclass(frozen=True)
class AiCpuOp:
    """An operator that ran on AI CPU: per type (name None) or per (type, name)."""

    op_type: str
    name: str | None
    count: int
    total_us: float
    input_dtypes: tuple[str, ...] = ()
    input_shapes: tuple[str, ...] = ()

    @property
    def mean_us(self) -> float:
        return self.total_us / self.count if self.count else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "op_type": self.op_type,
            "name": self.name,
            "count": self.count,
            "total_us": round(self.total_us, 3),
            "mean_us": round(self.mean_us, 3),
            "input_dtypes": list(self.input_dtypes),
            "input_shapes": list(self.input_shapes),
        }


def _pairs_dict(pairs: Iterable[tuple[str, OpStat]]) -> dict[str, Any]:
    return {k: v.to_dict() for k, v in pairs}


@dataclass(frozen=True)
class KernelSummary:
    """What one kernel table (or several merged) says about where device time went."""

    source: str
    layout: str
    columns: tuple[str, ...] = ()
    rows: int = 0
    total_us: float = 0.0
    cores: tuple[tuple[str, OpStat], ...] = ()
    op_types: tuple[tuple[str, OpStat], ...] = ()
    ai_cpu_by_type: tuple[AiCpuOp, ...] = ()
    ai_cpu_by_name: tuple[AiCpuOp, ...] = ()
    transdata: OpStat = OpStat()
    cast: OpStat = OpStat()
    format_cast: OpStat = OpStat()
    fused_attention: tuple[tuple[str, OpStat], ...] = ()
    batch_matmul: OpStat = OpStat()
    softmax: OpStat = OpStat()
    attention_sequences: int = 0
    fused_rmsnorm: tuple[tuple[str, OpStat], ...] = ()
    rmsnorm_pieces: tuple[tuple[str, OpStat], ...] = ()
    rmsnorm_sequences: int = 0
    ranks: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    def core(self, name: str) -> OpStat:
        """Stats of one accelerator core (AI_CORE, AI_CPU, ...); empty when absent."""
        return dict(self.cores).get(name, OpStat())

    @property
    def ai_cpu(self) -> OpStat:
        return self.core(AI_CPU)

    @property
    def ai_cpu_share(self) -> float:
        """Fraction of total device time spent on AI CPU (0..1)."""
        return self.ai_cpu.total_us / self.total_us if self.total_us > 0 else 0.0

    @property
    def has_fused_attention(self) -> bool:
        return any(s.count for _, s in self.fused_attention)

    @property
    def has_fused_rmsnorm(self) -> bool:
        return any(s.count for _, s in self.fused_rmsnorm)

    @property
    def readable(self) -> bool:
        """True when a known layout was detected and at least the header was read."""
        return self.layout not in ("", "unknown")

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "layout": self.layout,
            "columns": list(self.columns),
            "rows": self.rows,
            "total_us": round(self.total_us, 3),
            "cores": _pairs_dict(self.cores),
            "op_types": _pairs_dict(self.op_types),
            "ai_cpu": self.ai_cpu.to_dict(),
            "ai_cpu_share": round(self.ai_cpu_share, 6),
            "ai_cpu_by_type": [o.to_dict() for o in self.ai_cpu_by_type],
            "ai_cpu_by_name": [o.to_dict() for o in self.ai_cpu_by_name],
            "transdata": self.transdata.to_dict(),
            "cast": self.cast.to_dict(),
            "format_cast": self.format_cast.to_dict(),
            "fused_attention": _pairs_dict(self.fused_attention),
            "batch_matmul": self.batch_matmul.to_dict(),
            "softmax": self.softmax.to_dict(),
            "attention_sequences": self.attention_sequences,
            "fused_rmsnorm": _pairs_dict(self.fused_rmsnorm),
            "rmsnorm_pieces": _pairs_dict(self.rmsnorm_pieces),
            "rmsnorm_sequences": self.rmsnorm_sequences,
            "ranks": list(self.ranks),
            "problems": list(self.problems),
        }


@dataclass(frozen=True)
class OpStatisticRow:
    """One row of an op_statistic table."""

    op_type: str
    core: str
    count: int
    total_us: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "op_type": self.op_type,
            "core": self.core,
            "count": self.count,
            "total_us": round(self.total_us, 3),
        }


@dataclass(frozen=True)
class OpStatistic:
    """An op_statistic table: per (operator type, core) counts and times."""

    source: str
    layout: str
    rows: tuple[OpStatisticRow, ...] = ()
    cores: tuple[tuple[str, OpStat], ...] = ()
    total_us: float = 0.0
    problems: tuple[str, ...] = ()

    @property
    def ai_cpu(self) -> tuple[OpStatisticRow, ...]:
        return tuple(r for r in self.rows if r.core == AI_CPU)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "layout": self.layout,
            "rows": [r.to_dict() for r in self.rows],
            "cores": _pairs_dict(self.cores),
            "total_us": round(self.total_us, 3),
            "ai_cpu": [r.to_dict() for r in self.ai_cpu],
            "problems": list(self.problems),
        }


@dataclass(frozen=True)
class TraceViewSummary:
    """Counts taken from a Chrome-trace timeline (trace_view.json or msprof_*.json)."""

    source: str
    events: int = 0
    aclop_compile_execute: int = 0
    has_device_timeline: bool = False
    task_types: tuple[tuple[str, int], ...] = ()
    ai_cpu_tasks: tuple[tuple[str, int], ...] = ()
    categories: tuple[tuple[str, int], ...] = ()
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "events": self.events,
            "aclop_compile_execute": self.aclop_compile_execute,
            "has_device_timeline": self.has_device_timeline,
            "task_types": dict(self.task_types),
            "ai_cpu_tasks": dict(self.ai_cpu_tasks),
            "categories": dict(self.categories),
            "problems": list(self.problems),
        }


@dataclass(frozen=True)
class TraceSource:
    """One profiler file found under a user path, with the rank it belongs to."""

    path: str
    kind: str  # kernel_details | op_summary | op_statistic | trace_view | msprof_json
    rank: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "rank": self.rank}


@dataclass(frozen=True)
class RankTraces:
    """Everything read for one rank."""

    rank: str
    kernels: KernelSummary | None = None
    op_statistic: OpStatistic | None = None
    trace_view: TraceViewSummary | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "kernels": self.kernels.to_dict() if self.kernels else None,
            "op_statistic": self.op_statistic.to_dict() if self.op_statistic else None,
            "trace_view": self.trace_view.to_dict() if self.trace_view else None,
        }


@dataclass(frozen=True)
class ProfilerFacts:
    """All profiler output under one user path: per rank and merged."""

    path: str
    sources: tuple[TraceSource, ...] = ()
    ranks: tuple[RankTraces, ...] = ()
    merged: KernelSummary | None = None
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "sources": [s.to_dict() for s in self.sources],
            "ranks": [r.to_dict() for r in self.ranks],
            "merged": self.merged.to_dict() if self.merged else None,
            "problems": list(self.problems),
        }


# --------------------------------------------------------------------------- helpers


def _clean(value: object) -> str | None:
    """Strip quotes, blanks and the profiler's trailing TAB; N/A and empty become None."""
    if value is None:
        return None
    s = str(value).strip(_STRIP)
    return None if s in _NULL_TOKENS else s


def _to_float(value: object) -> float | None:
    s = _clean(value)
    if s is None:
        return None
    try:
        f = float(s)
    except ValueError:
        return None
    return f if f == f else None  # drop NaN


def _type_from_name(name: str) -> str:
    """Best guess of an operator type from a kernel name (trans_Cast_19 -> Cast)."""
    n = name[6:] if name.startswith("trans_") else name
    if n.startswith("aclnn") and "_" in n:
        return n.rsplit("_", 1)[-1] or n
    m = re.match(r"^(.+?)(?:[-_]?\d+)+$", n)
    return m.group(1) if m else n


def _short(text: str, limit: int = 120) -> str:
    text = text.replace("\r", "").replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit] + "…"


def _is_ai_cpu(core: str | None) -> bool:
    return core is not None and core.upper() in ("AI_CPU", "AICPU")


@dataclass(frozen=True)
class _Layout:
    name: str
    header: tuple[str, ...]
    columns: Mapping[str, str]  # logical -> raw header name
    indices: Mapping[str, int]
    problem: str | None = None
    raw_header: tuple[str, ...] = ()


def _read_header(path: Path) -> tuple[tuple[str, ...] | None, str | None]:
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


def _detect_layout(header: tuple[str, ...], filename: str) -> _Layout:
    stripped = [h.strip(_STRIP) for h in header]
    lower = {h.lower(): i for i, h in reversed(list(enumerate(stripped)))}
    columns: dict[str, str] = {}
    indices: dict[str, int] = {}
    for logical, spellings in _COLUMN_ALIASES.items():
        for sp in spellings:
            i = lower.get(sp.lower())
            if i is not None:
                columns[logical] = header[i]
                indices[logical] = i
                break
    names = set(stripped)
    found = ", ".join(_short(h, 40) for h in stripped[:40]) + (" …" if len(stripped) > 40 else "")
    if (
        "core" not in columns
        or "dur" not in columns
        or not ("type" in columns or "name" in columns)
    ):
        if {"Count", "Total Time(us)"} <= names:
            why = "this is an op_statistic table (use parse_op_statistic), not a kernel table"
        else:
            why = "no accelerator-core, duration and operator type/name columns"
        return _Layout(
            "unknown",
            tuple(stripped),
            {},
            {},
            f"{filename}: unknown kernel table layout ({why}); columns found: {found}",
        )
    core_col = columns["core"].strip(_STRIP)
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
    return _Layout(name, tuple(stripped), columns, indices, raw_header=tuple(header))


# --------------------------------------------------------------------------- accumulation


class _Acc:
    """Mutable aggregate behind KernelSummary; its size never depends on the row count."""

    def __init__(self) -> None:
        self.rows = 0
        self.total_us = 0.0
        # (core, type, is_trans_name) -> [count, total_us]
        self.groups: dict[tuple[str, str, bool], list[float]] = {}
        # (type, name) -> [count, total, dtypes list, shapes list]
        self.aicpu: dict[tuple[str, str | None], list[Any]] = {}
        self.aicpu_folded = False
        self.types_folded = False
        self.attn_seq = 0
        self.rms_seq = 0
        self.seen_bmm = False
        self.rms_state = 0
        self.missing_dur = 0
        self.bad_dur = 0
        self.named_types = 0
        self.problems: list[str] = []

    def problem(self, text: str) -> None:
        if len(self.problems) < MAX_PROBLEMS and text not in self.problems:
            self.problems.append(text)

    def add_group(self, core: str, op_type: str, trans: bool, count: int, total: float) -> None:
        key = (core, op_type, trans)
        slot = self.groups.get(key)
        if slot is None:
            if len(self.groups) >= MAX_TYPES * 4:
                self.types_folded = True
                key = (core, "<other>", trans)
                slot = self.groups.setdefault(key, [0, 0.0])
            else:
                slot = self.groups[key] = [0, 0.0]
        slot[0] += count
        slot[1] += total
        self.rows += count
        self.total_us += total

    def add_aicpu(
        self,
        op_type: str,
        name: str | None,
        count: int,
        total: float,
        dtypes: Iterable[str],
        shapes: Iterable[str],
    ) -> None:
        key = (op_type, name)
        slot = self.aicpu.get(key)
        if slot is None:
            if len(self.aicpu) >= MAX_AICPU_KEYS:
                self.aicpu_folded = True
                key = (op_type, "<other names>")
                slot = self.aicpu.setdefault(key, [0, 0.0, [], []])
            else:
                slot = self.aicpu[key] = [0, 0.0, [], []]
        slot[0] += count
        slot[1] += total
        for value, bucket in ((dtypes, slot[2]), (shapes, slot[3])):
            for v in value:
                if v and v not in bucket and len(bucket) < MAX_SAMPLES:
                    bucket.append(v)

    def feed_sequence(self, types: Iterable[str]) -> None:
        """Ordered pattern counts: BatchMatMul..SoftmaxV2, Pow..ReduceMean..Rsqrt."""
        for t in types:
            if BATCH_MATMUL_RE.match(t):
                self.seen_bmm = True
            elif SOFTMAX_RE.match(t):
                if self.seen_bmm:
                    self.attn_seq += 1
                self.seen_bmm = False
            elif t == "Pow":
                self.rms_state = 1
            elif t.startswith("ReduceMean"):
                self.rms_state = 2 if self.rms_state == 1 else 0
            elif t == "Rsqrt":
                if self.rms_state == 2:
                    self.rms_seq += 1
                self.rms_state = 0

    def finish(
        self, source: str, layout: _Layout | None, extra: Iterable[str] = ()
    ) -> KernelSummary:
        cores: dict[str, OpStat] = {}
        types: dict[str, OpStat] = {}
        transdata = cast = fcast = OpStat()
        for (core, op_type, trans), (count, total) in self.groups.items():
            st = OpStat(int(count), float(total))
            cores[core] = cores.get(core, OpStat()) + st
            types[op_type] = types.get(op_type, OpStat()) + st
            if op_type == "TransData":
                transdata += st
            elif op_type == "Cast" and not _is_ai_cpu(core):
                cast += st
                if trans:
                    fcast += st
        by_type: dict[str, list[Any]] = {}
        by_name: list[AiCpuOp] = []
        for (op_type, name), (count, total, dts, shs) in self.aicpu.items():
            by_name.append(AiCpuOp(op_type, name, int(count), float(total), tuple(dts), tuple(shs)))
            agg = by_type.setdefault(op_type, [0, 0.0, [], []])
            agg[0] += count
            agg[1] += total
            for src, dst in ((dts, agg[2]), (shs, agg[3])):
                for v in src:
                    if v not in dst and len(dst) < MAX_SAMPLES:
                        dst.append(v)
        problems = list(extra) + self.problems
        if self.rows == 0 and layout is not None and not layout.problem:
            problems.append("the table has a header but no kernel rows")
        if self.missing_dur:
            problems.append(f"{self.missing_dur} row(s) have no duration (N/A or empty)")
        if self.bad_dur:
            problems.append(f"{self.bad_dur} row(s) have a duration that is not a number")
        if self.named_types:
            problems.append(
                f"{self.named_types} row(s) have no operator type; types were inferred from names"
            )
        if self.aicpu_folded:
            problems.append(
                f"more than {MAX_AICPU_KEYS} distinct AI CPU operator names; the rest are folded"
            )
        if self.types_folded:
            problems.append("too many distinct operator types; the rest are folded as <other>")
        return _build_summary(
            source=source,
            layout=layout.name if layout else "unknown",
            columns=layout.header if layout else (),
            rows=self.rows,
            total_us=self.total_us,
            cores=cores,
            types=types,
            ai_by_type=[
                AiCpuOp(t, None, int(c), float(tt), tuple(d), tuple(s))
                for t, (c, tt, d, s) in by_type.items()
            ],
            ai_by_name=by_name,
            transdata=transdata,
            cast=cast,
            fcast=fcast,
            attn_seq=self.attn_seq,
            rms_seq=self.rms_seq,
            ranks=(),
            problems=problems,
        )


def _build_summary(
    *,
    source: str,
    layout: str,
    columns: tuple[str, ...],
    rows: int,
    total_us: float,
    cores: Mapping[str, OpStat],
    types: Mapping[str, OpStat],
    ai_by_type: list[AiCpuOp],
    ai_by_name: list[AiCpuOp],
    transdata: OpStat,
    cast: OpStat,
    fcast: OpStat,
    attn_seq: int,
    rms_seq: int,
    ranks: tuple[str, ...],
    problems: list[str],
) -> KernelSummary:
    def ordered(d: Mapping[str, OpStat]) -> tuple[tuple[str, OpStat], ...]:
        return tuple(sorted(d.items(), key=lambda kv: (-kv[1].total_us, kv[0])))

    def select(pred: Any) -> tuple[tuple[str, OpStat], ...]:
        return ordered({t: s for t, s in types.items() if pred(t)})

    def total(pred: Any) -> OpStat:
        out = OpStat()
        for t, s in types.items():
            if pred(t):
                out += s
        return out

    seen: list[str] = []
    for p in problems:
        if p not in seen:
            seen.append(p)
    return KernelSummary(
        source=source,
        layout=layout,
        columns=columns,
        rows=rows,
        total_us=total_us,
        cores=ordered(cores),
        op_types=ordered(types),
        ai_cpu_by_type=tuple(sorted(ai_by_type, key=lambda o: (-o.total_us, o.op_type))),
        ai_cpu_by_name=tuple(
            sorted(ai_by_name, key=lambda o: (-o.total_us, o.op_type, o.name or ""))
        ),
        transdata=transdata,
        cast=cast,
        format_cast=fcast,
        fused_attention=select(lambda t: bool(FUSED_ATTENTION_RE.search(t))),
        batch_matmul=total(lambda t: bool(BATCH_MATMUL_RE.match(t))),
        softmax=total(lambda t: bool(SOFTMAX_RE.match(t))),
        attention_sequences=attn_seq,
        fused_rmsnorm=select(lambda t: bool(FUSED_RMSNORM_RE.search(t))),
        rmsnorm_pieces=select(lambda t: t in RMSNORM_PIECES),
        rmsnorm_sequences=rms_seq,
        ranks=ranks,
        problems=tuple(seen[:MAX_PROBLEMS]),
    )


def _absorb_batch(acc: _Acc, cols: Mapping[str, Any], n: int) -> None:
    """Aggregate one record batch of raw string columns into acc (vectorised)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if n == 0:
        return
    # Durations: fast cast first, clean only when the fast path refuses.
    dur_raw = cols["dur"]
    try:
        dur = pc.cast(dur_raw, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        cleaned = pc.ascii_trim(dur_raw, _STRIP)
        cleaned = pc.if_else(
            pc.is_in(cleaned, value_set=pa.array(sorted(_NULL_TOKENS))),
            pa.scalar(None, pa.string()),
            cleaned,
        )
        try:
            dur = pc.cast(cleaned, pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            vals = cleaned.to_pylist()
            conv = [_to_float(v) for v in vals]
            bad = sum(1 for v, c in zip(vals, conv) if v is not None and c is None)
            acc.bad_dur += bad
            acc.missing_dur -= bad
            dur = pa.array(conv, pa.float64())
    acc.missing_dur += dur.null_count
    dur = pc.fill_null(dur, 0.0)

    # Core and type: dictionary-encode, clean the small dictionaries in Python.
    core_codes, core_vocab = _encode(cols["core"], n)
    if core_codes.null_count:
        core_vocab.append(NA)
        core_codes = pc.fill_null(core_codes, len(core_vocab) - 1)
    names = cols.get("name")
    type_col = cols.get("type")
    if type_col is None:
        type_col = pa.nulls(n, pa.string())
    type_codes, type_vocab = _encode(type_col, n)
    if type_codes.null_count and names is not None:
        # Rows without a type: infer it from the kernel name (trans_Cast_19 -> Cast).
        missing = pc.is_null(type_codes)
        uniq = pc.unique(pc.filter(names, missing)).drop_null()
        if len(uniq):
            mapped = [_type_from_name(_clean(v) or "") or NA for v in uniq.to_pylist()]
            base = len(type_vocab)
            index: dict[str, int] = {}
            codes: list[int] = []
            for t in mapped:
                if t not in index:
                    index[t] = base + len(index)
                    type_vocab.append(t)
                codes.append(index[t])
            pos = pc.index_in(names, value_set=uniq)
            derived = pc.take(pa.array(codes, pa.int32()), pos)
            type_codes = pc.if_else(missing, derived, type_codes)
            acc.named_types += int(pc.sum(pc.and_(missing, pc.is_valid(derived))).as_py() or 0)
    if type_codes.null_count:
        type_vocab.append(NA)
        type_codes = pc.fill_null(type_codes, len(type_vocab) - 1)
    if names is not None:
        trans = pc.fill_null(pc.starts_with(names, "trans_"), False)
    else:
        trans = pa.array([False] * n)

    table = pa.table({"c": core_codes, "t": type_codes, "x": trans, "d": dur})
    grouped = table.group_by(["c", "t", "x"]).aggregate(
        [("d", "sum"), ("d", "count", pc.CountOptions(mode="all"))]
    )
    for c, t, x, s, k in zip(
        grouped["c"].to_pylist(),
        grouped["t"].to_pylist(),
        grouped["x"].to_pylist(),
        grouped["d_sum"].to_pylist(),
        grouped["d_count"].to_pylist(),
    ):
        acc.add_group(core_vocab[c], type_vocab[t], bool(x), int(k), float(s or 0.0))

    # AI CPU rows: few, grouped with their names and input samples.
    ai_codes = [i for i, c in enumerate(core_vocab) if _is_ai_cpu(c)]
    if ai_codes:
        mask = pc.is_in(core_codes, value_set=pa.array(ai_codes, core_codes.type))
        sub = {"t": pc.filter(type_codes, mask), "d": pc.filter(dur, mask)}
        for key in ("name", "dtypes", "shapes"):
            col = cols.get(key)
            sub[key] = (
                pc.filter(col, mask) if col is not None else pa.nulls(len(sub["t"]), pa.string())
            )
        if len(sub["t"]):
            g = (
                pa.table(sub)
                .group_by(["t", "name", "dtypes", "shapes"])
                .aggregate([("d", "sum"), ("d", "count", pc.CountOptions(mode="all"))])
            )
            for t, name, dts, shs, s, k in zip(
                g["t"].to_pylist(),
                g["name"].to_pylist(),
                g["dtypes"].to_pylist(),
                g["shapes"].to_pylist(),
                g["d_sum"].to_pylist(),
                g["d_count"].to_pylist(),
            ):
                op_type = type_vocab[t]
                acc.add_aicpu(
                    op_type,
                    _clean(name) or op_type,
                    int(k),
                    float(s or 0.0),
                    [d for d in (_clean(dts),) if d],
                    [x for x in (_clean(shs),) if x],
                )

    # Ordered sub-sequence of the attention / RMSNorm building blocks.
    seq_codes = [i for i, t in enumerate(type_vocab) if _SEQ_TYPES_RE.match(t)]
    if seq_codes:
        mask = pc.is_in(type_codes, value_set=pa.array(seq_codes, type_codes.type))
        picked = pc.filter(type_codes, mask).to_pylist()
        if picked:
            acc.feed_sequence(type_vocab[i] for i in picked)


def _encode(arr: Any, n: int) -> tuple[Any, list[Any]]:
    """Dictionary codes (int32, null for missing) and the cleaned vocabulary."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    enc = pc.dictionary_encode(arr)
    raw_vocab = enc.dictionary.to_pylist()
    vocab: list[Any] = []
    index: dict[str, int] = {}
    remap: list[int | None] = []
    for v in raw_vocab:
        c = _clean(v)
        if c is None:
            remap.append(None)
            continue
        if c not in index:
            index[c] = len(vocab)
            vocab.append(c)
        remap.append(index[c])
    codes = pc.take(pa.array(remap, pa.int32()), enc.indices.cast(pa.int32()))
    return codes, vocab


# --------------------------------------------------------------------------- kernel tables


def _arrow_without_pandas() -> None:
    """Import pyarrow so that it does not pull in pandas, which this layer never uses.

    pyarrow probes for pandas the first time it converts Python values, and importing pandas
    costs ~0.4 s. Hiding pandas for that one probe makes pyarrow settle on "no pandas" for this
    process (its pandas integration, e.g. to_pandas, is then off); pandas itself stays importable.
    """
    import pyarrow as pa

    if "pandas" in sys.modules:
        return
    hide = _HidePandas()
    sys.meta_path.insert(0, hide)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(hide)


class _HidePandas:
    """A meta-path finder under which `import pandas` fails at once."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("pandas hidden from pyarrow's optional probe")


def summarize_kernels(
    path: str | os.PathLike[str], progress: Callable[[int], None] | None = None
) -> KernelSummary:
    """Summarise a kernel_details.csv or op_summary_*.csv in bounded memory; never raises."""
    p = Path(path)
    source = str(p)
    try:
        if not p.is_file():
            return KernelSummary(source, "", problems=(f"{source}: no such file",))
        header, problem = _read_header(p)
        if header is None:
            return KernelSummary(source, "unknown", problems=(problem or "unreadable",))
        layout = _detect_layout(header, p.name)
        if layout.problem:
            return KernelSummary(source, "unknown", layout.header, problems=(layout.problem,))
        try:
            _arrow_without_pandas()
            return _summarize_arrow(p, layout, progress)
        except _FallBack as why:
            acc = _Acc()
            _summarize_csv(p, layout, acc)
            return acc.finish(source, layout, [f"{p.name}: {why}; read with the csv module"])
    except Exception as exc:  # a parser must never crash the audit
        return KernelSummary(
            source,
            "unknown",
            problems=(f"{p.name}: cannot summarise: {type(exc).__name__}: {exc}",),
        )


class _FallBack(Exception):
    pass


def _summarize_arrow(
    p: Path, layout: _Layout, progress: Callable[[int], None] | None = None
) -> KernelSummary:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    bad_rows: list[str] = []
    bad_count = [0]

    def on_invalid(row: Any) -> str:
        bad_count[0] += 1
        if len(bad_rows) < 3:
            bad_rows.append(
                f"expected {row.expected_columns} fields, got {row.actual_columns}: "
                f"{_short(row.text or '', 80)!r}"
            )
        return "skip"

    raw_names = list(dict.fromkeys(layout.columns.values()))
    if len(set(layout.raw_header)) != len(layout.raw_header):
        raise _FallBack("the header repeats a column name")
    acc = _Acc()
    read_opts = pacsv.ReadOptions(
        column_names=list(layout.raw_header), block_size=PARSE_BLOCK, use_threads=True
    )
    parse_opts = pacsv.ParseOptions(invalid_row_handler=on_invalid)
    convert_opts = pacsv.ConvertOptions(
        include_columns=raw_names,
        column_types={c: pa.string() for c in raw_names},
        null_values=["N/A", ""],
        strings_can_be_null=True,
        quoted_strings_can_be_null=True,
    )
    try:
        for chunk in _line_chunks(p, progress):
            table = pacsv.read_csv(
                pa.py_buffer(chunk),
                read_options=read_opts,
                parse_options=parse_opts,
                convert_options=convert_opts,
            )
            cols = {
                logical: table.column(raw).combine_chunks()
                for logical, raw in layout.columns.items()
            }
            _absorb_batch(acc, cols, table.num_rows)
            del table, cols
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        text = str(exc)
        reason = "invalid UTF-8 bytes" if "UTF8" in text else _short(text, 100)
        raise _FallBack(f"pyarrow could not parse it ({reason})") from exc
    extra = []
    if bad_count[0]:
        extra.append(
            f"{p.name}: {bad_count[0]} malformed row(s) skipped (truncated file?); "
            + "; ".join(bad_rows)
        )
    return acc.finish(str(p), layout, extra)


def _line_chunks(p: Path, progress: Callable[[int], None] | None = None) -> Iterator[memoryview]:
    """The data rows of a CSV file in ~CHUNK_BYTES pieces cut at line ends, header skipped.

    Arrow's own streaming reader keeps many blocks in flight (peak memory ~40x the block
    size); cutting the file ourselves keeps one chunk alive. Kernel tables never put a
    newline inside a quoted value; if one did, the rows around a cut would be reported as
    malformed rather than misread.
    """
    buf = bytearray(CHUNK_BYTES)
    with open_regular(p) as fh:
        head = fh.readline(MAX_LINE_BYTES)
        if not head.endswith(b"\n"):
            return
        filled = 0
        while True:
            if filled == len(buf):
                if len(buf) >= MAX_LINE_BYTES:
                    raise _FallBack(f"a line longer than {MAX_LINE_BYTES >> 20} MB")
                buf = buf + bytes(len(buf))  # a new object: old chunks may still be viewed
            view = memoryview(buf)
            n = fh.readinto(view[filled:])
            if progress and n:
                progress(n)
            if not n:
                if filled:
                    yield view[:filled]
                return
            filled += n
            cut = buf.rfind(b"\n", 0, filled) + 1
            if cut == 0:
                continue
            yield view[:cut]
            del view
            tail = filled - cut
            buf[:tail] = buf[cut:filled]
            filled = tail


def _summarize_csv(p: Path, layout: _Layout, acc: _Acc) -> None:
    """Fallback reader: csv module, fixed-size batches fed to the same aggregation."""
    import pyarrow as pa

    want = dict(layout.indices)
    width = len(layout.header)
    bad = 0
    samples: list[str] = []
    buf: dict[str, list[str | None]] = {k: [] for k in want}

    def flush() -> None:
        n = len(buf["core"])
        if n:
            cols = {k: pa.array(v, pa.string()) for k, v in buf.items()}
            _absorb_batch(acc, cols, n)
            for v in buf.values():
                v.clear()

    with open_regular(p, "r", encoding="utf-8", errors="replace", newline="") as fh:
        lines = (line.replace("\x00", "") for line in bounded_lines(fh))
        reader = csv.reader(lines)
        first = True
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                bad += 1
                if len(samples) < 3:
                    samples.append(str(exc))
                continue
            if first:
                first = False
                continue
            if len(row) != width:
                if not row:
                    continue
                bad += 1
                if len(samples) < 3:
                    samples.append(
                        f"line {reader.line_num}: {len(row)} fields: {_short(','.join(row), 80)!r}"
                    )
                if len(row) < width:
                    continue
            for k, i in want.items():
                v = row[i]
                buf[k].append(None if v in ("", NA) else v)
            if len(buf["core"]) >= FALLBACK_BATCH_ROWS:
                flush()
    flush()
    if bad:
        acc.problem(f"{p.name}: {bad} malformed row(s) (truncated file?); " + "; ".join(samples))


def merge_summaries(summaries: Iterable[KernelSummary]) -> KernelSummary:
    """One summary over several ranks' kernel tables (counts and times added)."""
    items = [s for s in summaries if s is not None]
    cores: dict[str, OpStat] = {}
    types: dict[str, OpStat] = {}
    ai_type: dict[str, list[Any]] = {}
    ai_name: dict[tuple[str, str | None], list[Any]] = {}
    transdata = cast = fcast = OpStat()
    rows = 0
    total = 0.0
    attn = rms = 0
    ranks: list[str] = []
    problems: list[str] = []
    layouts: list[str] = []
    for i, s in enumerate(items):
        label = s.ranks[0] if len(s.ranks) == 1 else (s.source or f"#{i}")
        ranks.extend(s.ranks or (label,))
        if s.layout and s.layout not in layouts:
            layouts.append(s.layout)
        rows += s.rows
        total += s.total_us
        attn += s.attention_sequences
        rms += s.rmsnorm_sequences
        transdata += s.transdata
        cast += s.cast
        fcast += s.format_cast
        for k, v in s.cores:
            cores[k] = cores.get(k, OpStat()) + v
        for k, v in s.op_types:
            types[k] = types.get(k, OpStat()) + v
        for target, ops, keyf in (
            (ai_type, s.ai_cpu_by_type, lambda o: o.op_type),
            (ai_name, s.ai_cpu_by_name, lambda o: (o.op_type, o.name)),
        ):
            for o in ops:
                slot = target.setdefault(keyf(o), [0, 0.0, [], []])
                slot[0] += o.count
                slot[1] += o.total_us
                for src, dst in ((o.input_dtypes, slot[2]), (o.input_shapes, slot[3])):
                    for v in src:
                        if v not in dst and len(dst) < MAX_SAMPLES:
                            dst.append(v)
        problems.extend(f"[{label}] {p}" for p in s.problems)
    if not items:
        problems.append("no kernel tables to merge")
    return _build_summary(
        source="merged",
        layout="+".join(layouts) if layouts else "",
        columns=(),
        rows=rows,
        total_us=total,
        cores=cores,
        types=types,
        ai_by_type=[
            AiCpuOp(k, None, c, t, tuple(d), tuple(h)) for k, (c, t, d, h) in ai_type.items()
        ],
        ai_by_name=[
            AiCpuOp(k[0], k[1], c, t, tuple(d), tuple(h)) for k, (c, t, d, h) in ai_name.items()
        ],
        transdata=transdata,
        cast=cast,
        fcast=fcast,
        attn_seq=attn,
        rms_seq=rms,
        ranks=tuple(ranks),
        problems=problems,
    )


# --------------------------------------------------------------------------- op_statistic


def parse_op_statistic(path: str | os.PathLike[str]) -> OpStatistic:
    """Read an op_statistic table (torch_npu or msprof); never raises."""
    p = Path(path)
    source = str(p)
    try:
        if not p.is_file():
            return OpStatistic(source, "", problems=(f"{source}: no such file",))
        header, problem = _read_header(p)
        if header is None:
            return OpStatistic(source, "unknown", problems=(problem or "unreadable",))
        stripped = [h.strip(_STRIP) for h in header]
        idx = {h: i for i, h in reversed(list(enumerate(stripped)))}
        type_i = idx.get("OP Type", idx.get("Op Type", idx.get("Type")))
        core_name = next(
            (c for c in ("Core Type", "Task Type", "Accelerator Core") if c in idx), None
        )
        count_i = idx.get("Count")
        total_i = idx.get("Total Time(us)")
        if type_i is None or core_name is None or count_i is None or total_i is None:
            found = ", ".join(_short(h, 40) for h in stripped[:40])
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
                op_type = _clean(row[type_i]) or NA
                core = _clean(row[core_i]) or NA
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


# --------------------------------------------------------------------------- trace view JSON

_JSON_TOKEN_RE = re.compile(
    rb'"(name|Task Type|cat|ph)"\s*:\s*"((?:[^"\\]|\\.){0,4096})"', re.DOTALL
)
_CHUNK = 4 << 20
_OVERLAP = 8192
MAX_KEYS = 1000


def _bump(counter: dict[str, int], key: str, folded: list[bool]) -> None:
    if key in counter:
        counter[key] += 1
    elif len(counter) < MAX_KEYS:
        counter[key] = 1
    else:
        folded[0] = True
        counter["<other>"] = counter.get("<other>", 0) + 1


def summarize_trace_view(path: str | os.PathLike[str]) -> TraceViewSummary:
    """Count run-time compiled operators and device task types in a trace JSON, streaming."""
    p = Path(path)
    source = str(p)
    try:
        if not p.is_file():
            return TraceViewSummary(source, problems=(f"{source}: no such file",))
        events = compile_exec = 0
        device = False
        tasks: dict[str, int] = {}
        ai_cpu: dict[str, int] = {}
        cats: dict[str, int] = {}
        folded = [False]
        last_name = ""
        first_char = b""
        last_char = b""
        with open_regular(p) as fh:
            carry = b""
            while True:
                chunk = fh.read(_CHUNK)
                eof = not chunk
                buf = carry + chunk
                if not buf:
                    break
                if not first_char:
                    lead = buf.lstrip()
                    first_char = lead[:1]
                    if lead.startswith(b"\xef\xbb\xbf"):
                        first_char = lead[3:].lstrip()[:1]
                tail = buf.rstrip()
                if tail:
                    last_char = tail[-1:]
                limit = len(buf) if eof else max(0, len(buf) - _OVERLAP)
                end = 0
                for m in _JSON_TOKEN_RE.finditer(buf):
                    if m.start() >= limit:
                        break
                    end = m.end()
                    key, raw = m.group(1), m.group(2)
                    value = raw.decode("utf-8", errors="replace")
                    if key == b"name":
                        last_name = value
                        if "aclopCompileAndExecute" in value:
                            compile_exec += 1
                        elif value == "Ascend Hardware":
                            device = True
                    elif key == b"ph":
                        events += 1
                    elif key == b"cat":
                        _bump(cats, value, folded)
                    else:
                        _bump(tasks, value, folded)
                        if _is_ai_cpu(value):
                            _bump(ai_cpu, last_name, folded)
                if eof:
                    break
                carry = buf[max(end, limit) :]
        problems: list[str] = []
        if first_char not in (b"[", b"{"):
            problems.append(f"{p.name}: not a JSON trace (it does not start with '[' or '{{')")
        elif last_char not in (b"]", b"}"):
            problems.append(f"{p.name}: the JSON ends before its closing bracket (truncated?)")
        if folded[0]:
            problems.append(f"more than {MAX_KEYS} distinct keys in a count; the rest are <other>")
        if tasks:
            device = True

        def ordered(d: dict[str, int]) -> tuple[tuple[str, int], ...]:
            return tuple(sorted(d.items(), key=lambda kv: (-kv[1], kv[0])))

        return TraceViewSummary(
            source=source,
            events=events,
            aclop_compile_execute=compile_exec,
            has_device_timeline=device,
            task_types=ordered(tasks),
            ai_cpu_tasks=ordered(ai_cpu),
            categories=ordered(cats),
            problems=tuple(problems),
        )
    except Exception as exc:
        return TraceViewSummary(
            source, problems=(f"{p.name}: cannot read: {type(exc).__name__}: {exc}",)
        )


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
    header, _ = _read_header(p)
    if header is None:
        return None
    stripped = {h.strip(_STRIP) for h in header}
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
