"""Operator-level deaths without an Ascend error code (issue 14, item 2): real logs whose death
names an operator with no kernel for the backend, the dtype or graph compile, or a custom
operator not registered, are operator NOT_READY naming it; framework deaths stay framework
(tests/data/serving_logs/README.md)."""

from __future__ import annotations

import pytest
from shared_fixtures import DATA, data_file
from standins import run_inputs

from ascend_audit.facts.serving_log import scan_serving_log
from ascend_audit.facts.serving_log.operator_failures import operator_failure
from ascend_audit.model import Status, Verdict

LOGS = DATA / "serving_logs"


def audit(tmp_path, log):
    return run_inputs(tmp_path, serving_logs=[log])


def _log(prefix: str):
    return data_file(LOGS, prefix)


@pytest.mark.parametrize(
    ("prefix", "kind", "operator"),
    [
        ("vllm-ascend-2235", "no_fake_kernel", "_C.rotary_embedding"),
        ("vllm-ascend-1962", "no_fake_kernel", "_C::rotary_embedding"),
        ("vllm-ascend-16", "no_backend_kernel", "vllm::all_reduce"),
        ("LlamaFactory-4622", "dtype_not_implemented", "addmm_impl_cpu_"),
        ("vllm-ascend-11999", "op_not_registered", "_C_ascend.npu_apply_top_k_top_p"),
    ],
)
def test_operator_deaths_without_a_code_are_operator_not_ready(
    tmp_path, prefix, kind, operator
) -> None:
    report = audit(tmp_path, _log(prefix))
    r = report.result("OPR-KERNEL-001")
    assert r.status is Status.FAIL, r.summary
    assert report.layer("operator").verdict is Verdict.NOT_READY
    assert r.metrics["operator_failure"] == kind
    assert r.metrics["failed_operators"][0] == operator and operator in r.summary
    assert "no error code" in r.summary and r.evidence[0].source.startswith(f"{_log(prefix)}:")
    assert not [x.id for x in report.results if x.status is Status.PASS]


@pytest.mark.parametrize(
    "prefix",
    [
        "vllm-ascend-5707",  # no memory for the KV cache
        "vllm-ascend-3367",  # HCCL communicator creation
        "vllm-ascend-2266",  # NotImplementedError: a config refused (torchair)
        "vllm-ascend-1456",  # NotImplementedError: ACL graph refused for the model
        "gpustack-2016",  # NotImplementedError: unsupported model type
        "vllm-ascend-6509",  # AttributeError while serving, no operator
    ],
)
def test_framework_deaths_are_not_operator_failures(tmp_path, prefix) -> None:
    report = audit(tmp_path, _log(prefix))
    assert report.result("OPR-KERNEL-001").status is Status.SKIP
    assert report.result("FWK-LIFE-001").status is Status.FAIL


def scan(*lines: str):
    return scan_serving_log(enumerate(lines, 1), "x.log")


def test_each_class_of_line_is_an_operator_failure() -> None:
    lines = {
        "NotImplementedError: Could not run 'aten::empty_strided' with arguments from the "
        "'PrivateUse1' backend. This could be because": (
            "no_backend_kernel",
            "aten::empty_strided",
        ),
        "RuntimeError: \"max_all\" not implemented for 'BFloat16'": (
            "dtype_not_implemented",
            "max_all",
        ),
        "torch._subclasses.fake_tensor.UnsupportedOperatorException: _C.rotary_embedding.default": (
            "no_fake_kernel",
            "_C.rotary_embedding",
        ),
        "Optype [TransData] of Ops kernel [aicpu_ascend_kernel] is unsupported. Reason: x": (
            "optype_unsupported",
            "TransData",
        ),
        "No supported Ops kernel and engine are found for [trans_TransData_4], optype "
        "[TransData].": ("optype_unsupported", "TransData"),
        "NotImplementedError: operator npu_foo is not supported on npu": (
            "not_implemented_on_npu",
            None,
        ),
    }
    for line, want in lines.items():
        assert operator_failure(line) == want, line
    for line in (
        "NotImplementedError: unsupported model type: minicpmv",
        "NotImplementedError: ACL Graph does not support deepseek",
        "Warning: CAUTION: The operator 'vllm::all_reduce' is not currently supported on the NPU "
        "backend and will fall back to run on the CPU.",
        "torch.OutOfMemoryError: NPU out of memory. Tried to allocate 2.00 GiB",
    ):
        assert operator_failure(line) is None, line


def test_only_a_death_states_an_operator_failure() -> None:
    # a line outside any death (a log that goes on serving) is no failure of the service
    f = scan(
        "RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'",
        "INFO Application startup complete.",
        'INFO: 127.0.0.1 - "POST /v1/completions HTTP/1.1" 200 OK',
    )
    assert not f.died and f.operator_failure is None
    # a framework death stays one, and a restart forgets the earlier operator failure
    f = scan(
        "Traceback (most recent call last):",
        "NotImplementedError: Could not run 'aten::foo' with arguments from the 'CPU' backend.",
        "INFO non-default args: {'model': 'm'}",
        "torch.OutOfMemoryError: NPU out of memory. Tried to allocate 2.00 GiB",
    )
    assert f.died and f.operator_failure is None


def test_hostile_lines_do_not_break_the_classifier() -> None:
    assert operator_failure("") is None
    assert operator_failure("Could not run '" + "x" * 100_000) is None
    assert operator_failure("\ufffd\x00 not implemented for \ufffd") is None
