"""Serving-log lifecycle on real logs the scanner was not built on: the stage reached, the final
exception with its file:line, the first cause, NOT_READY on death and never a PASS on death;
then one test per class of line they taught (tests/data/serving_logs/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_fixtures import DATA
from standins import run_inputs

from ascend_audit.facts.serving_log import scan_serving_log, scan_serving_log_file
from ascend_audit.model import Status, Verdict

LOGS = DATA / "serving_logs"

# file → (stage reached, final exception or death signal, where it was raised, first cause)
DEAD = {
    "vllm-ascend-669_v1_Llama4_TP8_workers_fatal_signal_at_model_load_SystemExit.partial.log": (
        "configured",
        "worker_died",
        None,
        None,
    ),
    "Ascend-pytorch-78_310P_v0.9.2rc1_Seed-X_ACLgraph_capture_begin_INTERNAL_ASSERT_EngineCore"
    "_failed.partial.log": (
        "kv_sized",
        "RuntimeError: status == aclmdlRICaptureStatus::ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE",
        "torch_npu/npu/graphs.py:210",
        None,
    ),
    "vllm-ascend-5629_DSV3.1-w8a8_2node_DP4TP4_npu_quant_matmul_meta_scale_dtype_ERR01002_dynamo"
    ".partial.log": (
        "weights_loaded",
        "torch._dynamo.exc.TorchRuntimeError: Dynamo failed to run FX node",
        None,
        "RuntimeError: When output_dtype is float16 and pertoken_scale is not none",
    ),
    "vllm-ascend-2235_v0.10.0_R1-Distill-Llama-70B_TP8_profile_run_dynamo_Unsupported_rotary"
    "_embedding_fake_tensors.partial.log": (
        "weights_loaded",
        "torch._dynamo.exc.Unsupported: Operator does not support running with fake tensors",
        "torch/_dynamo/eval_frame.py:659",
        None,
    ),
    "vllm-ascend-3367_Qwen3-VL_two_node_hcclCommInitRootInfoConfig_error_code_1_ERR02200_worker"
    "_died.partial.log": (
        None,
        "RuntimeError: Worker failed with error 'create_config:",
        "vllm/v1/executor/multiproc_executor.py:248",
        None,
    ),
    "vllm-ascend-6509_v0.14.0rc1_Qwen3-235B_eagle3_FULL_DECODE_ONLY_replayed_then_WorkerProc"
    "_AttributeError_while_serving.partial.log": (
        "serving",
        "AttributeError: 'ForwardContext' object has no attribute 'draft_attn_metadatas'",
        "vllm_ascend/attention/attention_v1.py:439",
        None,
    ),
    "vllm-ascend-3316_310P_v0.10.2rc1_Qwen2.5-0.5B_eager_initialize_kv_cache_format_cast_507013"
    "_EL0004_sdma.partial.log": (
        "kv_sized",
        "RuntimeError: npuSynchronizeDevice:",
        "torch/_ops.py:1243",
        None,
    ),
    "vllm-ascend-5707_two_services_one_NPU_No_available_memory_for_the_cache_blocks.partial.log": (
        None,
        "ValueError: No available memory for the cache blocks.",
        "vllm/v1/core/kv_cache_utils.py:699",
        None,
    ),
}


def audit(tmp_path: Path, log: Path, layers=("operator", "framework")):
    return run_inputs(tmp_path, layers, serving_logs=[log])  # ungated


@pytest.mark.parametrize("name", DEAD, ids=lambda n: n[:48])
def test_unseen_dead_logs_name_stage_death_and_where(name) -> None:
    stage, final, where, cause = DEAD[name]
    f = scan_serving_log_file(str(LOGS / name))
    assert f.died and f.stage == stage
    if final == "worker_died":
        assert f.final_exception is None and f.death is not None and f.death.signal == final
    else:
        assert (f.final_exception or "").startswith(final), f.final_exception
    if where:
        assert (f.exception_where or "").endswith(where), f.exception_where
    if cause:
        assert f.first_cause is not None and str(f.first_cause.value).startswith(cause)


@pytest.mark.parametrize("name", DEAD, ids=lambda n: n[:48])
def test_unseen_dead_logs_are_not_ready_and_never_pass(tmp_path, name) -> None:
    log = LOGS / name
    report = audit(tmp_path, log)
    assert report.layer("framework").verdict is Verdict.NOT_READY
    passed = [r.id for r in report.results if r.status is Status.PASS]
    assert not passed, passed
    life = report.result("FWK-LIFE-001")
    assert life.status is Status.FAIL and "the engine died" in life.summary
    assert f"{log}:" in life.summary or any(e.source.startswith(f"{log}:") for e in life.evidence)


def test_negative_kv_memory_without_a_death_line_is_not_ready(tmp_path) -> None:
    log = (
        LOGS / "vllm-ascend-9372_Qwen3-14B_32GB_vNPU_negative_Available_KV_cache_memory.partial.log"
    )
    report = audit(tmp_path, log, layers=("framework",))
    assert report.result("FWK-KV-001").status is Status.FAIL
    assert report.result("FWK-LIFE-001").status is not Status.PASS
    assert report.layer("framework").verdict is Verdict.NOT_READY


# --- the classes these logs taught ------------------------------------------------------------


def scan(*lines: str):
    return scan_serving_log(enumerate(lines, 1), "x.log")


def test_fatal_signal_from_workers_is_a_death_not_a_graceful_shutdown() -> None:
    f = scan(
        "(VllmWorker rank=0 pid=872) INFO 04-27 01:29:53 [model_runner_v1.py:864] Starting to "
        "load model /data/model/Llama4...",
        "CRITICAL 04-27 01:29:53 [multiproc_executor.py:49] MulitprocExecutor got fatal signal "
        "from worker processes, shutting down. See stack trace above for root cause issue.",
    )
    assert f.died and not f.shut_down and f.death.signal == "worker_died"
    assert f.stage == "configured"  # the workers were loading the model
    f = scan("INFO Shutting down FastAPI HTTP server.")
    assert f.shut_down and not f.died


def test_torch_log_prefix_is_read_through() -> None:
    prefix = "[rank7]:E0106 03:23:01.677000 37645 site-packages/torch/_subclasses/x.py:2721] [0/0] "
    f = scan(
        prefix + "Traceback (most recent call last):",
        prefix + '  File "/v/torch/__init__.py", line 1666, in _check_with',
        prefix + "    raise error_type(message_evaluated)",
        prefix + "RuntimeError: scale's dtype must be float32",
    )
    assert f.died and f.final_exception == "RuntimeError: scale's dtype must be float32"
    assert f.exception_where == "/v/torch/__init__.py:1666"


def test_long_and_module_qualified_exceptions_are_final_exceptions() -> None:
    long_msg = "Dynamo failed to run FX node with fake tensors: " + "x" * 900
    f = scan(
        "Traceback (most recent call last):",
        '  File "/v/eval_frame.py", line 659, in _fn',
        f"torch._dynamo.exc.TorchRuntimeError: {long_msg}",
    )
    assert (f.final_exception or "").startswith("torch._dynamo.exc.TorchRuntimeError: Dynamo")
    f = scan(
        "Traceback (most recent call last):",
        '  File "/v/eval_frame.py", line 659, in _fn',
        "torch._dynamo.exc.Unsupported: Operator does not support running with fake tensors",
    )
    assert (f.final_exception or "").startswith("torch._dynamo.exc.Unsupported:")
    # outside a traceback a dotted name with a colon is no exception
    assert not scan("vllm.config.Model: loaded").died


def test_traceback_through_graph_capture_is_a_death_while_capturing(tmp_path) -> None:
    name = next(n for n in DEAD if n.startswith("Ascend-pytorch-78"))
    report = audit(tmp_path, LOGS / name)
    g = report.result("FWK-GRAPH-001")
    assert g.status is Status.FAIL and "died while capturing graphs" in g.summary
    assert "while capturing graphs" in report.result("FWK-LIFE-001").summary


def test_operators_named_by_the_fake_tensor_pass() -> None:
    f = scan(
        "Traceback (most recent call last):",
        '  File "/v/x.py", line 1, in f',
        "torch._dynamo.exc.Unsupported: Operator does not support running with fake tensors",
        "  Developer debug context: unsupported operator: _C.rotary_embedding.default",
    )
    assert f.failed_operators == ("_C.rotary_embedding",)


def test_fallback_check_does_not_pass_a_log_that_ends_in_death(tmp_path) -> None:
    name = next(n for n in DEAD if n.startswith("vllm-ascend-6509"))
    r = audit(tmp_path, LOGS / name, layers=("operator",)).result("OPR-FALLBACK-001")
    assert r.status is Status.WARN and "the engine died" in r.summary
