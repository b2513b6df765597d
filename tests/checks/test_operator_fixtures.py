"""Every real profiler output and fallback log in ../shared/fixtures read through the checks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from shared_fixtures import FIXTURES, fixture, fixture_files
from standins import run_node

from ascend_audit.context import Inputs


def audit(tmp_path: Path, traces=(), logs=(), policy: str = ""):
    inputs = Inputs(traces=tuple(map(str, traces)), serving_logs=tuple(map(str, logs)))
    return run_node(tmp_path / "root", tmp_path / "bin", policy, layers=["operator"], inputs=inputs)


def as_ascend_pt(tmp_path: Path, csv: Path) -> Path:
    """A copy of a kernel_details fixture laid out as torch_npu writes it (test time only)."""
    out = tmp_path / "x_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    shutil.copyfile(csv, out / "kernel_details.csv")
    return out.parent


def test_every_msprof_fixture_is_covered_here():
    names = {p.name for p in fixture_files("msprof")}
    if not names:
        pytest.skip("real fixtures ../shared/fixtures/msprof are not beside this checkout")
    covered = {
        "kernel_details_torchnpu_2023_aicpu_hccl_mixaiv.csv",
        "kernel_details_torchnpu_2025_opstate_hf32_mixaic.csv",
        "kernel_details_min_NA_accelerator_core.csv",
        "trace_view_torchnpu_2024.json",
        "cluster_step_trace_time.csv",
        "op_summary_op_statistic_headers.partial.txt",
    }
    assert names == covered, "a new msprof fixture needs a test here"


def test_2023_kernel_details_seven_aicpu_casts(tmp_path):
    rep = audit(
        tmp_path,
        [
            as_ascend_pt(
                tmp_path, fixture("msprof/kernel_details_torchnpu_2023_aicpu_hccl_mixaiv.csv")
            )
        ],
    )
    r = rep.result("OPR-AICPU-001")
    assert r.evidence[0].values["kernels"] == 591
    assert r.metrics["aicpu_count"] == 7 and r.metrics["aicpu_types"] == ["Cast"]
    assert sum(o["count"] for o in r.metrics["top_aicpu_ops"]) == 7
    assert {o["name"] for o in r.metrics["top_aicpu_ops"]} == {"trans_Cast_5", "trans_Cast_18"}
    assert r.metrics["time_by_core_us"]["AI_CPU"] == pytest.approx(785.18, abs=0.01)
    assert r.status.value == "WARN"  # 0.2 % of device time, Cast not on the allow-list
    assert "INT32" in r.remediation
    assert rep.result("OPR-FUSED-001").status.value == "SKIP"  # no attention in this profile
    assert rep.result("OPR-LAYOUT-001").status.value == "PASS"
    assert rep.inventory["operator"]["ranks"] == ["x"]


def test_2023_kernel_details_allowed_and_failing(tmp_path):
    trace = [
        as_ascend_pt(tmp_path, fixture("msprof/kernel_details_torchnpu_2023_aicpu_hccl_mixaiv.csv"))
    ]
    ok = audit(tmp_path / "a", trace, policy='[operator]\naicpu_allowlist = ["Cast"]\n')
    assert ok.result("OPR-AICPU-001").status.value == "PASS"
    bad = audit(tmp_path / "b", trace, policy="[operator]\naicpu_share_fail = 0.001\n")
    assert bad.result("OPR-AICPU-001").status.value == "FAIL"


def test_2025_kernel_details_no_aicpu_and_fused_attention(tmp_path):
    rep = audit(tmp_path, [fixture("msprof/kernel_details_torchnpu_2025_opstate_hf32_mixaic.csv")])
    r = rep.result("OPR-AICPU-001")
    assert r.status.value == "PASS" and r.evidence[0].values["kernels"] == 29
    assert set(r.metrics["time_by_core_us"]) == {"AI_CORE", "MIX_AIC", "AI_VECTOR_CORE"}
    fused = rep.result("OPR-FUSED-001")
    assert fused.status.value == "PASS" and "FlashAttentionScore" in fused.summary


def test_min_na_kernel_details_layout_conversions(tmp_path):
    trace = [fixture("msprof/kernel_details_min_NA_accelerator_core.csv")]
    rep = audit(tmp_path, trace)
    assert rep.result("OPR-AICPU-001").status.value == "PASS"
    lay = rep.result("OPR-LAYOUT-001")
    assert lay.metrics["transdata"]["count"] == 2 and lay.metrics["format_cast"]["count"] == 2
    assert lay.status.value == "PASS"  # 4.2 % of device time
    strict = audit(tmp_path / "s", trace, policy="[operator]\nlayout_share_warn = 0.01\n")
    assert strict.result("OPR-LAYOUT-001").status.value == "WARN"


def test_trace_view_counts_run_time_compilation(tmp_path):
    rep = audit(tmp_path, [fixture("msprof/trace_view_torchnpu_2024.json")])
    r = rep.result("OPR-FALLBACK-001")
    assert r.status.value == "WARN" and r.metrics["aclop_compile_execute"] == 11
    # a timeline alone holds no kernel table: the kernel checks say so
    assert "no kernel table" in rep.result("OPR-AICPU-001").summary


def test_cluster_step_trace_is_an_unknown_layout_naming_its_columns(tmp_path):
    r = audit(tmp_path, [fixture("msprof/cluster_step_trace_time.csv")]).result("OPR-AICPU-001")
    assert r.status.value == "ERROR"
    assert "unknown kernel table layout" in r.summary and "Computing" in r.summary


def _headers(name: str) -> dict[str, str]:
    text = fixture(name).read_text()
    out, label = {}, ""
    for line in text.splitlines():
        if line.endswith(":"):
            label = line[:-1]
        elif "," in line and label and label not in out:
            out[label] = line
    return out


def test_msprof_export_headers(tmp_path):
    """Each op_summary header with one AI CPU row is read; op_statistic is named, not misread."""
    for i, (label, header) in enumerate(
        _headers("msprof/op_summary_op_statistic_headers.partial.txt").items()
    ):
        cols = header.split(",")
        d = tmp_path / f"h{i}"
        d.mkdir()
        if label.startswith("op_summary"):
            row = {
                "Op Name": "NZ1",
                "OP Type": "NonZero",
                "Task Type": "AI_CPU",
                "Task Duration(us)": "9",
            }
            (d / "op_summary_0.csv").write_text(
                header + "\n" + ",".join(row.get(c, "0") for c in cols) + "\n"
            )
            r = audit(d, [d / "op_summary_0.csv"]).result("OPR-AICPU-001")
            assert r.metrics["aicpu_types"] == ["NonZero"], label
        else:
            (d / "table.csv").write_text(header + "\n")
            r = audit(d, [d / "table.csv"]).result("OPR-AICPU-001")
            assert r.status.value == "ERROR" and "op_statistic" in r.summary, label


def test_fallback_log_lstsq_fails(tmp_path):
    log = fixture(
        "fallback_logs/torch_npu_cpu_fallback_aten_linalg_lstsq_ERR01007_Ascend-pytorch-doc.txt"
    )
    r = audit(tmp_path, logs=[log]).result("OPR-FALLBACK-001")
    assert r.status.value == "FAIL"
    assert r.metrics["host_fallback_ops"] == ["aten::linalg_lstsq.out"]
    assert r.evidence[0].values["first_lines"] == [1]


def test_fallback_log_double_cast_glued_to_progress_bar_warns(tmp_path):
    name = (
        "fallback_logs/torch_npu_double_dtype_cast_warning_in_vllm_ascend_v0_log_shen-shanshan.txt"
    )
    log = fixture(name)
    lineno = next(
        i for i, line in enumerate(log.read_text().splitlines(), 1) if "dtype cast" in line
    )
    r = audit(tmp_path, logs=[log]).result("OPR-FALLBACK-001")
    assert r.status.value == "WARN" and "double->float" in r.summary
    assert r.evidence[0].values["first_lines"] == [lineno]
    assert r.evidence[0].excerpt.startswith(f"line {lineno}: [rank0]:[W312")


def test_every_fallback_fixture_is_covered_here():
    names = {p.name for p in fixture_files("fallback_logs")}
    if not names:
        pytest.skip("real fixtures ../shared/fixtures/fallback_logs are not beside this checkout")
    assert len(names) == 2 and (FIXTURES / "fallback_logs").is_dir()
