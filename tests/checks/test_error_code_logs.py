"""The error-code catalog on real logs it was not written from: an operator failure is operator
NOT_READY naming the operator, an HCCL init failure names its code and causes, and a code the
catalog does not list is still reported by its family (tests/data/serving_logs/README.md)."""

from __future__ import annotations

import pytest
from shared_fixtures import DATA, data_file
from standins import run_inputs

from ascend_audit.facts.error_codes import describe, find_codes
from ascend_audit.model import Status, Verdict

LOGS = DATA / "serving_logs"


def audit(tmp_path, serving_logs):
    return run_inputs(tmp_path, serving_logs=serving_logs)


def _log(prefix: str):
    return data_file(LOGS, prefix)


@pytest.mark.parametrize(
    ("prefix", "codes", "operators"),
    [
        ("vllm-ascend-1736", ["E69999"], ["aclnnQuantMatmulWeightNz", "QuantBatchMatmulV3"]),
        ("LlamaFactory-4372", ["507018"], []),
        ("pytorch-136302", ["E39999"], []),
        ("vllm-ascend-5043", ["507035", "EZ9999"], ["fused_recurrent_g"]),
        ("vllm-ascend-16234", ["507035"], []),
        ("vllm-ascend-4859", ["561103"], ["aclnnInplaceZero"]),
        ("Ascend-pytorch-66", ["507035"], []),
    ],
)
def test_operator_failures_are_operator_not_ready(tmp_path, prefix, codes, operators) -> None:
    report = audit(tmp_path, serving_logs=[_log(prefix)])
    r = report.result("OPR-KERNEL-001")
    assert r.status is Status.FAIL, r.summary
    assert report.layer("operator").verdict is Verdict.NOT_READY
    for code in codes:
        assert code in r.summary
    assert list(r.metrics.get("failed_operators", [])) == operators
    for op in operators:
        assert op in r.summary
    if not operators:
        assert "not named in the log" in r.summary


def test_ai_cpu_faults_are_not_ai_cpu_placement_warnings(tmp_path) -> None:
    for prefix in ("LlamaFactory-4372", "vllm-ascend-2754"):
        r = audit(tmp_path, serving_logs=[_log(prefix)]).result("OPR-FALLBACK-001")
        assert r.status is not Status.WARN or "AI CPU" not in r.summary, (prefix, r.summary)


def test_hccl_resource_failure_names_code_and_its_own_causes(tmp_path) -> None:
    report = audit(tmp_path, serving_logs=[_log("vllm-ascend-2754")])
    r = report.result("FWK-LIFE-001")
    assert r.status is Status.FAIL and report.layer("framework").verdict is Verdict.NOT_READY
    assert "EI0007" in r.summary and "likely causes of EI0007: device memory exhausted" in r.summary
    fix = r.remediation or ""
    assert fix.startswith("Lower gpu_memory_utilization or HCCL_BUFFSIZE")
    assert "leftover process" in fix and "rank table" in fix  # the HCCL checklist follows
    assert report.result("OPR-KERNEL-001").status is Status.SKIP


def test_unlisted_code_is_reported_by_its_family(tmp_path) -> None:
    # 107020 is not in torch_npu's NPUErrorCodes.h table; it still names its family.
    info = describe("107020", "acl")
    assert info is not None and info.family and info.meaning.startswith("not in the catalog;")
    report = audit(tmp_path, serving_logs=[_log("vllm-ascend-1007")])
    r = report.result("FWK-LIFE-001")
    assert r.status is Status.FAIL
    assert "EE1001 (not in the catalog; CANN runtime error" in r.summary
    assert "ERR00100" in r.summary


@pytest.mark.parametrize(
    ("prefix", "code", "name"),
    [
        ("vllm-ascend-10829", "507057", "SUSPECT REMOTE ERROR"),
        ("vllm-ascend-13399", "EL0005", "the runtime resources are busy"),
        ("Ascend-pytorch-7", "500001", "internal ACL error"),
    ],
)
def test_deaths_name_the_catalogued_codes(tmp_path, prefix, code, name) -> None:
    r = audit(tmp_path, serving_logs=[_log(prefix)]).result("FWK-LIFE-001")
    assert r.status is Status.FAIL
    assert f"{code} ({name}" in r.summary, r.summary


def test_a_family_code_on_an_aclnn_call_indicts_the_operator(tmp_path) -> None:
    line = "RuntimeError: call aclnnFooBar failed, detail:E89999: Inner Error!\n"
    path = tmp_path / "op.log"
    path.write_text("Traceback (most recent call last):\n" + line)
    assert ("E89999", "cann") in [(c, k) for c, k, _s, _e in find_codes(line)]
    r = audit(tmp_path, serving_logs=[path]).result("OPR-KERNEL-001")
    assert r.status is Status.FAIL and "E89999 (not in the catalog" in r.summary
    assert "aclnnFooBar" in r.summary


def test_every_kind_has_a_family_so_no_code_is_dropped() -> None:
    for code, kind in [
        ("999999", "acl"),
        ("EQ1234", "cann"),
        ("ERR07001", "torch_npu"),
        ("42", "hccl"),
        ("MIE09E000000", "mindie"),
    ]:
        info = describe(code, kind)
        assert info is not None and info.family and info.code == code, (code, kind)


def test_hccl_runtime_failure_names_code_and_its_causes(tmp_path) -> None:
    r = audit(tmp_path, serving_logs=[_log("vllm-ascend-672")]).result("FWK-LIFE-001")
    assert r.status is Status.FAIL
    assert "15 (HCCL's call to the runtime failed" in r.summary
    assert "likely causes of 15: the runtime refused a device" in r.summary
    assert "leftover process" in (r.remediation or "")
