"""Accumulating kernel rows into a KernelSummary in bounded memory (column-wise batches)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import reduce
from itertools import compress
from math import isnan, nan
from operator import add, itemgetter
from typing import Any

from ascend_audit.facts.profiler.columns import (
    TableLayout,
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
        # per cell function: raw key -> (its group slot, final type, inferred from the name,
        # AI CPU name or _NOT_AI); a key is interpreted once per table, not once per batch
        self.keys: dict[Any, dict[Any, tuple[list[float], str, bool, Any]]] = {}

    def problem(self, text: str) -> None:
        if len(self.problems) < MAX_PROBLEMS and text not in self.problems:
            self.problems.append(text)

    def group_slot(self, core: str, op_type: str, trans: bool) -> list[float]:
        """The [count, total_us] of one (core, type, trans_ name) group; past MAX_TYPES * 4
        groups new types fold into <other>."""
        key = (core, op_type, trans)
        slot = self.groups.get(key)
        if slot is None:
            if len(self.groups) >= MAX_TYPES * 4:
                self.types_folded = True
                slot = self.groups.setdefault((core, "<other>", trans), [0, 0.0])
            else:
                slot = self.groups[key] = [0, 0.0]
        return slot

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


def text_cell(value: str | None) -> str | None:
    """A csv-module cell as the aggregation sees it: empty and N/A are missing."""
    return None if value is None or value in ("", NA) else value


def absorb_rows(
    acc: KernelAccumulator,
    rows: Sequence[Sequence[Any]],
    at: Mapping[str, int],
    cell: Callable[[Any], str | None] = text_cell,
) -> None:
    """Aggregate one batch of rows into acc; `at` names the position of each column in a row."""
    if not rows:
        return
    named = [k for k in ("core", "type", "name") if k in at]
    dt_at, sh_at = at.get("dtypes"), at.get("shapes")

    def inputs(picked: list[int]) -> list[tuple[Any, Any]]:
        return [
            (
                None if dt_at is None else rows[i][dt_at],
                None if sh_at is None else rows[i][sh_at],
            )
            for i in picked
        ]

    absorb_keyed(
        acc,
        list(map(itemgetter(*(at[k] for k in named)), rows)),
        list(map(itemgetter(at["dur"]), rows)),
        lambda key: dict(zip(named, key)),
        cell,
        inputs,
    )


def absorb_keyed(
    acc: KernelAccumulator,
    keys: Sequence[Any],
    raw_durations: Sequence[Any],
    fields_of: Callable[[Any], Mapping[str, Any]],
    cell: Callable[[Any], str | None],
    inputs: Callable[[list[int]], Sequence[tuple[Any, Any]]],
) -> None:
    """Aggregate one batch given column-wise: each row's raw key (`fields_of(key)` gives its
    core, type and name) and raw duration; `inputs(rows)` gives the raw input dtypes and shapes
    of the AI CPU rows at those indices (asked once, only when there are some).

    `cell` turns a raw value into its text (None when missing); it runs once per distinct key
    and on AI CPU rows only. Durations are added row by row in file order, so the totals do
    not depend on where batches are cut.
    """
    n = len(keys)
    if n == 0:
        return
    known = acc.keys.setdefault(cell, {})
    slots: dict[Any, list[float]] = {}
    final_type: dict[Any, str] = {}
    ai_names: dict[Any, str | None] = {}
    for key, count in Counter(keys).items():  # first-appearance order
        seen = known.get(key)
        if seen is None:
            seen = known[key] = _interpret(acc, fields_of(key), cell)
        slot, op_type, inferred, ai_name = seen
        slot[0] += count
        if inferred:
            acc.named_types += count
        slots[key] = slot
        final_type[key] = op_type
        if ai_name is not _NOT_AI:
            ai_names[key] = ai_name
    acc.rows += n
    durations = _durations(acc, raw_durations, cell)
    for slot, dur in zip(map(slots.__getitem__, keys), durations):
        slot[1] += dur
    acc.total_us = reduce(add, durations, acc.total_us)  # row by row, in C
    if ai_names:
        picked = list(compress(range(n), map(ai_names.__contains__, keys)))
        for i, (dt_raw, sh_raw) in zip(picked, inputs(picked)):
            key = keys[i]
            op_type = final_type[key]
            dt = clean_cell(cell(dt_raw))
            sh = clean_cell(cell(sh_raw))
            acc.add_aicpu(
                op_type,
                clean_cell(ai_names[key]) or op_type,
                1,
                durations[i],
                (dt,) if dt else (),
                (sh,) if sh else (),
            )
    seq = {k: t for k, t in final_type.items() if SEQUENCE_TYPES_RE.match(t)}
    if seq:
        acc.feed_sequence(map(seq.__getitem__, filter(seq.__contains__, keys)))


_NOT_AI = object()


def _interpret(
    acc: KernelAccumulator, raw: Mapping[str, Any], cell: Callable[[Any], str | None]
) -> tuple[list[float], str, bool, Any]:
    """What one raw (core, type, name) key means: its group slot, final type, whether the type
    was inferred from the name, and its AI CPU name (_NOT_AI when not an AI CPU row)."""
    core = clean_cell(cell(raw["core"])) or NA
    op_type = clean_cell(cell(raw.get("type")))
    name = cell(raw.get("name"))
    inferred = False
    if op_type is None:
        if name is not None:
            op_type = type_from_name(clean_cell(name) or "") or NA
            inferred = True
        else:
            op_type = NA
    slot = acc.group_slot(core, op_type, name is not None and name.startswith("trans_"))
    return slot, op_type, inferred, name if is_ai_cpu(core) else _NOT_AI


def _durations(
    acc: KernelAccumulator, raw: Sequence[Any], cell: Callable[[Any], str | None]
) -> list[float]:
    """Durations in us; missing ones (empty, N/A) and non-numbers (NaN too) count as 0."""
    try:
        values = list(map(float, raw))
        if not any(map(isnan, values)):
            return values
    except (ValueError, TypeError):
        pass
    out: list[float] = []
    for r in raw:
        text = clean_cell(cell(r))
        if text is None:
            acc.missing_dur += 1
            out.append(0.0)
            continue
        try:
            value = float(text)
        except ValueError:
            value = nan
        if value != value:
            acc.bad_dur += 1
            value = 0.0
        out.append(value)
    return out
