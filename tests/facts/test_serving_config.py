"""Tests for serving configuration parsing: vLLM argv, YAML, option JSON, MindIE config.json."""

from __future__ import annotations

import json

import pytest
from shared_fixtures import DATA, fixture_files, read_fixture

from ascend_audit.facts.serving_config import (
    cudagraph_name,
    is_vllm_argv,
    parse_config_file,
    parse_mindie_config,
    parse_option_json,
    parse_vllm_argv,
    parse_vllm_yaml,
)

MINDIE = "framework/mindie_service_default_config.json"
OWN = DATA / "framework"


def test_mindie_default_config_fixture() -> None:
    c = parse_mindie_config(read_fixture(MINDIE), "config.json")
    assert c.problems == ()
    assert c.engine == "mindie"
    assert c.block_size == 128
    assert c.npu_mem_size == -1
    assert c.cpu_mem_size == 0
    assert c.npu_device_ids == ((0, 1, 2, 3),)
    assert c.world_size == 4
    assert c.max_model_len == 2560
    assert c.max_input_token_len == 2048
    assert c.max_prefill_tokens == 8192
    assert c.max_batch_size == 200
    assert c.max_prefill_batch_size == 50
    assert c.model == "llama_65b"
    assert c.model_path == "/data/atb_testdata/weights/llama1-65b-safetensors"
    assert c.backend_type == "atb"
    assert c.model_instances == 1
    item = c.item("cacheBlockSize")
    assert item.key == "ScheduleConfig.cacheBlockSize" and item.value == 128
    assert item.lineno == 101 and item.text == '"cacheBlockSize" : 128,'
    assert c.item("npuMemSize").lineno == 83
    json.dumps(c.to_dict())


@pytest.mark.parametrize("path", fixture_files("framework", "*.json"), ids=lambda p: p.name)
def test_every_framework_json_fixture_is_understood(path) -> None:
    c = parse_config_file(path.read_text(encoding="utf-8"), path.name)
    assert c.engine == "mindie" and c.problems == ()


def test_mindie_world_size_mismatch_and_bad_shapes() -> None:
    data = json.loads(read_fixture(MINDIE))
    data["BackendConfig"]["npuDeviceIds"] = [[0, 1], "x"]
    c = parse_mindie_config(json.dumps(data), "c.json")
    assert c.npu_device_ids == ((0, 1),)
    assert any("worldSize 4" in p for p in c.problems)
    assert any("not a list of integers" in p for p in c.problems)
    assert parse_mindie_config("{not json", "c.json").problems[0].startswith("invalid JSON")
    assert parse_mindie_config("[1, 2]", "c.json").problems == ("config.json is not a JSON object",)
    assert "missing section BackendConfig" in parse_mindie_config("{}", "c.json").problems


def test_vllm_serve_argv() -> None:
    argv = [
        "/usr/local/python3.11/bin/python3.11", "/usr/local/python3.11/bin/vllm", "serve",
        "/models/Qwen3-8B", "--block-size", "16", "--gpu-memory-utilization=0.95",
        "--enforce-eager",
        "--no-enable-prefix-caching", "-tp", "2", "--max_model_len", "32768",
        "--additional-config",
        '{"torchair_graph_config": {"enabled": true}, "enable_graph_mode": true}',
        "--compilation-config", '{"cudagraph_mode": "FULL_DECODE_ONLY", "full_cuda_graph": true}',
        "--cpu-offload-gb", "4", "--load-format", "dummy", "--quantization", "ascend",
        "--api-key", "s3cr3t", "--max-num-batched-tokens", "8192",
    ]  # fmt: skip
    c = parse_vllm_argv(argv, env={"TASK_QUEUE_ENABLE": "2", "AWS_SECRET": "x"})
    assert c.problems == ()
    assert c.engine == "vllm"
    assert (c.model, c.model_path) == ("/models/Qwen3-8B", "/models/Qwen3-8B")
    assert (c.block_size, c.gpu_memory_utilization, c.max_model_len) == (16, 0.95, 32768)
    assert c.enforce_eager is True and c.enable_prefix_caching is False
    assert c.tensor_parallel_size == 2
    assert c.cudagraph_mode == "FULL_DECODE_ONLY" and c.full_cuda_graph is True
    assert c.legacy_keys == ("torchair_graph_config", "enable_graph_mode")
    assert c.additional_config["torchair_graph_config"] == {"enabled": True}
    assert (c.cpu_offload_gb, c.load_format, c.quantization) == (4.0, "dummy", "ascend")
    assert c.env == {"TASK_QUEUE_ENABLE": "2"}
    assert c.options["max_num_batched_tokens"] == 8192
    assert c.options["api_key"] == "***"
    assert "s3cr3t" not in json.dumps(c.to_dict())
    bs = c.item("block_size")
    assert (bs.lineno, bs.text) == (4, "--block-size 16")
    assert c.item("gpu_memory_utilization").text == "--gpu-memory-utilization=0.95"


