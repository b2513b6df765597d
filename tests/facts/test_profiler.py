"""Profiler trace facts: real torch_npu / msprof outputs, project-written traces, hostile input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from shared_fixtures import DATA, FIXTURES, fixture, read_fixture

from ascend_audit.facts.profiler import (
    KernelSummary,
    OpStat,
    collect_profiler_facts,
    discover_traces,
    merge_summaries,
    parse_op_statistic,
    summarize_kernels,
    summarize_trace_view,
)

TRACES = DATA / "traces"
HOSTILE = TRACES / "hostile"


def kd(sub: str) -> Path:
    return next((TRACES / sub).glob("*_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv"))


# --------------------------------------------------------------------------- real fixtures


def test_2023_kernel_details_counts_and_ai_cpu_casts():
    s = summarize_kernels(fixture("msprof/kernel_details_torchnpu_2023_aicpu_hccl_mixaiv.csv"))
    assert s.layout == "kernel_details_2023"
    assert s.rows == 591
    assert s.problems == ()
    counts = {k: v.count for k, v in s.cores}
    assert counts == {
        "AI_VECTOR_CORE": 520,
        "MIX_AIV": 25,
        "HCCL": 19,
        "AI_CORE": 13,
        "AI_CPU": 7,
        "DSA_SQE": 7,
    }
    assert s.total_us == pytest.approx(396807.04, abs=0.01)
    assert s.ai_cpu.total_us == pytest.approx(785.18, abs=0.01)
    assert s.ai_cpu_share == pytest.approx(785.18 / 396807.04, rel=1e-6)
    assert [(o.op_type, o.count) for o in s.ai_cpu_by_type] == [("Cast", 7)]
    assert {(o.name, o.count) for o in s.ai_cpu_by_name} == {
        ("trans_Cast_5", 5),
        ("trans_Cast_18", 2),
    }
    assert s.ai_cpu_by_type[0].input_dtypes == ("INT32",)
    # 75 Cast kernels in all, 7 of them on AI CPU; no trans_Cast off AI CPU, no TransData
    assert dict(s.op_types)["Cast"].count == 75
    assert s.cast.count == 68
    assert s.format_cast.count == 0
    assert s.transdata == OpStat()
    assert s.batch_matmul.count == 4
    assert s.softmax.count == 0  # ScaledMaskedSoftmax is fused, not SoftmaxV2
    assert not s.has_fused_attention
    assert not s.has_fused_rmsnorm


def test_2025_kernel_details_trailing_tab_layout_and_flash_attention():
    s = summarize_kernels(fixture("msprof/kernel_details_torchnpu_2025_opstate_hf32_mixaic.csv"))
    assert s.layout == "kernel_details_2025"
    assert s.rows == 29
    assert {k: v.count for k, v in s.cores} == {"AI_CORE": 12, "MIX_AIC": 9, "AI_VECTOR_CORE": 8}
    assert s.total_us == pytest.approx(10061.159, abs=0.001)
    assert s.ai_cpu == OpStat() and s.ai_cpu_by_name == ()
    fa = dict(s.fused_attention)
    assert fa["FlashAttentionScore"].count == 5
    assert fa["FlashAttentionScoreGrad"].count == 4
    assert s.has_fused_attention
    assert s.problems == ()


def test_minimal_table_with_na_cores_infers_types_from_names():
    s = summarize_kernels(fixture("msprof/kernel_details_min_NA_accelerator_core.csv"))
    assert s.layout == "kernel_details_minimal"
    assert s.rows == 8
    assert dict(s.cores) == {"N/A": OpStat(8, pytest.approx(1000.8498, abs=1e-6))}
    types = {k: v.count for k, v in s.op_types}
    assert types["Cast"] == 3 and types["TransData"] == 2
    assert s.transdata.count == 2
    assert s.format_cast.count == 2  # trans_Cast_19, trans_Cast_21
    assert any("inferred from names" in p for p in s.problems)


def test_trace_view_fixture_counts_compile_and_ai_cpu_tasks():
    t = summarize_trace_view(fixture("msprof/trace_view_torchnpu_2024.json"))
    assert t.events == 3670
    assert t.aclop_compile_execute == 11
    assert t.has_device_timeline
    assert dict(t.task_types) == {"Other": 274, "AI_CPU": 2}
    assert dict(t.ai_cpu_tasks) == {
        "aclnnReduceSum_CastAiCpu_Cast": 1,
        "aclnnCast_CastAiCpu_Cast": 1,
    }
    assert dict(t.categories)["cpu_op"] == 711
    assert t.problems == ()


def test_trace_view_streaming_agrees_with_json_load_across_chunk_edges(monkeypatch):
    import ascend_audit.facts.profiler.trace_view as prof

    path = fixture("msprof/trace_view_torchnpu_2024.json")
    events = json.loads(path.read_text())
    expected = sum(1 for e in events if "aclopCompileAndExecute" in e.get("name", ""))
    monkeypatch.setattr(prof, "_CHUNK", 4093)  # many small chunks, odd size
    monkeypatch.setattr(prof, "_OVERLAP", 1024)
    t = summarize_trace_view(path)
    assert t.aclop_compile_execute == expected == 11
    assert t.events == len(events)


def test_cluster_step_trace_is_an_unknown_kernel_layout_naming_its_columns():
    s = summarize_kernels(fixture("msprof/cluster_step_trace_time.csv"))
    assert s.layout == "unknown" and s.rows == 0
    assert len(s.problems) == 1
    assert "Communication(Not Overlapped)" in s.problems[0]


def test_msprof_header_lines_are_detected(tmp_path):
    text = read_fixture("msprof/op_summary_op_statistic_headers.partial.txt")
    headers = [
        ln
        for ln in text.splitlines()
        if ln.count(",") > 5 and not ln[:1].isdigit() and "`" not in ln
    ]
    assert len(headers) == 6
    seen = []
    for i, h in enumerate(headers):
        p = tmp_path / f"t{i}.csv"
        p.write_text(h + "\n")
        if "Count" in h.split(","):
            st = parse_op_statistic(p)
            seen.append(st.layout)
            assert st.problems == () and st.rows == ()
        else:
            s = summarize_kernels(p)
            seen.append(s.layout)
            assert s.problems == ("the table has a header but no kernel rows",)
    assert seen == ["op_summary"] * 4 + ["op_statistic"] * 2


def test_op_statistic_unit_test_row(tmp_path):
    text = read_fixture("msprof/op_summary_op_statistic_headers.partial.txt").splitlines()
    i = text.index(next(ln for ln in text if ln.startswith("Device_id,OP Type,Core Type")))
    p = tmp_path / "op_statistic_1.csv"
    p.write_text("\n".join(text[i : i + 2]) + "\n")
    st = parse_op_statistic(p)
    assert st.layout == "op_statistic"
    assert [(r.op_type, r.core, r.count) for r in st.rows] == [("RmsNormTactic", "AI_CORE", 384)]
    assert st.total_us == 5412825240


def test_every_msprof_fixture_is_handled_without_raising():
    files = sorted(p for p in (FIXTURES / "msprof").glob("*") if not p.name.endswith(".source.txt"))
    if not files:
        pytest.skip("real fixtures ../shared/fixtures/msprof are not beside this checkout")
    for p in files:
        if p.suffix == ".json":
            assert summarize_trace_view(p).events > 0
        else:
            s = summarize_kernels(p)
            assert isinstance(s, KernelSummary)
            assert s.rows > 0 or s.problems, p.name
            json.dumps(s.to_dict())


def test_fixture_directory_discovery_and_collect():
    d = FIXTURES / "msprof"
    if not d.is_dir():
        pytest.skip("real fixtures ../shared/fixtures/msprof are not beside this checkout")
    found = discover_traces(d)
    kinds = {Path(s.path).name: s.kind for s in found}
    assert kinds == {
        "kernel_details_min_NA_accelerator_core.csv": "kernel_details",
        "kernel_details_torchnpu_2023_aicpu_hccl_mixaiv.csv": "kernel_details",
        "kernel_details_torchnpu_2025_opstate_hf32_mixaic.csv": "kernel_details",
    }
    assert {s.rank for s in found} == {"default"}
    one = discover_traces(d / "kernel_details_torchnpu_2023_aicpu_hccl_mixaiv.csv")
    assert [s.kind for s in one] == ["kernel_details"]
    facts = collect_profiler_facts(d / "kernel_details_torchnpu_2023_aicpu_hccl_mixaiv.csv")
    assert facts.merged is not None and facts.merged.rows == 591


# --------------------------------------------------------------------------- project traces


def test_trace_without_ai_cpu():
    s = summarize_kernels(kd("no_aicpu"))
    assert s.rows == 20 and s.ai_cpu.count == 0 and s.ai_cpu_share == 0
    assert s.has_fused_attention and s.has_fused_rmsnorm
    assert dict(s.fused_rmsnorm)["AddRmsNorm"].count == 5


def test_trace_with_a_few_ai_cpu_ops_keeps_samples():
    s = summarize_kernels(kd("few_aicpu"))
    assert s.ai_cpu == OpStat(2, 5.0)
    (op,) = s.ai_cpu_by_name
    assert (op.op_type, op.name, op.count, op.mean_us) == ("NonZero", "NonZero9", 2, 2.5)
    assert op.input_dtypes == ("BOOL",) and op.input_shapes == ("4096",)
    assert s.ai_cpu_share < 0.01


def test_trace_above_threshold_decomposed_patterns_and_format_conversions():
    s = summarize_kernels(kd("heavy_aicpu"))
    assert s.rows == 36
    assert s.ai_cpu.count == 6
    assert s.ai_cpu_share > 0.5
    assert [o.op_type for o in s.ai_cpu_by_type] == ["MaskedScatter", "Cast"]
    assert s.ai_cpu_by_type[0].total_us == 450.0
    assert s.batch_matmul.count == 6 and s.softmax.count == 3
    assert s.attention_sequences == 3
    assert s.rmsnorm_sequences == 3
    assert dict(s.rmsnorm_pieces) == {
        "ReduceMeanD": OpStat(3, 12.0),
        "Pow": OpStat(3, 9.0),
        "Rsqrt": OpStat(3, 3.0),
    }
    assert not s.has_fused_attention and not s.has_fused_rmsnorm
    assert s.transdata == OpStat(3, 15.0)
    assert s.format_cast == OpStat(3, 6.0)  # trans_Cast on AI CPU is counted as AI CPU
    assert s.cast == OpStat(3, 6.0)


def test_msprof_op_summary_task_type_and_tabbed_durations():
    d = TRACES / "msprof_single"
    srcs = discover_traces(d)
    assert {s.kind for s in srcs} == {"op_summary", "op_statistic", "msprof_json"}
    assert {s.rank for s in srcs} == {"PROF_000001_20250109_ABCDEF"}
    s = summarize_kernels(next(x.path for x in srcs if x.kind == "op_summary"))
    assert s.layout == "op_summary"
    assert s.rows == 5
    assert s.total_us == pytest.approx(312.5)
    assert s.core("HCCL") == OpStat(1, 0.0)
    assert any("no duration" in p for p in s.problems)
    assert dict(s.fused_attention)["IncreFlashAttention"].count == 1
    assert [(o.name, o.input_dtypes) for o in s.ai_cpu_by_name] == [
        ("aclnnNonzero_NonZeroAiCpu_NonZero", ("DT_BF16",))
    ]
    facts = collect_profiler_facts(d)
    (rank,) = facts.ranks
    assert rank.op_statistic is not None and rank.op_statistic.layout == "op_statistic"
    assert [r.op_type for r in rank.op_statistic.ai_cpu] == ["NonZero"]
    assert rank.trace_view is not None and rank.trace_view.aclop_compile_execute == 1
    assert dict(rank.trace_view.ai_cpu_tasks) == {"aclnnNonzero_NonZeroAiCpu_NonZero": 1}


def test_older_msprof_block_dim_layout():
    s = summarize_kernels(TRACES / "msprof_block_dim" / "op_summary_0_1.csv")
    assert s.layout == "op_summary_block_dim"
    assert s.rows == 2 and s.total_us == pytest.approx(192.5)


def test_multi_rank_directory_per_rank_and_merged():
    facts = collect_profiler_facts(TRACES / "multi_rank")
    assert [r.rank for r in facts.ranks] == ["rank_0", "rank_1"]
    assert [r.kernels.rows for r in facts.ranks] == [2, 3]
    assert facts.ranks[0].kernels.ai_cpu.count == 0
    assert facts.ranks[1].kernels.ai_cpu == OpStat(1, 40.0)
    m = facts.merged
    assert m is not None and m.ranks == ("rank_0", "rank_1")
    assert m.rows == 5 and m.total_us == pytest.approx(260.0)
    assert m.core("AI_CORE") == OpStat(2, 200.0)
    assert [(o.op_type, o.count) for o in m.ai_cpu_by_type] == [("Cast", 1)]
    assert all(r.trace_view.aclop_compile_execute == 1 for r in facts.ranks)
    d = facts.to_dict()
    assert json.loads(json.dumps(d))["merged"]["rows"] == 5


def test_rank_from_profiler_info_file():
    (src,) = discover_traces(TRACES / "profiler_info_rank")
    assert src.rank == "rank_3" and src.kind == "kernel_details"


def test_merge_summaries_adds_and_labels():
    a = summarize_kernels(kd("few_aicpu"))
    b = summarize_kernels(kd("few_aicpu"))
    m = merge_summaries([a, b])
    assert m.rows == 2 * a.rows and m.ai_cpu == OpStat(4, 10.0)
    assert m.ai_cpu_by_name[0].count == 4
    assert len(m.ranks) == 2
    empty = merge_summaries([])
    assert empty.rows == 0 and empty.problems == ("no kernel tables to merge",)


def test_to_dict_is_json_serialisable():
    s = summarize_kernels(kd("heavy_aicpu"))
    d = json.loads(json.dumps(s.to_dict()))
    assert d["ai_cpu"]["count"] == 6 and d["cores"]["AI_CPU"]["count"] == 6
    assert d["rmsnorm_sequences"] == 3


# --------------------------------------------------------------------------- hostile input


def test_truncated_last_line_is_a_problem_not_a_crash():
    s = summarize_kernels(HOSTILE / "truncated_kernel_details.csv")
    assert s.rows == 19
    assert any("malformed row" in p for p in s.problems)


def test_reordered_and_missing_columns():
    s = summarize_kernels(HOSTILE / "reordered_missing_columns.csv")
    assert s.rows == 3
    assert s.ai_cpu == OpStat(1, 5.5)  # value was "5.5<TAB>" and core "AI_CPU<TAB>"
    assert s.ai_cpu_by_name[0].op_type == "Cast"
    assert any("inferred from names" in p for p in s.problems)


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("empty.csv", "empty file"),
        ("binary.csv", "binary"),
        ("unknown_layout.csv", "columns found: Foo, Bar, Baz"),
    ],
)
def test_unreadable_tables_are_problems(name, needle):
    s = summarize_kernels(HOSTILE / name)
    assert s.layout == "unknown" and s.rows == 0 and not s.readable
    assert any(needle in p for p in s.problems)


def test_missing_file_is_a_problem():
    s = summarize_kernels(HOSTILE / "nope.csv")
    assert s.rows == 0 and "no such file" in s.problems[0]
    assert "no such file" in parse_op_statistic(HOSTILE / "nope.csv").problems[0]
    assert "no such file" in summarize_trace_view(HOSTILE / "nope.json").problems[0]
    facts = collect_profiler_facts(HOSTILE / "nope")
    assert facts.merged is None and "does not exist" in facts.problems[0]


def test_non_utf8_bytes_are_replaced_and_reported():
    s = summarize_kernels(HOSTILE / "non_utf8.csv")
    assert s.rows == 2 and s.ai_cpu == OpStat(1, 7.5)
    assert any("not UTF-8" in p for p in s.problems)


def test_ragged_rows_are_skipped_and_reported():
    s = summarize_kernels(HOSTILE / "ragged.csv")
    assert s.rows == 1
    assert any("2 malformed row(s)" in p for p in s.problems)


def test_non_numeric_duration():
    s = summarize_kernels(HOSTILE / "bad_duration.csv")
    assert s.rows == 2 and s.total_us == 4.0
    assert s.problems == ("1 row(s) have a duration that is not a number",)


def test_csv_module_reader_matches_the_fast_path_on_a_real_file(monkeypatch):
    import ascend_audit.facts.profiler.kernels as prof

    path = fixture("msprof/kernel_details_torchnpu_2023_aicpu_hccl_mixaiv.csv")
    fast = summarize_kernels(path)
    monkeypatch.setattr(prof, "scan_table", lambda *_a, **_k: None)  # as if it declined
    slow = summarize_kernels(path)
    assert slow.rows == fast.rows == 591
    assert slow == fast


def test_small_chunks_give_the_same_answer(monkeypatch):
    import ascend_audit.facts.profiler.table_scan as scan

    path = fixture("msprof/kernel_details_torchnpu_2023_aicpu_hccl_mixaiv.csv")
    whole = summarize_kernels(path)
    monkeypatch.setattr(scan, "BUFFER_BYTES", 2000)  # many chunk seams, every line still fits
    pieces = summarize_kernels(path)
    assert pieces == whole and pieces.rows == 591


def test_hostile_trace_views_and_op_statistic():
    t = summarize_trace_view(HOSTILE / "truncated_trace_view.json")
    assert t.aclop_compile_execute == 1 and "truncated" in t.problems[0]
    n = summarize_trace_view(HOSTILE / "not_json.json")
    assert n.events == 0 and "not a JSON trace" in n.problems[0]
    st = parse_op_statistic(HOSTILE / "unknown_op_statistic.csv")
    assert st.layout == "unknown" and "columns found: A, B" in st.problems[0]
    assert parse_op_statistic(HOSTILE / "binary.csv").problems


def test_symlink_loop_is_not_followed(tmp_path):
    d = tmp_path / "rank_0" / "x_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    d.mkdir(parents=True)
    (d / "kernel_details.csv").write_text(kd("few_aicpu").read_text())
    (d / "loop").symlink_to(tmp_path, target_is_directory=True)
    srcs = discover_traces(tmp_path)
    assert len(srcs) == 1 and srcs[0].rank == "rank_0"


def test_module_import_does_not_import_pyarrow_or_pandas():
    code = (
        "import sys, ascend_audit.facts.profiler, ascend_audit.facts.fallback_log;"
        "print('pyarrow' in sys.modules, 'pandas' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "False"]
