"""Tests for the serving-log scanner on real vllm-ascend logs, own samples and hostile input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from shared_fixtures import DATA, fixture, fixture_cases

from ascend_audit.facts.serving_log import (
    MAX_LINE_CHARS,
    ServingLogFacts,
    read_text_lines,
    scan_serving_log,
)

V0 = "framework/vllm-ascend_v0.7.4dev_V0_eager_pytest_sliding_window_npu_blocks_log.md"
V1 = "framework/vllm-ascend_v0.7.4dev_V1_serve_qwen2.5-7b_no_graph_capture_log.md"
OWN = DATA / "framework"


def scan_file(path: Path) -> ServingLogFacts:
    return scan_serving_log(read_text_lines(str(path)), path.name)


def scan_text(text: str, source: str = "inline.log") -> ServingLogFacts:
    return scan_serving_log(enumerate(text.splitlines(), 1), source)


def test_v0_fixture_eager_npu_blocks_and_load_times() -> None:
    f = scan_file(fixture(V0))
    assert f.problems == ()
    assert f.lines_read == 888
    assert f.engine == "V0"
    assert f.vllm_version == "0.7.4.dev360+gc91b64f7"
    assert f.graph_mode == "eager"
    assert f.enforce_eager is True
    assert [h.lineno for h in f.engine_inits if h.signal == "engine_init"] == [28, 55, 76, 100, 120]
    assert [h.lineno for h in f.eager] == [28, 55, 76, 100, 120]
    assert all(h.signal == "engine_enforce_eager" for h in f.eager)
    assert f.graph == () and f.graph_fallbacks == ()
    assert (f.npu_blocks, f.cpu_blocks, f.num_gpu_blocks_override) == (6250, 8738, 6250)
    blocks = f.hits("npu_blocks")
    assert [h.lineno for h in blocks] == [46, 66, 88, 111]
    assert blocks[0].text.endswith("# npu blocks: 6250, # CPU blocks: 8738")
    assert blocks[0].source == V0.split("/")[1]
    assert (f.max_concurrency, f.max_concurrency_tokens) == (6.1, 16384)
    assert [h.value for h in f.hits("weights_load_seconds")] == [2.18, 2.79, 2.28, 2.16, 2.14]
    assert f.weights_load_seconds == 2.14
    assert f.last("weights_load_seconds").lineno == 128
    assert f.hits("weights_download_seconds")[0].value == 1831.535092
    assert f.checkpoint_format == "safetensors"
    assert f.load_format == "auto"
    assert f.model == "bigcode/starcoder2-3b"
    assert f.max_model_len == 16384
    assert f.tensor_parallel_size == 1
    assert [h.value for h in f.hits("init_engine_seconds")] == [3.93, 1.24, 1.25, 0.79]
    assert [h.lineno for h in f.hits("memory_profiling_error")] == [872, 886]
    assert f.kv_cache_tokens is None and f.available_kv_gib is None
    # The pytest source listing `"enforce_eager": True,` is not an engine line.
    assert all("enforce_eager=True" in h.text and len(h.text) < 600 for h in f.eager)


def test_v1_fixture_no_graph_capture_kv_tokens() -> None:
    f = scan_file(fixture(V1))
    assert f.problems == ()
    assert f.lines_read == 133
    assert f.engine == "V1"
    assert f.vllm_version == "0.7.4.dev360+gc91b64f7"
    assert f.graph_mode == "eager"
    (eager,) = f.eager
    assert eager.signal == "npu_no_graph_capture" and eager.lineno == 70
    assert eager.text.startswith("npu not support graph capture")
    assert f.enforce_eager is False
    assert f.compilation_level == 0
    assert f.cudagraph_mode is None
    assert f.kv_cache_tokens == 744048
    assert f.last("kv_cache_tokens").lineno == 68
    assert (f.max_concurrency, f.max_concurrency_tokens) == (28.36, 26240)
    assert f.weights_load_seconds == 3.4
    assert f.last("weights_load_seconds").lineno == 67
    assert f.gpu_memory_utilization == 0.9
    assert f.block_size is None
    assert f.max_model_len == 26240
    assert f.cpu_offload_gb == 0.0
    assert f.model == "Qwen/Qwen2.5-7B-Instruct"
    assert f.kv_usage_max_pct == 0.0
    assert f.count("kv_usage_pct") == 10
    assert f.npu_blocks is None
    assert f.hits("ascend_platform")


@pytest.mark.parametrize("path", fixture_cases("framework", "*.md"))
def test_every_framework_log_fixture_scans_cleanly(path: Path) -> None:
    f = scan_file(path)
    assert f.problems == ()
    assert f.graph_mode == "eager"
    assert f.weights_load_seconds is not None
    json.dumps(f.to_dict())


def test_own_v1_aclgraph_log() -> None:
    f = scan_file(OWN / "vllm_ascend_v1_aclgraph_serve.log")
    assert f.problems == ()
    assert f.engine == "V1" and f.vllm_version == "0.11.0"
    assert f.graph_mode == "graph"
    assert f.cudagraph_mode == "FULL_AND_PIECEWISE"
    assert f.compilation_level == 3
    assert [h.value for h in f.hits("graph_capturing")] == [
        "CUDA mixed prefill-decode PIECEWISE",
        "CUDA decode FULL",
    ]
    assert (f.graph_capture_seconds, f.graph_capture_gib) == (14.0, 0.46)
    assert f.last("aclgraph_replaying").lineno == 21
    assert f.available_kv_gib == 43.12
    assert f.kv_cache_tokens == 627968
    assert f.max_concurrency == 19.16
    assert f.kv_usage_max_pct == 7.9
    assert f.last("kv_usage_pct").lineno == 23
    assert (f.block_size, f.gpu_memory_utilization, f.max_model_len) == (128, 0.9, 32768)
    assert f.tensor_parallel_size == 2
    assert f.alloc_conf == "expandable_segments:True"
    assert (f.weights_load_seconds, f.weights_gb) == (4.61, 7.6512)
    assert f.model_path == "/models/Qwen3-8B"
    assert f.eager == ()


def test_own_fallback_log() -> None:
    f = scan_file(OWN / "vllm_ascend_v1_graph_fallback.log")
    assert f.graph_mode == "eager"
    assert f.requested_cudagraph_mode == "FULL_DECODE_ONLY"
    assert f.cudagraph_mode == "NONE"
    (fb,) = f.graph_fallbacks
    assert (fb.signal, fb.value, fb.lineno) == ("cudagraph_unsupported_fallback", "NONE", 3)
    assert {h.signal for h in f.eager} == {"compilation_disabled", "engine_cudagraph_none"}
    assert f.last("kernel_block_size_mismatch").value == 16
    assert f.block_size == 16
    assert f.available_kv_gib == -1.25
    assert f.last("no_kv_memory").lineno == 10
    assert f.checkpoint_format == "pt" and f.load_format == "pt"
    assert f.weights_load_seconds == 190.42


def test_own_stack_error_log() -> None:
    f = scan_file(OWN / "vllm_ascend_stack_errors.log")
    values = {h.signal: h.value for h in f.stack_errors}
    assert values == {
        "cann_lib_missing": "libascend_hal.so",
        "backend_extension_failed": "torch_npu",
        "undefined_symbol": "_ZN3c1015SmallVectorBaseIjE8grow_podEPKvmm",
        "two_accelerators": "cuda",
        "device_type_mismatch": "A2",
    }
    assert {h.signal for h in f.graph_failures} == {
        "stream_resources_207008",
        "stream_resources_insufficient",
    }
    assert {h.signal: h.lineno for h in f.env_conflicts} == {
        "launch_blocking_conflict": 10,
        "task_queue_conflict": 11,
    }
    assert f.graph_mode == "unknown"


@pytest.mark.parametrize(
    ("line", "signal", "value", "category"),
    [
        (
            "INFO Enforce eager set, disabling torch.compile and CUDAGraphs.",
            "enforce_eager_set",
            True,
            "eager",
        ),
        ("INFO Cudagraph is disabled under eager mode", "cudagraph_disabled_eager", True, "eager"),
        (
            "Starting to capture ACL graphs for cases: [2, 4], mode: PIECEWISE, "
            "uniform_decode: False",
            "graph_capture_started",
            "PIECEWISE",
            "graph",
        ),
        ("Capturing ACL graphs (decode, FULL): 50%", "graph_capturing", "ACL decode FULL", "graph"),
        (
            "Capturing torchair graph, this usually takes 5 minutes",
            "torchair_capturing",
            True,
            "graph",
        ),
        ("Batchsize 8 is compiled successfully: 2/4.", "torchair_compiled", 8, "graph"),
        (
            "WARNING Encoder-decoder models don't support FULL_AND_PIECEWISE, "
            "fallback to PIECEWISE.",
            "encoder_decoder_fallback",
            "PIECEWISE",
            "graph_fallbacks",
        ),
        (
            "cudagraph_mode=FULL_AND_PIECEWISE is not supported with spec-decode for attention "
            "backend X; setting cudagraph_mode=PIECEWISE",
            "cudagraph_mode_reset",
            "PIECEWISE",
            "graph_fallbacks",
        ),
        ("error code is 207005, Alloc sq cq fail", "alloc_sq_cq_fail", True, "graph_failures"),
        ("ACLgraph sizes capture fail: 512", "aclgraph_capture_fail", True, "graph_failures"),
        (
            "Adjusted ACL graph batch sizes for Qwen3MoeForCausalLM model (layers: 94): "
            "67 → 6 sizes",
            "capture_sizes_adjusted",
            6,
            "graph_notes",
        ),
        (
            "AscendCompiler hash factors: {'torch_npu_version': '2.10.0', "
            "'enable_npugraph_ex': False}",
            "npugraph_ex",
            False,
            "graph_notes",
        ),
        ("GPU KV cache size: 1,024 tokens", "kv_cache_tokens", 1024, "kv"),
        ("Available memory: 1000, total memory: 65536", "available_memory_bytes", 1000, "kv"),
        (
            "Block size is set to 128 if prefix cache or chunked prefill is enabled.",
            "block_size_forced_128",
            128,
            "kv",
        ),
        (
            "Post graph compilation, the available memory on each NPU is reduced to merely 1.50 GB",
            "post_graph_memory_gb",
            1.5,
            "kv",
        ),
        ("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB", "npu_oom", True, "kv"),
        ("Model loading took 15.2 GiB memory and 31.5 seconds", "model_loading", 15.2, "weights"),
        (
            "ImportError: libhccl.so: cannot open shared object file: No such file or directory. "
            "Please run 'source set_env.sh' in the CANN installation path.",
            "cann_lib_missing",
            "libhccl.so",
            "stack_errors",
        ),
        (
            "the socversion Ascend910B1 of bin package does not match the current "
            "device socverison Ascend310P3",
            "soc_version_mismatch",
            "Ascend910B1",
            "stack_errors",
        ),
        (
            "maybe your hdk version is too low, please upgrade it",
            "version_too_low",
            "hdk",
            "stack_errors",
        ),
        ("[INFO] Daemon start success!", "mindie_daemon_started", True, "mindie"),
    ],
)
def test_signatures(line: str, signal: str, value: object, category: str) -> None:
    f = scan_text(f"x\n{line}\n")
    hits = [h for h in getattr(f, category) if h.signal == signal]
    assert hits, f.to_dict()
    assert hits[0].value == value
    assert hits[0].lineno == 2
    assert hits[0].source == "inline.log"


def test_model_loading_sets_weights_fields() -> None:
    f = scan_text("Model loading took 15.2 GiB memory and 31.5 seconds")
    assert (f.weights_gb, f.weights_load_seconds) == (15.2, 31.5)


def test_cudagraph_int_and_enum_forms() -> None:
    f = scan_text(
        "Initializing a V1 LLM engine (v0.10.1) with config: model='m', enforce_eager=True, "
        'compilation_config={"level":0,"cudagraph_mode":0}'
    )
    assert f.cudagraph_mode == "NONE" and f.enforce_eager is True
    assert f.graph_mode == "eager"
    f = scan_text(
        "Initializing a V1 LLM engine (v0.11.0) with config: model='m', "
        'compilation_config={"mode":3,"cudagraph_mode":"CUDAGraphMode.FULL_DECODE_ONLY"}'
    )
    assert f.cudagraph_mode == "FULL_DECODE_ONLY" and f.compilation_level == 3


def test_torchair_is_graph_despite_cudagraph_none() -> None:
    f = scan_text(
        "Torchair compilation enabled on NPU. Setting CUDAGraphMode to NONE\n"
        "Initializing a V1 LLM engine (v0.11.0) with config: model='m', "
        'compilation_config={"cudagraph_mode":0}\n'
        "Capturing torchair graph, this usually takes 1 minute\n"
    )
    assert f.graph_mode == "unknown"  # capture started: not yet proof that graphs run
    f = scan_text(
        "Torchair compilation enabled on NPU. Setting CUDAGraphMode to NONE\n"
        "Initializing a V1 LLM engine (v0.11.0) with config: model='m', "
        'compilation_config={"cudagraph_mode":0}\n'
        "Capturing torchair graph, this usually takes 1 minute\n"
        "Batchsize 8 is compiled successfully: 1/1.\n"
    )
    assert f.graph_mode == "graph"


def test_old_engine_line_is_v0() -> None:
    f = scan_text(
        "INFO Initializing an LLM engine (v0.6.3) with config: model='m', enforce_eager=False"
    )
    assert f.engine == "V0" and f.vllm_version == "0.6.3"


def test_mindie_engine() -> None:
    f = scan_text("[2025-01-01 10:00:00] mindieservice_daemon starting\nDaemon start success!\n")
    assert f.engine == "mindie"


def test_long_line_window_keeps_the_match() -> None:
    line = "x" * 5000 + " Loading weights took 9.50 seconds " + "y" * 5000
    f = scan_text(line)
    hit = f.last("weights_load_seconds")
    assert hit.value == 9.5
    assert "Loading weights took 9.50 seconds" in hit.text
    assert len(hit.text) < 600


def test_hostile_empty_binary_and_bad_items() -> None:
    assert scan_serving_log([], "empty").problems == ("log is empty",)
    garbage = [(i, bytes(range(256)).decode("latin-1") * 3) for i in range(1, 50)]
    f = scan_serving_log(garbage, "bin")
    assert f.lines_read == 49 and f.graph_mode == "unknown"
    f = scan_serving_log([(1, b"Loading weights took 1.0 seconds\xff"), (2, None), "junk"], "mixed")  # type: ignore[list-item]
    assert f.weights_load_seconds == 1.0
    assert len(f.problems) == 2

    def broken():
        yield 1, "GPU KV cache size: 10 tokens"
        raise OSError("disk vanished")

    f = scan_serving_log(broken(), "broken")
    assert f.kv_cache_tokens == 10
    assert any("disk vanished" in p for p in f.problems)


def test_over_long_line_is_capped(tmp_path: Path) -> None:
    p = tmp_path / "long.log"
    p.write_bytes(b"a" * (MAX_LINE_CHARS * 5) + b"\nLoading weights took 3.00 seconds\n")
    lines = list(read_text_lines(str(p)))
    assert [n for n, _ in lines] == [1, 2]
    assert len(lines[0][1]) == MAX_LINE_CHARS
    f = scan_serving_log(iter([(1, "b" * (MAX_LINE_CHARS + 10))]), "long")
    assert f.long_lines == 1 and f.problems


def test_huge_log_is_linear_and_bounded() -> None:
    n = 100_000
    metric = (
        "INFO 09-02 10:12:30 [loggers.py:127] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
        "Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: {}%, Prefix cache hit rate: 0.0%"
    )

    def gen():
        for i in range(1, n + 1):
            if i % 1000 == 0:
                yield i, "Replaying aclgraph"
            else:
                yield i, metric.format(i % 97)

    f = scan_serving_log(gen(), "huge.log")
    assert f.lines_read == n
    assert f.kv_usage_max_pct == 96.0
    assert f.count("aclgraph_replaying") == 100
    assert len(f.hits("aclgraph_replaying")) == 16
    assert f.last("aclgraph_replaying").lineno == n
    assert any("aclgraph_replaying: 100 matching lines" in p for p in f.problems)


def test_to_dict_is_json() -> None:
    f = scan_file(OWN / "vllm_ascend_v1_aclgraph_serve.log")
    d = json.loads(json.dumps(f.to_dict()))
    assert d["graph_mode"] == "graph"
    assert d["graph"][0]["lineno"] == 16
    assert d["signal_counts"]["graph_capturing"] == 2