def test_api_server_module_and_short_flags() -> None:
    argv = [
        "python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "Qwen/Qwen2.5-7B",
        "-O3", "-cc.cudagraph_mode=PIECEWISE", "--compilation-config.cudagraph_capture_sizes",
        "[1,2,4]", "-q", "ascend", "--enable-chunked-prefill", "--trust-remote-code",
        "--additional-config.ascend_compilation_config.enable_npugraph_ex", "false",
    ]  # fmt: skip
    c = parse_vllm_argv(argv)
    assert c.engine == "vllm" and c.problems == ()
    assert c.model == "Qwen/Qwen2.5-7B" and c.model_path is None
    assert c.compilation_config == {
        "level": 3,
        "cudagraph_mode": "PIECEWISE",
        "cudagraph_capture_sizes": [1, 2, 4],
    }
    assert c.compilation_mode == "VLLM_COMPILE"
    assert c.cudagraph_mode == "PIECEWISE"
    assert c.quantization == "ascend"
    assert c.options["enable_chunked_prefill"] is True
    assert c.additional_config == {"ascend_compilation_config": {"enable_npugraph_ex": False}}


def test_python_literal_additional_config_and_malformed_json() -> None:
    c = parse_vllm_argv(
        ["vllm", "serve", "m", "--additional-config", "{'enable_graph_mode': True}"]
    )
    assert c.legacy_keys == ("enable_graph_mode",)
    c = parse_vllm_argv(["vllm", "serve", "m", "--additional-config", "{broken", "-cc", "[1,2]"])
    assert c.additional_config == {} and c.compilation_config == {}
    assert any(p.startswith("additional_config: not valid JSON") for p in c.problems)
    assert any("expected a JSON object" in p for p in c.problems)


def test_not_vllm_and_garbage_argv() -> None:
    assert not is_vllm_argv(["python", "train.py"])
    c = parse_vllm_argv(["python", "train.py", "--lr", "0.1"])
    assert c.engine is None and c.problems
    assert parse_vllm_argv(None).problems == ("argv is not a list",)  # type: ignore[arg-type]
    c = parse_vllm_argv(["vllm", "serve", "\x00\xff", "--", "-", "--block-size"])
    assert c.engine == "vllm"


def test_yaml_config_file_and_argv_override() -> None:
    text = (OWN / "vllm_serve_config.yaml").read_text()
    c = parse_vllm_yaml(text, "vllm_serve_config.yaml")
    assert c.problems == ()
    assert c.model == "/models/DeepSeek-V3-w8a8"
    assert (c.tensor_parallel_size, c.block_size, c.gpu_memory_utilization) == (16, 128, 0.92)
    assert c.max_model_len == 16384 and c.quantization == "ascend"
    assert c.enable_prefix_caching is False
    assert c.legacy_keys == ("torchair_graph_config", "ascend_scheduler_config")
    assert c.cudagraph_mode == "FULL_DECODE_ONLY"
    assert c.item("block_size").lineno == 4
    assert c.item("block_size").source == "vllm_serve_config.yaml"
    argv = ["vllm", "serve", "--config", "/etc/vllm.yaml", "--block-size", "256"]
    c = parse_vllm_argv(argv, config_text=text, config_source="/etc/vllm.yaml")
    assert c.block_size == 256 and c.tensor_parallel_size == 16
    c = parse_vllm_argv(argv)
    assert c.config_file == "/etc/vllm.yaml"


def test_option_json_and_autodetect() -> None:
    c = parse_option_json((OWN / "additional_config.json").read_text(), "additional_config.json")
    assert c.legacy_keys == ("enable_graph_mode",)
    assert c.additional_config["weight_nz_mode"] == 1
    c = parse_option_json('{"cudagraph_mode": 2}', "cc.json", kind="compilation_config")
    assert c.cudagraph_mode == "FULL"
    assert parse_option_json("", "x.json").problems
    assert parse_option_json("{}", "x.json", kind="bogus").problems


@pytest.mark.parametrize(
    "text",
    [
        "key: [unclosed",
        "\x00\x01\x02 binary: \xff",
        "- just\n- a list\n",
        "",
        "a: &a [*a]\n",
        "a: &x [1,2]\nb: &y [*x,*x,*x,*x,*x,*x,*x,*x,*x]\nc: &z [*y,*y,*y,*y,*y,*y,*y,*y,*y]\n"
        "d: &w [*z,*z,*z,*z,*z,*z,*z,*z,*z,*z,*z,*z,*z,*z,*z,*z,*z,*z,*z,*z,*z,*z,*z,*z,*z,*z]\n"
        "e: [*w,*w,*w,*w,*w,*w,*w,*w,*w,*w,*w,*w,*w,*w,*w,*w,*w,*w,*w,*w,*w,*w,*w,*w,*w,*w]\n",
    ],
)
def test_hostile_yaml_never_raises(text: str) -> None:
    c = parse_config_file(text, "bad.yaml")
    assert c.problems


def test_cudagraph_names() -> None:
    assert cudagraph_name(0) == "NONE"
    assert cudagraph_name([2, 1]) == "FULL_AND_PIECEWISE"
    assert cudagraph_name("CUDAGraphMode.piecewise") == "PIECEWISE"
    assert cudagraph_name(None) is None and cudagraph_name(True) is None
