"""Serving logs read as a lifecycle: stage reached, death with its final exception and
file:line, error codes, engines, versions; the chunked one-pass scanner agrees with the line
scanner; hostile input."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_fixtures import fixture

from ascend_audit.facts.serving_log import (
    ServingLogFacts,
    filescan,
    read_text_lines,
    scan_serving_log,
    scan_serving_log_file,
)

SL = "field/serving_logs/"
VR = "field/visibility_and_resources/"
LA = "field/launch_and_args/"
CE = "field/collect_env/"

# fixture → (stage, died, final exception prefix or death signal, where suffix, codes)
DEAD = {
    SL + "310P_Qwen3.5-27B_mtp_graph_capture_EE9999_captured-stream_sync_107030_107027_cann9.1.0"
    "-beta.1_vllm-ascend-10640.partial.log": (
        None,
        "RuntimeError: copy_between_host_and_device_opapi",
        "CopyKernelOpApi.cpp:55",
        {"acl:107030", "acl:107027", "cann:EE9999", "torch_npu:ERR00100"},
    ),
    SL + "310P_Qwen3.6-27B-w8a8_TP2_aicore_exception_507015_EZ9903_aclrtLaunchKernelWithHostArgs"
    "_ERR00100_vllm-ascend-10122.partial.log": (
        None,
        "torch_npu_error",
        None,
        {"acl:507015", "cann:EZ9903", "torch_npu:ERR00100"},
    ),
    SL + "MindIE2.2.RC1_Qwen2.5-VL-7B_910B2_1card_warmup_OOM_maxPrefillTokens_gpustack-3541"
    ".partial.log": (None, "mindie_warmup_failed", None, set()),
    SL + "sglang_A3_cann9.0.0_deepseek_r1_w4a8_torch_npu_memory_NPU_out_of_memory_61.27GiB"
    "_Ascend-sglang-668.partial.log": (None, "npu_oom", None, set()),
    SL + "torch_npu_SetDevice_507033_ERR00100_E30006_OPP_verify_failed_cann8.0.RC3.alpha001"
    "_mineru_vllm-ascend-4284.log": (
        None,
        "RuntimeError: Initialize:",
        "torch_npu/npu/__init__.py:251",
        {"acl:507033", "cann:E30006", "torch_npu:ERR00100"},
    ),
    SL + "vllm-ascend0.11.0rc0-310p_Qwen3-VL-8B_TP2_eager_kvcache_format_cast_507013_EL0004_sdma"
    "_SMMU_EngineCore_init_failed_ERR99999_vllm-ascend-4074.partial.log": (
        "kv_sized",
        "RuntimeError: Engine core initialization failed",
        "engine/utils.py:785",
        {"acl:507013", "cann:EL0004", "acl:207001", "torch_npu:ERR00100", "torch_npu:ERR99999"},
    ),
    SL + "vllm-ascend0.11.0rc0_DSV3-0324_DP8TP4_torchair_quantization_ascend_KeyError_model"
    ".embed_tokens.weight_WorkerProc_failed_vllm-ascend-3534.partial.log": (
        "configured",  # workers were loading the model (the engine-config line is cut out)
        "KeyError: 'model.embed_tokens.weight'",
        "quant_config.py:152",
        set(),
    ),
    VR + "ASCEND_RT_VISIBLE_DEVICES_0125_noncontiguous_AssertionError_Invalid_device_id_910B4_v1"
    "_vllm-ascend-449.partial.log": (
        None,
        "AssertionError: Invalid device id",
        "torch_npu/npu/utils.py:70",
        set(),
    ),
    VR + "HCCL_HcclGetRootInfo_error11_EJ0003_port60000_already_bound_two_tp4_jobs_vllm-ascend"
    "-405.log": (
        None,
        "RuntimeError: createHCCLComm",
        "compiler_depend.ts:1479",
        {"hccl:11", "cann:EJ0003", "torch_npu:ERR02200"},
    ),
    VR + "MindIE_ASCEND_RT_VISIBLE_DEVICES_4_error_input_data_rang_0-2_NPU_VM_gpustack-3352"
    ".partial.log": (None, "visible_devices_refused", None, set()),
    VR + "aclrtSetDevice_507033_EL0004_Memory_Allocation_Failure_device2_cannot_open_PTOAS-341"
    ".partial.log": (None, "device_open_failed", None, {"acl:507033", "cann:EL0004"}),
    VR + "dev_shm_too_small_raylet_9GB_available_10GB_requested_Kimi-K2.5_TP8_PP2_gpustack-5014"
    ".partial.log": (None, "dev_shm_too_small", None, set()),
    VR + "ray_c10d_TCPStore_Timed_out_1801s_1of8_clients_joined_multinode_vllm-ascend-167"
    ".partial.log": (None, "torch.distributed.DistStoreError: Timed out", None, set()),
    VR + "ray_worker_Set_visible_device_failed_invalid_device1_visible_1_107001_0x7020014"
    "_vllm-ascend-167.partial.log": (None, "device_open_failed", None, {"acl:107001"}),
}
HEALTHY = (
    SL + "healthy_offline_Qwen3-0.6B_910_PIECEWISE_ACLgraph_captured_enum_CUDAGraphMode.PIECEWISE"
    "_Replaying_aclgraph_vllm-ascend-quickstart-doc.log"
)


def scan(path: Path) -> ServingLogFacts:
    return scan_serving_log_file(str(path), path.name)


def text_scan(text: str) -> ServingLogFacts:
    return scan_serving_log(enumerate(text.splitlines(), 1), "inline.log")


@pytest.mark.parametrize("name", sorted(DEAD), ids=lambda n: n.split("/")[-1][:50])
def test_dead_field_logs_end_in_death_named_with_file_line_and_codes(name: str) -> None:
    stage, death, where, codes = DEAD[name]
    f = scan(fixture(name))
    assert f.died, f.to_dict()
    assert f.stage == stage
    if death.startswith(("RuntimeError", "KeyError", "AssertionError", "torch.")):
        assert f.final_exception and f.final_exception.startswith(death)
        assert f.death.signal == "final_exception"
    else:
        assert f.death.signal == death
    if where:
        assert f.exception_where and f.exception_where.endswith(where)
    assert {str(h.value) for h in f.error_codes} == codes
    assert f.death.lineno >= 1 and f.death.text


def test_healthy_log_serves_and_its_shutdown_is_not_a_death() -> None:
    f = scan(fixture(HEALTHY))
    assert not f.died and f.death is None
    assert f.stage == "serving" and f.shut_down
    assert [h.value for h in f.lifecycle if h.signal.startswith("stage_")] == [
        "launched",
        "configured",
        "weights_loaded",
        "kv_sized",
        "graphs_captured",
        "serving",
    ]
    assert f.graph_mode == "graph" and f.cudagraph_mode == "PIECEWISE"
    assert f.compilation_level == 3  # <CompilationMode.VLLM_COMPILE: 3>
    assert f.block_size == 128  # "Block size is set to 128 …": the engine's value
    assert f.engine_kind == "vllm"


def test_launch_and_engine_config_lines_are_read() -> None:
    f = scan(
        fixture(
            LA + "non-default_args_and_engine_config_vllm0.11.0rc3_utils233_cudagraph"
            "_mode_int0_torchair_DSV3_vllm-ascend-3534.partial.log"
        )
    )
    assert f.stage == "configured" and not f.died
    assert f.cudagraph_mode == "NONE" and f.hits("torchair_enabled")
    assert f.graph_mode == "unknown"  # torchair asked for; nothing proves it compiled
    assert f.launch_args and f.launch_args[0] == 2
    assert f.launch_args[1].startswith("non-default args: {")
    assert f.version("vllm") == "0.11.0rc3"


@pytest.mark.parametrize(
    ("name", "versions"),
    [
        (
            CE
            + "collect_env_vllm-ascend0.11.0rc1_torch_npu2.7.1_8x910B2_25.2.0_cann8.0.RC3.alpha001"
            "_vllm-ascend-4284.txt",
            {
                "torch": "2.7.1+cpu",
                "torch_npu": "2.7.1",
                "vllm": "0.11.0",
                "vllm_ascend": "0.11.0rc1",
                "cann": "8.0.RC3.alpha001",
                "driver": "25.2.0",
            },
        ),
        (
            CE + "collect_env_vllm-ascend0.7.3_310P3_npu6_2chip_25.0.rc1.1_cann8.1.RC1_kylinV10"
            "_vllm-ascend-1993.txt",
            {
                "torch": "2.5.1",
                "torch_npu": "2.5.1",
                "vllm": "0.7.3",
                "vllm_ascend": "0.7.3",
                "cann": "8.1.RC1",
                "driver": "25.0.rc1.1",
            },
        ),
        (
            CE + "collect_env_310P_container_torch2.7.1cpu_torch_npu2.7.1.dev20250724_vllm0.10.0"
            "_vllm-ascend-6063.partial.txt",
            {"torch": "2.7.1+cpu", "torch_npu": "2.7.1.dev20250724", "vllm": "0.10.0"},
        ),
    ],
    ids=["new-layout", "old-layout", "upstream"],
)
def test_collect_env_versions(name: str, versions: dict[str, str]) -> None:
    f = scan(fixture(name))
    assert f.collect_env and f.recognised and not f.died
    names = ("torch", "torch_npu", "vllm", "vllm_ascend", "cann", "driver")
    assert {n: f.version(n) for n in names if f.version(n)} == versions
    assert f.engine_kind in ("vllm", None)  # mindietorch is not MindIE serving


def test_restart_after_death_and_recovered_errors_are_not_deaths() -> None:
    f = text_scan(
        "INFO non-default args: {'model': 'm'}\n"
        "Traceback (most recent call last):\n"
        '  File "/x/a.py", line 3, in f\n'
        "ValueError: bad\n"
        "INFO non-default args: {'model': 'm'}\n"
        "INFO:     Application startup complete.\n"
        'INFO:     127.0.0.1:1 - "POST /v1/completions HTTP/1.1" 200 OK\n'
    )
    assert not f.died and f.stage == "serving" and f.hits("final_exception")
    f = text_scan(
        "INFO:     Application startup complete.\n"
        'INFO:     127.0.0.1:1 - "POST /v1/completions HTTP/1.1" 200 OK\n'
        "Traceback (most recent call last):\n"
        '  File "/x/serving.py", line 9, in handle\n'
        "ValueError: request had a bad field\n"
        'INFO:     127.0.0.1:1 - "POST /v1/completions HTTP/1.1" 200 OK\n'
    )
    assert not f.died  # a request failed, the server went on serving
    f = text_scan(
        "INFO:     Application startup complete.\n"
        'INFO:     127.0.0.1:1 - "POST /v1/completions HTTP/1.1" 200 OK\n'
        "ERROR 01-01 00:00:00 [core.py:1] EngineCore encountered a fatal error.\n"
        "Traceback (most recent call last):\n"
        '  File "/x/core.py", line 77, in run\n'
        "RuntimeError: NPU function error: call failed, error code is 507018\n"
    )
    assert f.died and f.stage == "serving"  # died while serving
    assert f.exception_where == "/x/core.py:77"
    assert [h.value for h in f.error_codes] == ["acl:507018"]


def test_models_404_over_and_over_is_a_death() -> None:
    lines = 'INFO:     10.0.0.1:1 - "GET /v1/models HTTP/1.1" 404 Not Found\n' * 5
    f = text_scan("INFO Start mindie server\n" + lines)
    assert f.died and f.death.signal == "models_404" and f.models_404 == 5


@pytest.mark.parametrize(
    ("line", "engine"),
    [
        ("[2026-01-01 00:00:00] sglang.srt.server_args: ServerArgs(model_path='m')", "sglang"),
        (
            "2026-01-01 00:00:00,000 - lmdeploy - INFO - async_engine.py:1 - backend=turbomind",
            "lmdeploy",
        ),
        ('2026-01-01T00:00:00Z INFO text_generation_launcher: Args { model_id: "m" }', "tgi"),
    ],
)
def test_other_engines_are_named(line: str, engine: str) -> None:
    assert text_scan(line).engine_kind == engine


def test_pytest_report_of_an_exception() -> None:
    f = text_scan(
        ">       assert peak_memory > 0\n"
        "E       AssertionError: Error in memory profiling.\n"
        "\n"
        "../vllm_ascend/worker/worker.py:227: AssertionError\n"
    )
    assert f.died and f.final_exception == "AssertionError: Error in memory profiling."
    assert f.exception_where == "../vllm_ascend/worker/worker.py:227"


def test_graph_refusals_and_fallbacks() -> None:
    f = text_scan(
        "NotImplementedError: Torchair graph mode only works with deepseek model.\n"
        "WARNING Falling back to V0 engine.\n"
        "WARNING falling back to eager mode\n"
    )
    assert {h.signal for h in f.graph_failures} >= {
        "torchair_refused",
        "v0_engine_fallback",
        "eager_fallback",
    }
    f = text_scan(
        "WARNING [compilation.py:1] CUDAGraphMode.FULL is not supported with MLA backend; "
        "setting cudagraph_mode=FULL_DECODE_ONLY\n"
    )
    assert f.last("cudagraph_mode_reset").value == "FULL_DECODE_ONLY"


def test_weights_from_tqdm_and_forced_block_size() -> None:
    f = text_scan(
        "Loading safetensors checkpoint shards:  50% Completed | 2/4 [00:41<00:41, 20.6s/it]\n"
        "Loading safetensors checkpoint shards: 100% Completed | 4/4 [01:23<00:00, 20.8s/it]\n"
        "WARNING block_size 16 is not supported on NPU, forced to 128\n"
        "Initializing a V1 LLM engine (v0.11.0) with config: model='m', block_size=16\n"
        "# npu blocks: 1000, # CPU blocks: 10\n"
    )
    assert f.weights_load_seconds == 83.0
    assert f.block_size == 128 and f.npu_blocks == 1000


def _synthetic(tmp_path: Path, mid_lines: int = 40_000) -> Path:
    head = (
        "INFO 01-01 00:00:00 [utils.py:1] non-default args: {'model': '/m', "
        "'additional_config': {'torchair_graph_config': {'enabled': True}}}\n"
        "(EngineCore pid=1) INFO [core.py:1] Initializing a V1 LLM engine (v0.11.0) with config: "
        "model='/m', max_seq_len=4096, block_size=128, enforce_eager=False\n"
        "(EngineCore pid=1) INFO [default_loader.py:1] Loading weights took 12.50 seconds\n"
        "(EngineCore pid=1) INFO [kv_cache_utils.py:1] GPU KV cache size: 100,000 tokens\n"
        "(APIServer pid=2) INFO:     Application startup complete.\n"
    )
    access = (
        '(APIServer pid=2) INFO:     10.0.0.1:1 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
    )
    metrics = (
        "(APIServer pid=2) INFO [loggers.py:1] Engine 000: Avg prompt throughput: 10.0 tokens/s, "
        "GPU KV cache usage: {:.1f}%, Prefix cache hit rate: 0.0%\n"
    )
    request = "(APIServer pid=2) INFO [logger.py:1] Received request r: prompt: 'tell me more'\n"
    with (tmp_path / "big.log").open("w") as fh:
        fh.write(head)
        for i in range(mid_lines):
            fh.write(access if i % 3 else request)
            if i % 50 == 0:
                fh.write(metrics.format((i % 97) / 1.0))
            if i == mid_lines // 2:
                fh.write(
                    "[W101 00:00:00.0 compiler_depend.ts:1] Warning: CAUTION: The operator "
                    "'aten::isin' is not currently supported on the NPU backend and will "
                    "fall back to run on the CPU.\n"
                )
                fh.write(
                    '(APIServer pid=2) INFO:     1.2.3.4:5 - "GET /v1/models HTTP/1.1" 404 x\n'
                )
        fh.write("(Worker pid=3) ERROR [multiproc_executor.py:1] WorkerProc hit an exception.\n")
        fh.write(
            "(Worker pid=3) ERROR [multiproc_executor.py:1] Traceback (most recent call last):\n"
        )
        fh.write(
            '(Worker pid=3) ERROR [multiproc_executor.py:1]   File "/w/runner.py", line 5, in x\n'
        )
        fh.write(
            "(Worker pid=3) ERROR [multiproc_executor.py:1] RuntimeError: NPU function error: "
            "call failed, error code is 507015\n"
        )
    return tmp_path / "big.log"


@pytest.mark.parametrize("tail", [16, 1 << 20])
def test_chunked_scan_agrees_with_the_line_scanner(tmp_path, monkeypatch, tail) -> None:
    path = _synthetic(tmp_path)
    monkeypatch.setattr(filescan, "HEAD_LINES", 3)
    monkeypatch.setattr(filescan, "TAIL_BYTES", tail)
    monkeypatch.setattr(filescan, "CHUNK_BYTES", 64 * 1024)  # many chunk seams
    fast = scan_serving_log_file(str(path), "big.log")
    slow = scan_serving_log(read_text_lines(str(path)), "big.log")
    for name in (
        "stage",
        "died",
        "final_exception",
        "exception_where",
        "lines_read",
        "kv_usage_max_pct",
        "kv_cache_tokens",
        "weights_load_seconds",
        "models_404",
        "error_codes",
        "legacy",
        "launch_args",
    ):
        if hasattr(slow, name):
            assert getattr(fast, name) == getattr(slow, name), name
    assert fast.count("kv_usage_pct") == slow.count("kv_usage_pct")
    assert fast.last("kv_usage_pct").lineno == slow.last("kv_usage_pct").lineno
    assert fast.died and fast.exception_where == "/w/runner.py:5"
    assert fast.serving_lines == slow.serving_lines > 20_000
    assert [h.operator for h in fast.fallback.hits] == ["aten::isin"]
    assert fast.fallback.lines_scanned == fast.lines_read


def test_progress_callback_and_bounded_reads(tmp_path) -> None:
    path = _synthetic(tmp_path, 30_000)
    seen: list[tuple[int, int]] = []
    scan_serving_log_file(str(path), progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1] == path.stat().st_size


@pytest.mark.parametrize(
    ("data", "check"),
    [
        (b"", lambda f: "log is empty" in f.problems and f.lines_read == 0),
        (b"hello world\nnothing here\n", lambda f: not f.recognised),
        (bytes(range(256)) * 8000, lambda f: f.binary_share > 0.1),
        (
            b"x" * (3 << 20) + b"\nTraceback (most recent call last):\nKeyError: 'k'\n",
            lambda f: f.long_lines == 1 and f.died and f.final_exception == "KeyError: 'k'",
        ),
        (b"KeyError: 'no newline at the end'", lambda f: f.died and f.lines_read == 1),
        (b"\xff\xfe\x00Error: \x00\n" * 1000, lambda f: f.lines_read == 1000),
        (
            b"\r\n".join([b"INFO:     Application startup complete."] * 3),
            lambda f: f.stage == "server_up",
        ),
    ],
    ids=["empty", "not-a-log", "binary", "huge-line", "no-newline", "nul-bytes", "crlf"],
)
def test_hostile_files(tmp_path, data: bytes, check) -> None:
    p = tmp_path / "hostile.log"
    p.write_bytes(data)
    f = scan_serving_log_file(str(p))
    assert check(f), f.to_dict()


def test_mindie_daemon_killed_then_restarted_is_alive_and_killed_alone_is_dead() -> None:
    killed = (
        "Daemon start success!\n"
        "Daemon is killing...\n"
        "[EntryPoint Script Log]running job failed. exit code: 137\n"
    )
    f = text_scan(killed)
    assert f.died and f.death.signal in ("mindie_daemon_killed", "mindie_job_failed")
    f = text_scan(
        killed + "[EntryPoint Script Log]restart mindie service daemon, cur: 0, max: 1\n"
        "Daemon start success!\n"
    )
    assert not f.died and f.stage == "server_up"
