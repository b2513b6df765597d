"""Serving configs from issue threads (tests/data/serving_configs/README.md): launch scripts and
pasted command lines read whole; MindIE's config.json has one reader behind both fact types."""

from __future__ import annotations

import json

import pytest
from shared_fixtures import DATA, data_file, read_fixture
from standins import run_inputs

from ascend_audit.facts.mindie_config import parse_mindie_json
from ascend_audit.facts.serving_config.launch_script import is_launch_script, parse_launch_script
from ascend_audit.facts.serving_config.mindie import parse_mindie_config
from ascend_audit.model import Status

CONFIGS = DATA / "serving_configs"


def _cfg(prefix: str):
    return data_file(CONFIGS, prefix)


def _audit(tmp_path, path):
    return run_inputs(tmp_path, ["framework"], serving_configs=[path])


def test_two_node_torchair_script_with_masked_addresses() -> None:
    c = parse_launch_script(_cfg("vllm-ascend-3927").read_text(), "node0.sh")
    assert (c.model, c.tensor_parallel_size, c.data_parallel_size) == (
        "Yanguan/DeepSeek-V3.2-Exp-bf16",
        16,
        2,
    )
    assert c.data_parallel_size_local == 1 and c.expert_parallel is True
    assert c.additional_config == {
        "torchair_graph_config": {"enabled": True, "graph_batch_sizes": [16]}
    }
    assert c.enable_prefix_caching is False and c.max_model_len == 17450


def test_api_server_module_in_backticks_with_underscore_flags_and_redirect(tmp_path) -> None:
    path = _cfg("vllm-ascend-PR2179")
    c = parse_launch_script(path.read_text(), "mtp.sh")
    assert c.model == "/home/data/DeepSeek-R1_w8a8/" and c.quantization == "ascend"
    assert c.gpu_memory_utilization == 0.9 and c.data_parallel_size == 1
    assert c.speculative_config == {"num_speculative_tokens": 2, "method": "deepseek_mtp"}
    assert set(c.additional_config) == {"ascend_scheduler_config", "torchair_graph_config"}
    assert c.env.get("ASCEND_LAUNCH_BLOCKING") == "1"
    r = _audit(tmp_path, path).result("FWK-GRAPH-001")
    assert r.status is Status.FAIL and "ASCEND_LAUNCH_BLOCKING=1" in r.summary


def test_a_command_pasted_after_prose_on_its_line(tmp_path) -> None:
    path = _cfg("vllm-ascend-707")
    text = path.read_text()
    assert is_launch_script(text)
    c = parse_launch_script(text, "paste.txt")
    assert (c.model, c.tensor_parallel_size, c.max_model_len) == (
        "/data/DeepSeek-R1-Distill-Qwen-32B",
        2,
        4096,
    )
    assert c.served_model_name == "QwQ-32B" and not c.problems
    r = _audit(tmp_path, path).result("FWK-KV-001")
    assert r.status is not Status.ERROR, r.summary


@pytest.mark.parametrize("text", ["myvllm serve x", "see the vllm serving guide", "vllm-serve x"])
def test_words_that_merely_contain_vllm_serve_are_no_command(text) -> None:
    assert not is_launch_script(text)


def test_mindie_serving_config_stands_on_the_one_json_reader() -> None:
    text = read_fixture("framework/mindie_service_default_config.json")
    raw = parse_mindie_json(text, "config.json")
    c = parse_mindie_config(text, "config.json")
    for item in c.items:
        key = item.key.rsplit(".", 1)[-1]
        v = raw.values[key]
        assert (item.value, item.lineno, item.text) == (v.value, v.lineno, v.text)
    assert c.npu_device_ids == raw.device_groups and c.world_size == raw.num("worldSize")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty config"),
        ("[1, 2]", "config.json is not a JSON object"),
        ("{}", "missing section BackendConfig"),
        (
            '{"BackendConfig": {"ModelDeployConfig": {"ModelConfig": []}}}',
            "missing section ScheduleConfig",
        ),
        (
            '{"BackendConfig": {"ModelDeployConfig": {}}}',
            "ModelDeployConfig.ModelConfig is missing or empty",
        ),
        ('{"BackendConfig": {"npuDeviceIds": 3}}', "npuDeviceIds is not a list of lists"),
    ],
)
def test_mindie_structure_problems(text, problem) -> None:
    assert problem in parse_mindie_config(text, "c.json").problems
    assert parse_mindie_json(text, "c.json").failure in (None, "empty", "not_object", "no_backend")


def test_two_model_instances_are_named() -> None:
    data = json.loads(read_fixture("framework/mindie_service_default_config.json"))
    models = data["BackendConfig"]["ModelDeployConfig"]["ModelConfig"]
    models.append(dict(models[0]))
    c = parse_mindie_config(json.dumps(data, indent=4), "c.json")
    assert "2 ModelConfig entries; the first is reported" in c.problems
