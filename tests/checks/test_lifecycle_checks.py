"""Framework and operator layers on the field logs: a dead engine is never READY, error codes
name the layer they indict, graph mode by proof, launch scripts and collect_env pastes."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_fixtures import DATA, fixture
from standins import run_inputs

from ascend_audit.model import Status, Verdict

SL = "field/serving_logs/"
VR = "field/visibility_and_resources/"
LA = "field/launch_and_args/"
CE = "field/collect_env/"
DEAD = [
    SL + "310P_Qwen3.5-27B_mtp_graph_capture_EE9999_captured-stream_sync_107030_107027_cann9.1.0"
    "-beta.1_vllm-ascend-10640.partial.log",
    SL + "310P_Qwen3.6-27B-w8a8_TP2_aicore_exception_507015_EZ9903_aclrtLaunchKernelWithHostArgs"
    "_ERR00100_vllm-ascend-10122.partial.log",
    SL + "MindIE2.2.RC1_Qwen2.5-VL-7B_910B2_1card_warmup_OOM_maxPrefillTokens_gpustack-3541"
    ".partial.log",
    SL + "sglang_A3_cann9.0.0_deepseek_r1_w4a8_torch_npu_memory_NPU_out_of_memory_61.27GiB"
    "_Ascend-sglang-668.partial.log",
    SL + "torch_npu_SetDevice_507033_ERR00100_E30006_OPP_verify_failed_cann8.0.RC3.alpha001"
    "_mineru_vllm-ascend-4284.log",
    SL + "vllm-ascend0.11.0rc0-310p_Qwen3-VL-8B_TP2_eager_kvcache_format_cast_507013_EL0004_sdma"
    "_SMMU_EngineCore_init_failed_ERR99999_vllm-ascend-4074.partial.log",
    SL + "vllm-ascend0.11.0rc0_DSV3-0324_DP8TP4_torchair_quantization_ascend_KeyError_model"
    ".embed_tokens.weight_WorkerProc_failed_vllm-ascend-3534.partial.log",
    VR + "ASCEND_RT_VISIBLE_DEVICES_0125_noncontiguous_AssertionError_Invalid_device_id_910B4_v1"
    "_vllm-ascend-449.partial.log",
    VR + "HCCL_HcclGetRootInfo_error11_EJ0003_port60000_already_bound_two_tp4_jobs_vllm-ascend"
    "-405.log",
    VR + "MindIE_ASCEND_RT_VISIBLE_DEVICES_4_error_input_data_rang_0-2_NPU_VM_gpustack-3352"
    ".partial.log",
    VR + "aclrtSetDevice_507033_EL0004_Memory_Allocation_Failure_device2_cannot_open_PTOAS-341"
    ".partial.log",
    VR + "dev_shm_too_small_raylet_9GB_available_10GB_requested_Kimi-K2.5_TP8_PP2_gpustack-5014"
    ".partial.log",
    VR + "ray_c10d_TCPStore_Timed_out_1801s_1of8_clients_joined_multinode_vllm-ascend-167"
    ".partial.log",
    VR + "ray_worker_Set_visible_device_failed_invalid_device1_visible_1_107001_0x7020014"
    "_vllm-ascend-167.partial.log",
]
HEALTHY = (
    SL + "healthy_offline_Qwen3-0.6B_910_PIECEWISE_ACLgraph_captured_enum_CUDAGraphMode.PIECEWISE"
    "_Replaying_aclgraph_vllm-ascend-quickstart-doc.log"
)


audit = run_inputs  # (tmp_path, layers=("operator", "framework"), **inputs)


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("name", DEAD, ids=lambda n: n.split("/")[-1][:50])
def test_no_framework_result_passes_when_the_log_shows_the_engine_died(tmp_path, name) -> None:
    log = fixture(name)
    report = audit(tmp_path, serving_logs=[log])
    fw = [r for r in report.results if r.layer == "framework"]
    assert fw and not [r.id for r in fw if r.status is Status.PASS]
    assert report.layer("framework").verdict is Verdict.NOT_READY
    life = report.result("FWK-LIFE-001")
    assert life.status is Status.FAIL and "died" in life.summary
    assert any(e.source.startswith(f"{log}:") and e.excerpt for e in life.evidence)


# Logs from public issue threads in the project's own test data (tests/data/serving_logs/README.md)
OWN_DEAD = [
    "gpustack-3894_mindie_310p_MIE04E02041C_listen_failed_start_fail.log",
    "gpustack-2016_mindie_unsupported_model_minicpmv_pybind_At.partial.log",
    "gpustack-3225_mindie_ERR00100_EE1001_invalid_visible_device.partial.log",
    "vllm-ascend-7384_qwen3-coder-480b_EngineDeadError_while_serving_then_200.partial.log",
    "vllm-ascend-1767_EngineCore_fatal_error_while_serving_scheduler.partial.log",
    "index-tts-vllm-161_vllm-ascend_Engine_core_initialization_failed_ERR99999.partial.log",
    "vllm-ascend-1963_Mllama_not_supported_by_V1_falling_back_to_V0_then_traceback.partial.log",
    "vllm-ascend-2712_310p_PP3_hcclCommInitRootInfoConfig_error_code_1_ERR02200.partial.log",
    "vllm-ascend-3162_GRPO_EI0009_transport_init_error_collective_rpc_failed.partial.log",
]


@pytest.mark.parametrize("name", OWN_DEAD, ids=lambda n: n[:50])
def test_no_framework_pass_on_the_own_dead_logs(tmp_path, name) -> None:
    report = audit(tmp_path, serving_logs=[DATA / "serving_logs" / name])
    fw = [r for r in report.results if r.layer == "framework"]
    assert fw and not [r.id for r in fw if r.status is Status.PASS]
    assert report.layer("framework").verdict is Verdict.NOT_READY
    assert report.result("FWK-LIFE-001").status is Status.FAIL


def test_mindie_death_names_the_first_cause_and_keeps_the_final_line(tmp_path) -> None:
    log = (
        DATA
        / "serving_logs"
        / "gpustack-3894_mindie_310p_MIE04E02041C_listen_failed_start_fail.log"
    )
    r = audit(tmp_path, serving_logs=[log]).result("FWK-LIFE-001")
    assert "first cause: [MIE04E02041C] [endpoint] Failed to listen 172.17.0.3:40032" in r.summary
    assert f"{log}:1)" in r.summary and "final: the MindIE server failed to start" in r.summary
    assert r.evidence[0].source == f"{log}:1" and r.evidence[1].source == f"{log}:4"
    assert r.metrics["first_cause_at"] == f"{log}:1"


def test_design_downgrade_alone_is_a_graph_warn(tmp_path) -> None:
    log = (
        DATA
        / "serving_logs"
        / "vllm-ascend-13346_AscendMLABackend_FULL_to_FULL_DECODE_ONLY_by_design.partial.log"
    )
    r = audit(tmp_path, layers=("framework",), serving_logs=[log]).result("FWK-GRAPH-001")
    assert r.status is Status.WARN and "FULL_DECODE_ONLY" in r.summary and "by design" in r.summary


@pytest.mark.parametrize(
    "name",
    [
        "vllm-ascend-1305_v0.8.5_V1_falls_back_to_V0_eager.partial.log",
        "vllm-ascend-1963_Mllama_not_supported_by_V1_falling_back_to_V0_then_traceback.partial.log",
    ],
)
def test_v1_to_v0_fallback_fails_graph_mode(tmp_path, name) -> None:
    r = audit(tmp_path, layers=("framework",), serving_logs=[DATA / "serving_logs" / name])
    graph = r.result("FWK-GRAPH-001")
    assert graph.status is Status.FAIL and "v0_engine_fallback" in graph.summary


def test_hccl_init_error_code_1_names_the_exception_and_hccl_causes(tmp_path) -> None:
    log = (
        DATA
        / "serving_logs"
        / ("vllm-ascend-2712_310p_PP3_hcclCommInitRootInfoConfig_error_code_1_ERR02200.partial.log")
    )
    r = audit(tmp_path, layers=("framework",), serving_logs=[log]).result("FWK-LIFE-001")
    assert "RuntimeError: create_config" in r.summary
    assert "1 (HCCL rejected a parameter" in r.summary  # hicann/hcomm HcclResult HCCL_E_PARA
    assert "rank table" in (r.remediation or "")


def test_a_33_minute_weight_load_is_a_finding(tmp_path) -> None:
    log = (
        DATA
        / "serving_logs"
        / "vllm-ascend-10343_nightly_weights_load_33min_29s_per_shard.partial.log"
    )
    r = audit(tmp_path, layers=("framework",), serving_logs=[log]).result("FWK-WGT-001")
    assert r.status is Status.WARN and "2083 s" in r.summary


def test_config_checks_do_not_pass_beside_a_dead_mindie_log(tmp_path) -> None:
    """MindIE config, memory fit and accessory checks stand on a live engine too (gpustack-3541)."""
    report = audit(
        tmp_path,
        serving_logs=[fixture(DEAD[2])],
        serving_configs=[fixture("framework/mindie_service_default_config.json")],
    )
    fw = [r for r in report.results if r.layer == "framework"]
    assert {"FWK-MINDIE-001", "FWK-MINDIE-003"} <= {r.id for r in fw}
    assert not [r.id for r in fw if r.status is Status.PASS]
    assert "the engine died" in report.result("FWK-MINDIE-001").summary


def test_a_pass_turns_warn_when_the_engine_died(tmp_path) -> None:
    """The guard itself: the same KV line PASSes on a live log and WARNs on a dead one."""
    head = (
        "Initializing a V1 LLM engine (v0.11.0) with config: model='m', max_seq_len=4096\n"
        "GPU KV cache size: 100,000 tokens\n"
    )
    alive = write(tmp_path, "alive.log", head + "INFO:     Application startup complete.\n")
    dead = write(tmp_path, "dead.log", head + "Traceback (most recent call last):\nKeyError: 'x'\n")
    assert audit(tmp_path, serving_logs=[alive]).result("FWK-KV-001").status is Status.PASS
    r = audit(tmp_path, serving_logs=[dead]).result("FWK-KV-001")
    assert r.status is Status.WARN and "the engine died" in r.summary


def test_final_exception_and_file_line_are_named(tmp_path) -> None:
    log = fixture(DEAD[6])
    r = audit(tmp_path, serving_logs=[log]).result("FWK-LIFE-001")
    assert "KeyError: 'model.embed_tokens.weight'" in r.summary
    assert "vllm_ascend/quantization/quant_config.py:152" in r.summary
    assert "after configured" in r.summary  # workers were loading the model


def test_operator_failure_is_operator_not_ready(tmp_path) -> None:
    report = audit(tmp_path, serving_logs=[fixture(DEAD[1])])
    r = report.result("OPR-KERNEL-001")
    assert r.status is Status.FAIL
    assert "507015" in r.summary and "EZ9903" in r.summary
    assert report.layer("operator").verdict is Verdict.NOT_READY
    assert any(e.values.get("layer") == "operator" for e in r.evidence)


def test_hccl_init_failure_names_code_and_likely_causes(tmp_path) -> None:
    report = audit(tmp_path, serving_logs=[fixture(DEAD[8])])
    r = report.result("FWK-LIFE-001")
    assert r.status is Status.FAIL
    assert "EJ0003" in r.summary and "11" in r.summary
    assert "leftover process" in (r.remediation or "") and "rank table" in (r.remediation or "")
    # Not an operator fault; the engine died before any operator ran.
    assert report.result("OPR-KERNEL-001").status is Status.SKIP


def test_healthy_log_is_ready_with_graph_proof(tmp_path) -> None:
    report = audit(tmp_path, serving_logs=[fixture(HEALTHY)])
    assert report.result("FWK-LIFE-001").status is Status.PASS
    g = report.result("FWK-GRAPH-001")
    assert g.status is Status.PASS and "PIECEWISE" in g.summary
    assert report.result("OPR-KERNEL-001").status is Status.PASS
    assert report.layer("framework").verdict is Verdict.READY


@pytest.mark.parametrize(
    ("text", "status", "words"),
    [
        (
            "CUDAGraphMode.FULL is not supported with MLA backend; setting "
            "cudagraph_mode=FULL_DECODE_ONLY\n",
            Status.WARN,
            "by design",
        ),
        (
            "NotImplementedError: Torchair graph mode only works with deepseek model.\n",
            Status.FAIL,
            "refused",
        ),
        ("WARNING Falling back to V0 engine.\n", Status.FAIL, "v0_engine_fallback"),
        ("WARNING falling back to eager mode\n", Status.FAIL, "eager_fallback"),
        (
            "Capturing CUDA graphs (decode, FULL):   0%|   | 0/2 [00:02<?, ?it/s]\n",
            Status.WARN,
            "not proven",
        ),
        ("Graph capturing finished in 7 secs, took 0.09 GiB\n", Status.PASS, "in effect"),
    ],
    ids=["downgrade", "torchair-refused", "v0", "eager", "unproven", "proof"],
)
def test_graph_mode_by_proof(tmp_path, text, status, words) -> None:
    head = "INFO [utils.py:1] non-default args: {'model': 'm'}\n"
    log = write(tmp_path, "g.log", head + text + "INFO:     Application startup complete.\n")
    r = audit(tmp_path, layers=("framework",), serving_logs=[log]).result("FWK-GRAPH-001")
    assert r.status is status, r.summary
    assert words in r.summary


def test_died_during_graph_capture_fails_graph(tmp_path) -> None:
    r = audit(tmp_path, serving_logs=[fixture(DEAD[0])]).result("FWK-GRAPH-001")
    assert r.status is Status.FAIL and "while capturing graphs" in r.summary


@pytest.mark.parametrize(
    ("name", "graph"),
    [
        (
            LA
            + "launch_310P_Qwen3.5-27B_TP4_additional-config_ascend_compilation_config_FULL_DECODE"
            "_ONLY_mtp_vllm-ascend-PR10309.partial.sh",
            Status.WARN,
        ),
        (
            LA + "launch_310P_Qwen3.6-27B-w8a8_TP2_eager_float16_nightly-v0.20.2rc-310p_vllm-ascend"
            "-10122.sh",
            Status.FAIL,
        ),
        (
            LA + "launch_4node_DSV3_DP8_TP4_EP_headless_additional-config_torchair_ascend_scheduler"
            "_vllm-ascend-3534.sh",
            Status.WARN,
        ),
    ],
    ids=["full-decode-only", "eager", "torchair-legacy"],
)
def test_launch_scripts_are_configs(tmp_path, name, graph) -> None:
    report = audit(tmp_path, layers=("framework",), serving_configs=[fixture(name)])
    assert report.result("FWK-GRAPH-001").status is graph
    assert report.result("FWK-KV-001").status in (Status.PASS, Status.WARN)


@pytest.mark.parametrize("text", ["", "just some notes\nnothing to see\n"], ids=["empty", "prose"])
def test_empty_or_unknown_inputs_are_errors_naming_the_file(tmp_path, text) -> None:
    p = write(tmp_path, "thing.txt", text)
    for kind in ("serving_configs", "serving_logs"):
        r = audit(tmp_path, layers=("framework",), **{kind: [p]}).result("FWK-LIFE-001")
        assert r.status is Status.ERROR and str(p) in r.summary, (kind, r.summary)


def test_collect_env_stack_is_judged_like_the_probe(tmp_path) -> None:
    bad = fixture(
        CE + "collect_env_vllm-ascend0.11.0rc1_torch_npu2.7.1_8x910B2_25.2.0_cann8.0"
        ".RC3.alpha001_vllm-ascend-4284.txt"
    )
    r = audit(tmp_path, layers=("framework",), serving_logs=[bad]).result("FWK-STACK-001")
    assert r.status is Status.FAIL and "torch_npu 2.7.1 with CANN 8.0.RC3.alpha001" in r.summary
    upstream = fixture(
        CE + "collect_env_310P_container_torch2.7.1cpu_torch_npu2.7.1.dev20250724"
        "_vllm0.10.0_vllm-ascend-6063.partial.txt"
    )
    r = audit(tmp_path, layers=("framework",), serving_logs=[upstream]).result("FWK-STACK-001")
    assert r.status is Status.WARN and "vllm-ascend" in r.summary


def test_glibc_custom_ops_fault_but_vllm_c_is_harmless(tmp_path) -> None:
    harmless = write(
        tmp_path,
        "a.log",
        (
            "WARNING 10-18 13:08:48 [_custom_ops.py:20] Failed to import from vllm._C with "
            "ModuleNotFoundError(\"No module named 'vllm._C'\")\n"
            "INFO:     Application startup complete.\n"
        ),
    )
    r = audit(tmp_path, layers=("framework",), serving_logs=[harmless]).result("FWK-STACK-001")
    assert r.status is Status.SKIP
    fault = write(
        tmp_path,
        "b.log",
        (
            "WARNING [utils.py:1] Failed to import vllm_ascend_C: /lib64/libc.so.6: version "
            "`GLIBC_2.32' not found (required by vllm_ascend_C.so), custom ops will be disabled\n"
            "INFO:     Application startup complete.\n"
        ),
    )
    r = audit(tmp_path, layers=("framework",), serving_logs=[fault]).result("FWK-STACK-001")
    assert r.status is Status.FAIL and "custom operators" in r.summary


def test_unjudged_engine_is_named(tmp_path) -> None:
    log = write(
        tmp_path,
        "s.log",
        "[2026-01-01] sglang.srt.server_args: ServerArgs(x=1)\n"
        "INFO:     Application startup complete.\n",
    )
    r = audit(tmp_path, layers=("framework",), serving_logs=[log]).result("FWK-LIFE-001")
    assert r.status is Status.SKIP and "SGLang" in r.summary


@pytest.mark.parametrize(
    ("lines", "status"),
    [
        ("Loading weights took 30.00 seconds\nLoading model weights took 60.0 GB\n", Status.PASS),
        ("Loading weights took 2400.00 seconds\nLoading model weights took 60.0 GB\n", Status.WARN),
        (
            "Loading safetensors checkpoint shards: 100% | 163/163 [40:00<00:00, 14.7s/it]\n",
            Status.WARN,
        ),
    ],
    ids=["fast", "40-min-60GB", "40-min-tqdm-no-size"],
)
def test_load_time_budget_without_a_policy_value(tmp_path, lines, status) -> None:
    log = write(tmp_path, "w.log", lines + "INFO:     Application startup complete.\n")
    r = audit(tmp_path, layers=("framework",), serving_logs=[log]).result("FWK-WGT-001")
    assert r.status is status, r.summary
    if status is Status.WARN:
        assert "slower than expected" in r.summary and "budget" in r.summary


def test_kv_capacity_is_blocks_times_the_forced_block_size(tmp_path) -> None:
    log = write(
        tmp_path,
        "kv.log",
        (
            "Initializing an LLM engine (v0.7.3) with config: model='m', max_seq_len=4096, "
            "block_size=16\n"
            "WARNING block_size 16 is not supported on NPU, forced to 128\n"
            "# npu blocks: 1000, # CPU blocks: 10\n"
            "INFO:     Application startup complete.\n"
        ),
    )
    r = audit(tmp_path, layers=("framework",), serving_logs=[log]).result("FWK-KV-001")
    assert "128,000 tokens" in r.summary, r.summary
