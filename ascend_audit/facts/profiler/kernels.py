"""kernel_details / op_summary tables: summarised through pyarrow in chunks, else the csv module;
merging the summaries of several ranks."""

from __future__ import annotations

import csv
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ascend_audit.facts.profiler.accumulate import KernelAccumulator, absorb_batch, build_summary
from ascend_audit.facts.profiler.columns import TableLayout, detect_layout, read_header, shorten
from ascend_audit.facts.profiler.summaries import MAX_SAMPLES, NA, AiCpuOp, KernelSummary, OpStat
from ascend_audit.safe_io import bounded_lines, open_regular

CHUNK_BYTES = 16 << 20  # bytes of CSV handed to pyarrow at a time
PARSE_BLOCK = 2 << 20  # pyarrow's parallel parse unit inside a chunk
MAX_LINE_BYTES = 64 << 20
FALLBACK_BATCH_ROWS = 65_536

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
        header, problem = read_header(p)
        if header is None:
            return KernelSummary(source, "unknown", problems=(problem or "unreadable",))
        layout = detect_layout(header, p.name)
        if layout.problem:
            return KernelSummary(source, "unknown", layout.header, problems=(layout.problem,))
        try:
            _arrow_without_pandas()
            return _summarize_arrow(p, layout, progress)
        except _FallBack as why:
            acc = KernelAccumulator()
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
    p: Path, layout: TableLayout, progress: Callable[[int], None] | None = None
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
                f"{shorten(row.text or '', 80)!r}"
            )
        return "skip"

    raw_names = list(dict.fromkeys(layout.columns.values()))
    if len(set(layout.raw_header)) != len(layout.raw_header):
        raise _FallBack("the header repeats a column name")
    acc = KernelAccumulator()
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
            absorb_batch(acc, cols, table.num_rows)
            del table, cols
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        text = str(exc)
        reason = "invalid UTF-8 bytes" if "UTF8" in text else shorten(text, 100)
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


def _summarize_csv(p: Path, layout: TableLayout, acc: KernelAccumulator) -> None:
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
            absorb_batch(acc, cols, n)
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
                        f"line {reader.line_num}: {len(row)} fields: {shorten(','.join(row), 80)!r}"
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
