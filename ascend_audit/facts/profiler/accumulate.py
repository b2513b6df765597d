"""Accumulating kernel rows into a KernelSummary in bounded memory (Arrow batches or CSV rows)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ascend_audit.facts.profiler.columns import (
    NULL_TOKENS,
    STRIP_CHARS,
    TableLayout,
    _to_float,
    clean_cell,
    is_ai_cpu,
    type_from_name,
)
from ascend_audit.facts.profiler.summaries import (
    BATCH_MATMUL_RE,
    FUSED_ATTENTION_RE,
    FUSED_RMSNORM_RE,
    MAX_AICPU_KEYS,
    MAX_PROBLEMS,
    MAX_SAMPLES,
    MAX_TYPES,
    NA,
    RMSNORM_PIECES,
    SEQUENCE_TYPES_RE,
    SOFTMAX_RE,
    AiCpuOp,
    KernelSummary,
    OpStat,
)

# --------------------------------------------------------------------------- accumulation


class KernelAccumulator:
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
        self, source: str, layout: TableLayout | None, extra: Iterable[str] = ()
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
            elif op_type == "Cast" and not is_ai_cpu(core):
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
        return build_summary(
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


def build_summary(
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


def absorb_batch(acc: KernelAccumulator, cols: Mapping[str, Any], n: int) -> None:
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
        cleaned = pc.ascii_trim(dur_raw, STRIP_CHARS)
        cleaned = pc.if_else(
            pc.is_in(cleaned, value_set=pa.array(sorted(NULL_TOKENS))),
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
            mapped = [type_from_name(clean_cell(v) or "") or NA for v in uniq.to_pylist()]
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
    ai_codes = [i for i, c in enumerate(core_vocab) if is_ai_cpu(c)]
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
                    clean_cell(name) or op_type,
                    int(k),
                    float(s or 0.0),
                    [d for d in (clean_cell(dts),) if d],
                    [x for x in (clean_cell(shs),) if x],
                )

    # Ordered sub-sequence of the attention / RMSNorm building blocks.
    seq_codes = [i for i, t in enumerate(type_vocab) if SEQUENCE_TYPES_RE.match(t)]
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
        c = clean_cell(v)
        if c is None:
            remap.append(None)
            continue
        if c not in index:
            index[c] = len(vocab)
            vocab.append(c)
        remap.append(index[c])
    codes = pc.take(pa.array(remap, pa.int32()), enc.indices.cast(pa.int32()))
    return codes, vocab
