"""kernel_details / op_summary tables: summarised by the fast path (table_scan), else the csv
module; merging the summaries of several ranks."""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Iterable, Iterator
from operator import itemgetter
from pathlib import Path
from typing import Any

from ascend_audit.facts.profiler.accumulate import (
    KernelAccumulator,
    absorb_rows,
    build_summary,
    text_cell,
)
from ascend_audit.facts.profiler.columns import TableLayout, detect_layout, read_header, shorten
from ascend_audit.facts.profiler.summaries import MAX_SAMPLES, AiCpuOp, KernelSummary, OpStat
from ascend_audit.facts.profiler.table_scan import scan_table
from ascend_audit.safe_io import bounded_lines, open_regular

BATCH_ROWS = 65_536  # rows of the csv-module reader aggregated at a time
# Above this size pyarrow's threaded parse pays for its import (idle 2-core VM, 2023 layout:
# 100k rows / 23 MB even, 1M rows 3.1 s stdlib vs 1.0 s pyarrow; benchmarks/README.md). pyarrow
# is an optional extra (`pip install 'ascend-audit[arrow]'`, ~170 MB): without it the stdlib
# fast path reads every size.
ARROW_ABOVE_BYTES = 32 << 20

# --------------------------------------------------------------------------- kernel tables


def arrow_installed() -> bool:
    """pyarrow is importable (the optional `ascend-audit[arrow]` extra), without importing it."""
    import importlib.util

    try:
        return importlib.util.find_spec("pyarrow") is not None
    except (ImportError, ValueError):
        return False


def summarize_kernels(
    path: str | os.PathLike[str], progress: Callable[[int], None] | None = None
) -> KernelSummary:
    """Summarise a kernel_details.csv or op_summary_*.csv in bounded memory; never raises.

    The fast path (table_scan) reads most files; what it cannot prove it reads exactly as the
    csv module does, the csv module reads.
    """
    p = Path(path)
    source = str(p)
    try:
        if not p.is_file():
            return KernelSummary(source, "", problems=(f"{source}: no such file",))
        header, problem = read_header(p)
        if header is None:
            return KernelSummary(source, "unknown", problems=(problem or "unreadable",))
        layout = detect_layout(header, p.name)
        if layout.problem:
            return KernelSummary(source, "unknown", layout.header, problems=(layout.problem,))
        arrow_gave_up = False
        if p.stat().st_size > ARROW_ABOVE_BYTES and arrow_installed():
            from ascend_audit.facts.profiler.kernels_arrow import _FallBack, summarize_kernels_arrow

            try:
                return summarize_kernels_arrow(p, layout, progress)
            except (_FallBack, ImportError):
                arrow_gave_up = True  # the csv module reads it below
        # without pyarrow (the optional [arrow] extra) a large table takes the stdlib fast path
        fast = None if arrow_gave_up else scan_table(p, layout, progress)
        if fast is not None:
            rows = CsvRows(p.name, layout, fast.acc)
            rows.not_utf8 = fast.not_utf8
            if fast.last_line:
                rows.feed([fast.last_line], skip_header=False, lines_before=fast.lines_before)
            return fast.acc.finish(source, layout, rows.finish())
        acc = KernelAccumulator()
        rows = CsvRows(p.name, layout, acc)
        with open_regular(p) as fh:
            rows.feed(bounded_lines(fh), skip_header=True)
        return acc.finish(source, layout, rows.finish())
    except Exception as exc:  # a parser must never crash the audit
        return KernelSummary(
            source,
            "unknown",
            problems=(f"{p.name}: cannot summarise: {type(exc).__name__}: {exc}",),
        )


class CsvRows:
    """The csv-module reader of kernel tables: the reference the fast path must equal.

    Rows whose field count differs from the header's are skipped and reported as malformed;
    the rest are aggregated in batches of BATCH_ROWS.
    """

    def __init__(self, name: str, layout: TableLayout, acc: KernelAccumulator) -> None:
        self.name = name
        self.acc = acc
        by_index = sorted((i, k) for k, i in layout.indices.items())
        self.at = {k: pos for pos, (_i, k) in enumerate(by_index)}
        self.pick = itemgetter(*(i for i, _k in by_index))
        self.width = len(layout.header)
        self.buf: list[Any] = []
        self.bad = 0
        self.samples: list[str] = []
        self.not_utf8 = False

    def _decode(self, lines: Iterable[bytes]) -> Iterator[str]:
        for line in lines:
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                self.not_utf8 = True
                text = line.decode("utf-8", "replace")
            yield text.replace("\x00", "")

    def _malformed(self, text: str) -> None:
        self.bad += 1
        if len(self.samples) < 3:
            self.samples.append(text)

    def feed(self, lines: Iterable[bytes], skip_header: bool, lines_before: int = 0) -> None:
        """Read the records of these lines (the first one is the header when skip_header)."""
        reader = csv.reader(self._decode(lines))
        first = skip_header
        width = self.width
        pick = self.pick
        buf = self.buf
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                self._malformed(f"line {lines_before + reader.line_num}: {exc}")
                continue
            if first:
                first = False
                continue
            if len(row) != width:
                if row:
                    self._malformed(
                        f"line {lines_before + reader.line_num}: {len(row)} of {width} fields: "
                        f"{shorten(','.join(row), 80)!r}"
                    )
                continue
            buf.append(pick(row))
            if len(buf) >= BATCH_ROWS:
                self._flush()
        self._flush()

    def _flush(self) -> None:
        if self.buf:
            absorb_rows(self.acc, self.buf, self.at, text_cell)
            self.buf.clear()

    def finish(self) -> list[str]:
        """The problems of what was read."""
        out = []
        if self.not_utf8:
            out.append(f"{self.name}: bytes that are not UTF-8 were read as U+FFFD")
        if self.bad:
            out.append(
                f"{self.name}: {self.bad} malformed row(s) skipped (truncated file?); "
                + "; ".join(self.samples)
            )
        return out


def merge_summaries(summaries: Iterable[KernelSummary]) -> KernelSummary:
    """One summary over several ranks' kernel tables (counts and times added)."""
    items = [s for s in summaries if s is not None]
    cores: dict[str, OpStat] = {}
    types: dict[str, OpStat] = {}
    ai_type: dict[Any, list[Any]] = {}
    ai_name: dict[Any, list[Any]] = {}
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
        by_key: tuple[
            tuple[dict[Any, list[Any]], tuple[AiCpuOp, ...], Callable[[AiCpuOp], Any]], ...
        ]
        by_key = (
            (ai_type, s.ai_cpu_by_type, lambda o: o.op_type),
            (ai_name, s.ai_cpu_by_name, lambda o: (o.op_type, o.name)),
        )
        for target, ops, keyf in by_key:
            for o in ops:
                slot = target.setdefault(keyf(o), [0, 0.0, [], []])
                slot[0] += o.count
                slot[1] += o.total_us
                for src, dst in ((o.input_dtypes, slot[2]), (o.input_shapes, slot[3])):
                    for sample in src:
                        if sample not in dst and len(dst) < MAX_SAMPLES:
                            dst.append(sample)
        problems.extend(f"[{label}] {p}" for p in s.problems)
    if not items:
        problems.append("no kernel tables to merge")
    return build_summary(
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
