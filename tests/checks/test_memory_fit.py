"""FWK-MEMFIT-001: weights per card + KV for one full sequence + reserve vs utilisation x HBM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakenode import FakeNpu, npu_smi_outputs
from shared_fixtures import fixture
from standins import node_env, standin
from sysroot import write_tree

from ascend_audit.context import Context, Inputs
from ascend_audit.facts.model_shape import index_total_size, parse_model_config
from ascend_audit.host.live import LiveHost
from ascend_audit.model import Status
from ascend_audit.policy import parse_policy
from ascend_audit.registry import load_registry

HEALTHY_LOG = (
    "field/serving_logs/healthy_offline_Qwen3-0.6B_910_PIECEWISE_ACLgraph_captured_enum_"
    "CUDAGraphMode.PIECEWISE_Replaying_aclgraph_vllm-ascend-quickstart-doc.log"
)
QWEN_7B = {  # Qwen2.5-7B-Instruct's config.json (the fields that matter)
    "architectures": ["Qwen2ForCausalLM"],
    "hidden_size": 3584,
    "num_attention_heads": 28,
    "num_hidden_layers": 28,
    "num_key_value_heads": 4,
    "max_position_embeddings": 32768,
    "torch_dtype": "bfloat16",
}
QWEN_72B = {
    "architectures": ["Qwen2ForCausalLM"],
    "hidden_size": 8192,
    "num_attention_heads": 64,
    "num_hidden_layers": 80,
    "num_key_value_heads": 8,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
}
DSV3 = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "hidden_size": 7168,
    "num_attention_heads": 128,
    "num_hidden_layers": 61,
    "num_key_value_heads": 128,
    "kv_lora_rank": 512,
    "qk_rope_head_dim": 64,
    "max_position_embeddings": 163840,
    "torch_dtype": "bfloat16",
}


def model_files(base: str, cfg: dict, total: int | None, shards: tuple[int, ...] = ()) -> dict:
    files = {f"{base}/config.json": json.dumps(cfg, indent=2)}
    if total is not None:
        files[f"{base}/model.safetensors.index.json"] = json.dumps(
            {"metadata": {"total_size": total}, "weight_map": {}}
        )
    for i, size in enumerate(shards):
        files[f"{base}/model-{i + 1:05d}-of-{len(shards):05d}.safetensors"] = "x" * size
    return files


def judge(
    tmp_path: Path,
    serve: str | None = None,
    files: dict | None = None,
    log: Path | str | None = None,
    model_dir: str | None = None,
    policy: str = "",
    hbm_mb: int = 65536,
):  # type: ignore[no-untyped-def]
    root, bindir = tmp_path / "root", tmp_path / "bin"
    root.mkdir(exist_ok=True)
    write_tree(root, {"/etc/hostname": "n\n", **(files or {})})
    npus = [FakeNpu(i, f"0000:{i + 1:02X}:00.0", hbm_total=hbm_mb) for i in range(8)]
    standin(bindir, "npu-smi", npu_smi_outputs(npus))
    configs: tuple[str, ...] = ()
    if serve is not None:
        p = tmp_path / "serve.yaml"
        p.write_text(serve)
        configs = (str(p),)
    logs: tuple[str, ...] = ()
    if log is not None:
        if isinstance(log, str):
            lp = tmp_path / "serve.log"
            lp.write_text(log)
            log = lp
        logs = (str(log),)
    inputs = Inputs(serving_configs=configs, serving_logs=logs, model_dir=model_dir)
    host = LiveHost(str(root), environ=node_env(bindir))
    ctx = Context(host, parse_policy(policy), inputs)
    return load_registry(entry_points=False).get("FWK-MEMFIT-001").func(ctx)


# --- parser -----------------------------------------------------------------------------------


def test_model_shape_gqa_and_mla_kv_bytes():
    s = parse_model_config(json.dumps(QWEN_7B))
    assert (s.layers, s.kv_heads, s.head_dim, s.dtype) == (28, 4, 128, "bfloat16")
    assert s.kv_bytes_per_token(1, 1, 2) == 2 * 28 * 4 * 128 * 2
    assert s.kv_bytes_per_token(8, 1, 2) == 2 * 28 * 1 * 128 * 2  # 4 KV heads over 8: replicated
    assert s.kv_bytes_per_token(1, 2, 2) == 2 * 14 * 4 * 128 * 2
    m = parse_model_config(json.dumps(DSV3))
    assert m.mla and m.kv_bytes_per_token(16, 1, 2) == 61 * (512 + 64) * 2
    nested = parse_model_config(json.dumps({"architectures": ["X"], "text_config": QWEN_7B}))
    assert nested.layers == 28


@pytest.mark.parametrize("text", ["", "{", "[]", '{"num_hidden_layers": "many"}', "\xff" * 10])
def test_model_shape_hostile(text):
    s = parse_model_config(text)
    assert not s.complete and s.problems


def test_index_total_size():
    assert index_total_size('{"metadata": {"total_size": 15231233024}}') == 15231233024
    assert index_total_size('{"metadata": {}}') is None and index_total_size("nope") is None


# --- the check --------------------------------------------------------------------------------


def test_7b_on_one_card_fits_with_the_arithmetic(tmp_path):
    files = model_files("/models/qwen7b", QWEN_7B, 15231233024)
    out = judge(tmp_path, "model: /models/qwen7b\nmax_model_len: 32768\n", files)
    assert out.status is Status.PASS, out.summary
    assert "weights 14.19 GiB (model.safetensors.index.json metadata.total_size)" in out.summary
    assert "/ (tp 1 x pp 1) = 14.19 GiB per card" in out.summary
    assert "KV 1.75 GiB for one 32768-token sequence" in out.summary
    assert (
        "reserve 3.00 GiB = 18.94 GiB vs 0.9 (--gpu-memory-utilization default 0.9)" in out.summary
    )
    assert "x 64.00 GiB (npu-smi info: HBM 65536 MB per chip) = 57.60 GiB" in out.summary
    assert out.metrics["full_sequences"] == 23


def test_72b_on_two_cards_does_not_fit(tmp_path):
    files = model_files("/models/qwen72b", QWEN_72B, 145412407296)
    serve = "model: /models/qwen72b\ntensor_parallel_size: 2\nmax_model_len: 8192\n"
    out = judge(tmp_path, serve, files)
    assert out.status is Status.FAIL
    assert out.summary.startswith("does not fit: weights 135.43 GiB")
    assert "/ (tp 2 x pp 1) = 67.71 GiB per card" in out.summary
    assert out.evidence[0].values["need_bytes"] > out.evidence[0].values["budget_bytes"]


def test_long_context_kv_does_not_fit_under_a_low_utilisation(tmp_path):
    files = model_files("/models/qwen72b", QWEN_72B, 145412407296)
    serve = (
        "model: /models/qwen72b\ntensor_parallel_size: 4\nmax_model_len: 131072\n"
        "gpu_memory_utilization: 0.7\n"
    )
    out = judge(tmp_path, serve, files)
    assert out.status is Status.FAIL
    assert "KV 10.00 GiB for one 131072-token sequence (--max-model-len" in out.summary
    serve = serve.replace("0.7", "0.9")
    assert judge(tmp_path, serve, files).status is Status.PASS


def test_shard_sizes_and_model_dir_input_and_mla(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(QWEN_7B))
    (model / "model-00001-of-00002.safetensors").write_bytes(b"x" * 1000)
    (model / "model-00002-of-00002.safetensors").write_bytes(b"x" * 24)
    out = judge(tmp_path, "model: Qwen/Qwen2.5-7B\n", model_dir=str(model))
    assert out.status is Status.PASS, out.summary
    assert "(sum of 2 *.safetensors file sizes)" in out.summary
    files = model_files("/models/ds", DSV3, 688586727753)
    serve = "model: /models/ds\ntensor_parallel_size: 8\nmax_model_len: 32768\n"
    out = judge(tmp_path, serve, files)
    assert out.status is Status.FAIL and "MLA kv_lora_rank 512 + rope 64" in out.summary


def test_mindie_world_size_and_memory_fraction(tmp_path):
    files = model_files("/models/qwen72b", QWEN_72B, 145412407296)
    doc = {
        "BackendConfig": {
            "npuDeviceIds": [[0, 1]],
            "ModelDeployConfig": {
                "maxSeqLen": 4096,
                "maxInputTokenLen": 2048,
                "ModelConfig": [{"modelWeightPath": "/models/qwen72b", "worldSize": 2}],
            },
            "ScheduleConfig": {"maxPrefillTokens": 8192},
        }
    }
    out = judge(tmp_path, json.dumps(doc, indent=2), files)
    assert out.status is Status.FAIL
    assert "0.8 (NPU_MEMORY_FRACTION default 0.8)" in out.summary and "tp 2" in out.summary


def test_log_available_kv_is_the_measured_answer(tmp_path):
    files = model_files("/models/qwen72b", QWEN_72B, 145412407296)
    serve = "model: /models/qwen72b\ntensor_parallel_size: 4\nmax_model_len: 131072\n"
    line = (
        "(EngineCore pid=1) INFO 05-27 11:41:02 [worker.py:394] "
        "Available KV cache memory: 4.10 GiB\n"
    )
    out = judge(tmp_path, serve, files, log=line)
    assert out.status is Status.FAIL
    assert "measured: Available KV cache memory 4.10 GiB" in out.summary
    assert "vs 10.00 GiB for one 131072-token sequence" in out.summary
    assert out.evidence[0].kind == "log" and out.evidence[0].source.endswith("serve.log:1")
    neg = line.replace("4.10", "-1.25")
    out = judge(tmp_path, serve, files, log=neg)
    assert out.status is Status.FAIL and "-1.25 GiB" in out.summary


def test_real_healthy_log_measured_kv_passes(tmp_path):
    log = fixture(HEALTHY_LOG)
    out = judge(tmp_path, log=log)
    assert out.status is Status.PASS, out.summary
    assert "measured: 54.98 GiB for the KV cache" in out.summary


def test_skips_without_inputs_model_or_hbm(tmp_path):
    assert judge(tmp_path).status is Status.SKIP
    out = judge(tmp_path, "model: /models/absent\n")
    assert out.status is Status.SKIP and "unreadable" in out.summary
    files = model_files("/models/q", {"architectures": ["X"]}, 100)
    out = judge(tmp_path, "model: /models/q\n", files)
    assert out.status is Status.SKIP and "KV cache size unknown" in out.summary
    files = model_files("/models/q7", QWEN_7B, None)
    out = judge(tmp_path, "model: /models/q7\n", files)
    assert out.status is Status.SKIP and "no safetensors index or weight files" in out.summary
