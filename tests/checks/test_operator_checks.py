"""Operator-layer checks on the project's own traces and logs: PASS and every WARN/FAIL path."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_fixtures import DATA
from standins import run_node

from ascend_audit.context import Inputs

TRACES = DATA / "traces"
AICPU, FALLBACK, FUSED, LAYOUT = (
    "OPR-AICPU-001",
    "OPR-FALLBACK-001",
    "OPR-FUSED-001",
    "OPR-LAYOUT-001",
)
KD_HEADER = "Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim\n"


def audit(tmp_path: Path, traces=(), logs=(), policy: str = ""):
    """Run only the operator layer on the given inputs; returns the Report."""
    inputs = Inputs(traces=tuple(map(str, traces)), serving_logs=tuple(map(str, logs)))
    return run_node(tmp_path / "root", tmp_path / "bin", policy, layers=["operator"], inputs=inputs)


def result(tmp_path: Path, check_id: str, **kw):
    r = audit(tmp_path, **kw).result(check_id)
    assert r is not None
    return r


def write_kd(tmp_path: Path, rows: list[str], name: str = "kd_ascend_pt") -> Path:
    """A minimal kernel_details.csv inside a *_ascend_pt/ASCEND_PROFILER_OUTPUT dir."""
    out = tmp_path / name / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    (out / "kernel_details.csv").write_text(KD_HEADER + "".join(r + "\n" for r in rows))
    return out.parent


# --------------------------------------------------------------------------- no inputs


def test_no_trace_skips_every_check_and_layer_is_missing(tmp_path):
    rep = audit(tmp_path)
    for cid in (AICPU, FALLBACK, FUSED, LAYOUT):
        r = rep.result(cid)
        assert r.status.value == "SKIP"
        assert r.summary == "no profiler trace given (--trace)"
    assert rep.layer("operator").verdict.value == "MISSING"
    assert rep.inventory.get("operator") is None


# --------------------------------------------------------------------------- AI CPU


def test_aicpu_pass_without_aicpu_operators(tmp_path):
    r = result(tmp_path, AICPU, traces=[TRACES / "no_aicpu"])
    assert r.status.value == "PASS", r.summary
    assert r.metrics["aicpu_share"] == 0 and r.metrics["top_aicpu_ops"] == []
    assert "AI_CORE" in r.metrics["time_by_core_us"]
    assert r.evidence[0].kind == "trace"


def test_aicpu_warns_on_operators_off_the_allow_list(tmp_path):
    r = result(tmp_path, AICPU, traces=[TRACES / "few_aicpu"])
    assert r.status.value == "WARN"
    assert "NonZero" in r.summary and "allow-list" in r.summary
    top = r.metrics["top_aicpu_ops"]
    assert top[0]["type"] == "NonZero" and top[0]["count"] == 2
    assert set(top[0]) >= {"type", "name", "count", "total_us", "mean_us"}
    assert 0 < r.metrics["aicpu_share"] < 0.05


def test_aicpu_passes_when_every_operator_is_allowed(tmp_path):
    policy = '[operator]\naicpu_allowlist = ["NonZero"]\n'
    r = result(tmp_path, AICPU, traces=[TRACES / "few_aicpu"], policy=policy)
    assert r.status.value == "PASS", r.summary
    assert "allow-list" in r.summary and "NonZero" in r.summary


def test_aicpu_fails_above_the_share_threshold_with_dtype_remediation(tmp_path):
    r = result(tmp_path, AICPU, traces=[TRACES / "heavy_aicpu"])
    assert r.status.value == "FAIL"
    assert "61.6%" in r.summary and "5%" in r.summary
    assert "int32" in r.remediation and "INT64" in r.remediation  # int64 inputs → cast upstream
    assert "Cast" in r.remediation
    assert r.metrics["top_aicpu_ops"][0]["type"] == "MaskedScatter"


def test_aicpu_threshold_comes_from_the_policy(tmp_path):
    r = result(
        tmp_path,
        AICPU,
        traces=[TRACES / "heavy_aicpu"],
        policy="[operator]\naicpu_share_fail = 0.7\n",
    )
    assert r.status.value == "WARN"


def test_aicpu_allowed_operators_still_fail_on_time_share(tmp_path):
    policy = '[operator]\naicpu_allowlist = ["MaskedScatter", "Cast"]\n'
    assert (
        result(tmp_path, AICPU, traces=[TRACES / "heavy_aicpu"], policy=policy).status.value
        == "FAIL"
    )


def test_aicpu_multi_rank_reports_per_rank_and_merged(tmp_path):
    rep = audit(tmp_path, traces=[TRACES / "multi_rank"])
    r = rep.result(AICPU)
    assert r.metrics["per_rank"] == {"rank_0": 0.0, "rank_1": pytest.approx(40 / 150, abs=1e-5)}
    assert r.metrics["aicpu_share"] == pytest.approx(40 / 260, abs=1e-5)
    assert r.status.value == "FAIL" and "rank_1 26.7%" in r.summary
    inv = rep.inventory["operator"]
    assert inv["ranks"] == ["rank_0", "rank_1"]
    assert inv["aicpu_share"] == pytest.approx(40 / 260, abs=1e-5)
    assert inv["top_aicpu_ops"][0]["type"] == "Cast"
    assert inv["time_by_core_us"]["AI_CPU"] == 40.0


def test_one_hot_rank_fails_even_when_the_merged_share_is_low(tmp_path):
    busy = write_kd(
        tmp_path, [f"MatMul{i},MatMul,AI_CORE,{i},1000,0,20" for i in range(10)], "a_ascend_pt"
    )
    hot = write_kd(
        tmp_path,
        ["MatMul1,MatMul,AI_CORE,1,100,0,20", "NZ1,NonZero,AI_CPU,2,10,0,1"],
        "b_ascend_pt",
    )
    r = result(tmp_path, AICPU, traces=[busy, hot])
    assert r.metrics["aicpu_share"] < 0.05
    assert r.status.value == "FAIL" and "b 9.1%" in r.summary
    assert r.metrics["per_rank"]["b"] == pytest.approx(10 / 110, abs=1e-5)


def test_two_traces_with_the_same_rank_label_stay_apart(tmp_path):
    a = tmp_path / "a.csv"
    b = tmp_path / "b.csv"
    a.write_text(KD_HEADER + "MatMul1,MatMul,AI_CORE,1,100,0,20\n")
    b.write_text(KD_HEADER + "NZ1,NonZero,AI_CPU,1,100,0,20\n")
    r = result(tmp_path, AICPU, traces=[a, b])
    assert r.metrics["per_rank"] == {"a.csv:default": 0.0, "b.csv:default": 1.0}


def test_msprof_op_summary_layout(tmp_path):
    rep = audit(tmp_path, traces=[TRACES / "msprof_single"])
    r = rep.result(AICPU)
    assert r.status.value == "FAIL"
    assert r.metrics["top_aicpu_ops"][0]["type"] == "NonZero"
    assert r.metrics["top_aicpu_ops"][0]["input_dtypes"] == ["DT_BF16"]
    assert r.evidence[0].values["layouts"] == ["op_summary"]
    assert rep.result(FUSED).status.value == "PASS"


def test_msprof_op_summary_single_csv_with_block_dim(tmp_path):
    r = result(tmp_path, AICPU, traces=[TRACES / "msprof_block_dim" / "op_summary_0_1.csv"])
    assert r.status.value == "PASS" and r.evidence[0].values["layouts"] == ["op_summary_block_dim"]


def test_dynamic_shapes_and_argsort_get_their_remediation(tmp_path):
    header = (
        "Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim,"
        "Input Shapes,Input Data Types\n"
    )
    rows = [
        'ArgSort1,ArgSort,AI_CPU,1,5,0,1,"""8,128""",FLOAT16',
        'ArgSort1,ArgSort,AI_CPU,2,5,0,1,"""8,256""",FLOAT16',
        'MatMul1,MatMul,AI_CORE,3,1000,0,20,"""8,8""",FLOAT16',
    ]
    path = tmp_path / "kernel_details.csv"
    path.write_text(header + "\n".join(rows) + "\n")
    r = result(tmp_path, AICPU, traces=[path])
    assert r.status.value == "WARN"
    assert "topk" in r.remediation and "bucket" in r.remediation


def test_truncated_csv_is_read_and_flagged(tmp_path):
    r = result(tmp_path, AICPU, traces=[TRACES / "hostile" / "truncated_kernel_details.csv"])
    assert r.status.value == "WARN"
    assert "partly unreadable" in r.summary and "malformed" in r.summary
    assert "truncated" in r.remediation


def test_reordered_and_missing_columns_are_read_by_name(tmp_path):
    r = result(tmp_path, AICPU, traces=[TRACES / "hostile" / "reordered_missing_columns.csv"])
    assert r.metrics["aicpu_count"] == 1 and r.metrics["aicpu_types"] == ["Cast"]
    assert r.status.value == "FAIL"  # 5.5 of 7.5 us on AI CPU
    problems = r.evidence[0].values["problems"]
    assert any("inferred from names" in p for p in problems)


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("empty.csv", "empty file"),
        ("unknown_layout.csv", "columns found: Foo, Bar, Baz"),
        ("header_only.csv", "no kernel rows"),
        ("binary.csv", "binary"),
    ],
)
def test_unreadable_traces_are_errors_naming_what_was_found(tmp_path, name, needle):
    rep = audit(tmp_path, traces=[TRACES / "hostile" / name])
    for cid in (AICPU, FUSED, LAYOUT):
        r = rep.result(cid)
        assert r.status.value == "ERROR", (cid, r.summary)
        assert needle in r.summary, r.summary
        assert r.evidence and r.evidence[0].kind == "trace"
        assert "kernel_details.csv" in r.remediation


def test_missing_trace_path_is_an_error(tmp_path):
    r = result(tmp_path, AICPU, traces=[tmp_path / "nowhere"])
    assert r.status.value == "ERROR" and "no such file" in r.summary


# --------------------------------------------------------------------------- fused kernels


def test_fused_pass_when_fused_attention_and_norm(tmp_path):
    r = result(tmp_path, FUSED, traces=[TRACES / "no_aicpu"])
    assert r.status.value == "PASS"
    assert "FlashAttentionScore" in r.summary and "AddRmsNorm" in r.summary
    assert r.metrics["fused_attention"] == {"FlashAttentionScore": 5}


def test_fused_warns_on_decomposed_attention_and_rmsnorm(tmp_path):
    r = result(tmp_path, FUSED, traces=[TRACES / "heavy_aicpu"])
    assert r.status.value == "WARN"
    assert "BatchMatMul → Softmax seen 3" in r.summary and "Pow → ReduceMean → Rsqrt" in r.summary
    assert any("decomposed sequence" in e.excerpt for e in r.evidence)
    assert "npu_fusion_attention" in r.remediation


def test_fused_warns_on_decomposed_rmsnorm_alone(tmp_path):
    rows = [
        "FA1,FlashAttentionScore,MIX_AIC,1,50,0,20",
        "Pow1,Pow,AI_VECTOR_CORE,2,3,0,8",
        "RM1,ReduceMeanD,AI_VECTOR_CORE,3,4,0,8",
        "Rs1,Rsqrt,AI_VECTOR_CORE,4,1,0,8",
        "Mul1,Mul,AI_VECTOR_CORE,5,1,0,8",
    ]
    r = result(tmp_path, FUSED, traces=[write_kd(tmp_path, rows)])
    assert r.status.value == "WARN"
    assert "RMSNorm runs decomposed" in r.summary and "attention" not in r.summary.split(";")[0]
    assert "npu_rms_norm" in r.remediation


def test_fused_skips_a_trace_without_attention(tmp_path):
    r = result(tmp_path, FUSED, traces=[TRACES / "multi_rank"])
    assert r.status.value == "SKIP" and "no attention" in r.summary


# --------------------------------------------------------------------------- layout


def test_layout_pass_below_threshold(tmp_path):
    r = result(tmp_path, LAYOUT, traces=[TRACES / "heavy_aicpu"])
    assert r.status.value == "PASS"
    assert r.metrics["transdata"]["count"] == 3 and r.metrics["format_cast"]["count"] == 3
    assert r.metrics["layout_share"] == pytest.approx(21 / 828, abs=1e-5)


def test_layout_warns_above_threshold(tmp_path):
    rows = [
        "MatMul1,MatMul,AI_CORE,1,100,0,20",
        "trans_TransData_1,TransData,AI_VECTOR_CORE,2,8,0,8",
        "trans_Cast_2,Cast,AI_VECTOR_CORE,3,4,0,8",
        "Cast3,Cast,AI_VECTOR_CORE,4,50,0,8",  # a real dtype Cast: not a layout conversion
    ]
    r = result(tmp_path, LAYOUT, traces=[write_kd(tmp_path, rows)])
    assert r.status.value == "WARN"
    assert r.metrics["layout_share"] == pytest.approx(12 / 162, abs=1e-5)
    assert "TransData ×1" in r.summary and "Cast ×1" in r.summary


def test_layout_threshold_comes_from_the_policy(tmp_path):
    policy = "[operator]\nlayout_share_warn = 0.01\n"
    assert (
        result(tmp_path, LAYOUT, traces=[TRACES / "heavy_aicpu"], policy=policy).status.value
        == "WARN"
    )


# --------------------------------------------------------------------------- fallback


FALLBACK_LINE = (
    "[W compiler_depend.ts:51] Warning: CAUTION: The operator '{op}' is not currently supported "
    "on the NPU backend and will fall back to run on the CPU. This may have performance "
    "implications. (function npu_cpu_fallback)\n"
)


def test_fallback_skips_without_logs_or_timeline(tmp_path):
    r = result(tmp_path, FALLBACK, traces=[TRACES / "no_aicpu"])
    assert r.status.value == "SKIP" and "--serving-log" in r.summary


def test_fallback_pass_on_a_clean_log(tmp_path):
    log = tmp_path / "vllm.log"
    log.write_text("INFO loading weights\nINFO:     Application startup complete.\n")
    r = result(tmp_path, FALLBACK, logs=[log])
    assert r.status.value == "PASS" and "2 line(s)" in r.summary


def test_fallback_does_not_pass_on_a_log_where_no_model_ran(tmp_path):
    log = tmp_path / "vllm.log"
    log.write_text("INFO loading weights\nINFO engine ready\n")
    r = result(tmp_path, FALLBACK, logs=[log])
    assert r.status.value == "SKIP" and "proves nothing" in r.summary


def test_fallback_fails_on_a_host_cpu_fallback_deduplicated(tmp_path):
    log = tmp_path / "vllm.log"
    log.write_text(
        "INFO start\n"
        + FALLBACK_LINE.format(op="aten::linalg_lstsq.out") * 3
        + "INFO more\n"
        + FALLBACK_LINE.format(op="aten::linalg_lstsq.out")
    )
    r = result(tmp_path, FALLBACK, logs=[log])
    assert r.status.value == "FAIL"
    assert (
        "1 operator(s) fall back to the host CPU: aten::linalg_lstsq.out (4 line(s))" in r.summary
    )
    ev = r.evidence[0]
    assert ev.kind == "log" and ev.source == str(log)
    assert ev.values["first_lines"] == [2] and ev.values["distinct"] == 1
    assert ev.excerpt.startswith("line 2: ")
    assert r.metrics["host_fallback_ops"] == ["aten::linalg_lstsq.out"]


def test_fallback_threshold_counts_distinct_operators(tmp_path):
    log = tmp_path / "vllm.log"
    log.write_text(FALLBACK_LINE.format(op="aten::a") + FALLBACK_LINE.format(op="aten::b"))
    policy = "[operator]\nhost_fallback_fail = 3\n"
    r = result(tmp_path, FALLBACK, logs=[log], policy=policy)
    assert r.status.value == "WARN" and "2 operator(s)" in r.summary
    policy = "[operator]\nhost_fallback_fail = 2\n"
    assert result(tmp_path, FALLBACK, logs=[log], policy=policy).status.value == "FAIL"
    policy = "[operator]\nhost_fallback_fail = 0\n"  # 0: fallbacks only warn
    assert result(tmp_path, FALLBACK, logs=[log], policy=policy).status.value == "WARN"


def test_fallback_warns_on_dtype_cast_and_aicpu_warnings(tmp_path):
    log = tmp_path / "vllm.log"
    log.write_text(
        "[W312 03:10:23.570175597 compiler_depend.ts:133] Warning: Warning: Device do not support "
        "double dtype now, dtype cast repalce with float. (function operator())\n"
    )
    r = result(tmp_path, FALLBACK, logs=[log])
    assert r.status.value == "WARN" and "double->float" in r.summary
    assert "float32" in r.remediation
    assert r.evidence[0].values["first_lines"] == [1]


def test_fallback_warns_on_run_time_compilation_in_the_timeline(tmp_path):
    r = result(tmp_path, FALLBACK, traces=[TRACES / "multi_rank"])
    assert r.status.value == "WARN"
    assert "2 aclopCompileAndExecute" in r.summary and "rank_0: 1" in r.summary
    assert r.metrics["aclop_compile_execute"] == 2
    assert "jit_compile=False" in r.remediation


def test_fallback_missing_log_is_an_error(tmp_path):
    r = result(tmp_path, FALLBACK, logs=[tmp_path / "absent.log"])
    assert r.status.value == "ERROR" and "absent.log" in r.summary


def test_fallback_log_is_streamed_not_slurped(tmp_path, monkeypatch):
    """The gatherer reads logs through read_text_lines, never Path.read_text."""
    log = tmp_path / "big.log"
    log.write_text("INFO:     Application startup complete.\n" + "INFO x\n" * 9_999)

    def boom(*a, **k):
        raise AssertionError("whole-file read")

    monkeypatch.setattr(Path, "read_text", boom)
    monkeypatch.setattr(Path, "read_bytes", boom)
    r = result(tmp_path, FALLBACK, logs=[log])
    assert r.status.value == "PASS" and "10000 line(s)" in r.summary
