"""Tests for serving configuration parsing: vLLM argv, YAML, option JSON, MindIE config.json."""

from __future__ import annotations

import json

import pytest
from shared_fixtures import DATA, fixture, fixture_cases, read_fixture

from ascend_audit.facts.serving_config.argv import is_vllm_argv, parse_vllm_argv
from ascend_audit.facts.serving_config.config_file import parse_config_file
from ascend_audit.facts.serving_config.mindie import parse_mindie_config
from ascend_audit.facts.serving_config.option_json import parse_option_json
from ascend_audit.facts.serving_config.values import cudagraph_name
from ascend_audit.facts.serving_config.vllm_yaml import parse_vllm_yaml

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


@pytest.mark.parametrize("path", fixture_cases("framework", "*.json"))
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


# --- launch scripts and logged argument dicts (issue 14) -------------------------------------

LAUNCH = "field/launch_and_args/"


def test_launch_script_with_continuations_json_and_a_comment_after_the_backslash() -> None:
    from ascend_audit.facts.serving_config.launch_script import (
        is_launch_script,
        parse_launch_script,
    )

    name = (
        LAUNCH + "launch_310P_Qwen3.5-27B_TP4_additional-config_ascend_compilation_config"
        "_FULL_DECODE_ONLY_mtp_vllm-ascend-PR10309.partial.sh"
    )
    text = fixture(name).read_text()
    assert is_launch_script(text)
    c = parse_launch_script(text, "run.sh")
    assert (c.engine, c.model, c.tensor_parallel_size) == ("vllm", "/model", 4)
    assert (c.max_num_seqs, c.max_model_len, c.gpu_memory_utilization) == (16, 16384, 0.8)
    assert c.cudagraph_mode == "FULL_DECODE_ONLY" and c.enable_prefix_caching is False
    assert c.additional_config["ascend_compilation_config"]["enable_npugraph_ex"] is True
    assert c.speculative_config == {"method": "qwen3_5_mtp", "num_speculative_tokens": 1}
    assert any("comment after the line-continuation" in p for p in c.problems)
    assert c.item("max_num_seqs").lineno == 6  # evidence points at the script line
    assert c.item("speculative_config").lineno == 20


def test_launch_script_of_four_nodes_keeps_shell_variables() -> None:
    from ascend_audit.facts.serving_config.launch_script import parse_launch_script

    name = (
        LAUNCH + "launch_4node_DSV3_DP8_TP4_EP_headless_additional-config_torchair"
        "_ascend_scheduler_vllm-ascend-3534.sh"
    )
    c = parse_launch_script(fixture(name).read_text(), "nodes.sh")
    assert c.options["data_parallel_address"] == "${HCCL_IF_IP}"  # left as it is
    assert (c.data_parallel_size, c.data_parallel_size_local, c.tensor_parallel_size) == (8, 2, 4)
    assert c.expert_parallel is True and c.max_num_seqs == 8
    assert c.legacy_keys == ("torchair_graph_config", "ascend_scheduler_config")
    assert any("4 vllm commands" in p for p in c.problems)


def test_api_server_module_command_exports_and_redirections() -> None:
    from ascend_audit.facts.serving_config.launch_script import parse_launch_script

    text = (
        "#!/bin/bash\n"
        "# start the server\n"
        "export ASCEND_RT_VISIBLE_DEVICES=0,1\n"
        "export TASK_QUEUE_ENABLE=2\n"
        "MODEL=/models/qwen\n"
        "nohup python -m vllm.entrypoints.openai.api_server --model $MODEL \\\n"
        "    --tensor-parallel-size 2 --block-size 64 \\\n"
        "    --max-num-seqs 32 > server.log 2>&1 &\n"
    )
    c = parse_launch_script(text, "start.sh")
    assert c.engine == "vllm" and c.model == "$MODEL"
    assert (c.tensor_parallel_size, c.block_size, c.max_num_seqs) == (2, 64, 32)
    assert c.env == {"ASCEND_RT_VISIBLE_DEVICES": "0,1", "TASK_QUEUE_ENABLE": "2"}
    assert c.item("block_size").lineno == 7


def test_non_default_args_dict_is_read_whole() -> None:
    from ascend_audit.facts.serving_config.args_dict import parse_vllm_args_dict

    name = (
        LAUNCH + "non-default_args_and_engine_config_vllm0.11.0rc3_utils233_cudagraph_mode"
        "_int0_torchair_DSV3_vllm-ascend-3534.partial.log"
    )
    line = fixture(name).read_text().splitlines()[1]
    c = parse_vllm_args_dict(line, "vllm.log", 2)
    assert c.additional_config == {
        "ascend_scheduler_config": {"enabled": True},
        "torchair_graph_config": {"enabled": True},
    }
    assert c.legacy_keys == ("torchair_graph_config", "ascend_scheduler_config")
    assert (c.tensor_parallel_size, c.data_parallel_size, c.max_num_seqs) == (4, 8, 8)
    assert c.item("gpu_memory_utilization").lineno == 2
    bad = parse_vllm_args_dict("non-default args: {'a': ", "x.log", 1)
    assert bad.problems and not bad.items


@pytest.mark.parametrize("text", ["", "   \n", "echo hello\nls -l\n", "vllm\n"])
def test_launch_script_without_a_vllm_command(text: str) -> None:
    from ascend_audit.facts.serving_config.launch_script import parse_launch_script

    c = parse_launch_script(text, "x.sh")
    assert not c.items and c.problems and c.problems[0].startswith("x.sh")
