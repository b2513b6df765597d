# ruff: noqa: E501  (log lines and table rows are data, kept whole)
"""Build the bundled example snapshots: fake nodes recorded with `ascend-audit collect`.

Each example is a fake Atlas node (a sysroot tree from fakes/sysroot.py, stand-in npu-smi
answers from fakes/fakenode.py) plus the traces, logs, configs and benchmark results an ops
engineer would hand over, all written here in the real formats. `collect` records what the
checks ask for into examples/NAME/, which `ascend-audit run --example NAME` replays. This
builder is a development tool: it does not ship in the wheel, and it needs no test code.

    python tools/build_examples.py            # rebuild every example
    python tools/build_examples.py NAME ...   # rebuild some
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HERE = REPO / "examples"  # where the snapshots go
sys.path[:0] = [str(REPO / "fakes"), str(REPO / "benchmarks")]

from fakenode import FakeNpu, npu_smi_outputs, npu_smi_topo  # noqa: E402
from gen_kernel_details import generate  # noqa: E402
from standins import standin  # noqa: E402
from sysroot import NODE_CPUS, NPU_BDFS, healthy_910b_node  # noqa: E402

DRIVER, FIRMWARE, CANN = "25.5.1", "7.8.0.5.216", "9.1.0"
OLD_DRIVER, OLD_FIRMWARE = "24.1.rc1", "7.1.0.11.220"

# (name stem, type, core, weight, mean us, input shapes, input dtype): a Qwen-style decode step
HEALTHY_OPS = (
    (
        "aclnnMatmul_MatMulV3Common_MatMulV3",
        "MatMulV3",
        "AI_CORE",
        14,
        180.0,
        "4,5120;5120,640",
        "BF16",
    ),
    ("aclnnAdd_AddAiCore_Add", "Add", "AI_VECTOR_CORE", 10, 9.0, "4,5120;4,5120", "BF16"),
    (
        "aclnnAddRmsNorm_AddRmsNorm_AddRmsNorm",
        "AddRmsNorm",
        "AI_VECTOR_CORE",
        6,
        18.0,
        "4,5120;4,5120;5120",
        "BF16",
    ),
    ("aclnnRmsNorm_RmsNorm_RmsNorm", "RmsNorm", "AI_VECTOR_CORE", 2, 15.0, "4,5120;5120", "BF16"),
    (
        "aclnnFusedInferAttentionScore_FusedInferAttentionScore_FusedInferAttentionScore",
        "FusedInferAttentionScore",
        "MIX_AIC",
        6,
        260.0,
        "4,40,128;1024,8,128;1024,8,128",
        "BF16",
    ),
    ("aclnnSwiGlu_SwiGlu_SwiGlu", "SwiGlu", "AI_VECTOR_CORE", 5, 30.0, "4,27648", "BF16"),
    (
        "aclnnRotaryPositionEmbedding_RotaryPositionEmbedding",
        "RotaryPositionEmbedding",
        "AI_VECTOR_CORE",
        4,
        11.0,
        "4,40,128",
        "BF16",
    ),
    ("hcom_allReduce_", "hcom_allReduce_", "HCCL", 2, 260.0, "", ""),
)
FALLBACK_OPS = (
    *HEALTHY_OPS,
    ("aclnnArgsort_ArgSortAiCpu_ArgSort", "ArgSort", "AI_CPU", 1.2, 900.0, "4,152064", "INT64"),
    ("aclnnCast_CastAiCpu_Cast", "Cast", "AI_CPU", 0.8, 420.0, "4,152064", "DOUBLE"),
    ("aclnnNonzero_NonZeroAiCpu_NonZero", "NonZero", "AI_CPU", 0.3, 350.0, "4,152064", "BOOL"),
)

POLICY = """\
# Policy of the example fleet: an Atlas 800T A2 (8 x 910B3) serving Qwen2.5-32B with vllm-ascend.
[audit]
required_layers = ["driver", "operator", "framework"]

[driver]
expected_npu_count = 8
weights_path = "/models/Qwen2.5-32B-Instruct"

[operator]
aicpu_share_fail = 0.05

[framework]
require_graph_mode = true
max_load_seconds = 180
max_model_len = 32768

[targets]
ttft_p99_ms = 1500
tpot_p99_ms = 60
min_output_throughput = 900
"""


def serving_log(eager: bool = False, fallback: bool = False) -> str:
    """A vllm-ascend V1 start-up and serving log of the example's Qwen2.5-32B."""
    cc = (
        '{"level":0,"cudagraph_mode":0,"use_cudagraph":false}'
        if eager
        else (
            '{"level":3,"backend":"","custom_ops":["all"],"splitting_ops":["vllm.unified_attention"],'
            '"use_inductor":false,"cudagraph_mode":[2,1],"use_cudagraph":true,'
            '"cudagraph_capture_sizes":[256,128,64,32,16,8,4,2,1],"max_capture_size":256}'
        )
    )
    model = "/models/Qwen2.5-32B-Instruct"
    lines = [
        "INFO 11-27 09:02:11 [__init__.py:216] Automatically detected platform npu.",
        "INFO 11-27 09:02:13 [__init__.py:247] Platform plugin ascend is activated",
        "INFO 11-27 09:02:14 [api_server.py:1896] vLLM API server version 0.11.0",
        f"INFO 11-27 09:02:14 [utils.py:233] non-default args: {{'model_tag': '{model}', "
        f"'model': '{model}', 'max_model_len': 32768, 'block_size': 128, "
        f"'gpu_memory_utilization': 0.9, 'tensor_parallel_size': 4"
        + (", 'enforce_eager': True" if eager else "")
        + "}",
        "INFO 11-27 09:02:20 [platform.py:180] Set PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
    ]
    if eager:
        lines.append(
            "INFO 11-27 09:02:20 [platform.py:330] Compilation disabled, using eager mode by default"
        )
    lines += [
        f"INFO 11-27 09:02:24 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: "
        f"model='{model}', speculative_config=None, tokenizer='{model}', skip_tokenizer_init=False, "
        "tokenizer_mode=auto, revision=None, trust_remote_code=False, dtype=torch.bfloat16, "
        "max_seq_len=32768, download_dir=None, load_format=auto, tensor_parallel_size=4, "
        "pipeline_parallel_size=1, data_parallel_size=1, quantization=None, "
        f"enforce_eager={eager}, kv_cache_dtype=auto, device_config=npu, seed=0, "
        f"served_model_name={model}, enable_prefix_caching=True, chunked_prefill_enabled=True, "
        f"compilation_config={cc}",
        f"(EngineCore_DP0 pid=4711) INFO 11-27 09:02:41 [model_runner_v1.py:2577] Starting to load model {model}...",
        "Loading safetensors checkpoint shards:   0% Completed | 0/17 [00:00<?, ?it/s]",
        "Loading safetensors checkpoint shards: 100% Completed | 17/17 [00:26<00:00,  1.52s/it]",
        "(EngineCore_DP0 pid=4711) INFO 11-27 09:03:09 [default_loader.py:267] Loading weights took 27.84 seconds",
        "(EngineCore_DP0 pid=4711) INFO 11-27 09:03:10 [model_runner_v1.py:2600] Loading model weights took 15.4218 GB",
        "(EngineCore_DP0 pid=4711) INFO 11-27 09:03:31 [worker_v1.py:240] Available KV cache memory: 31.07 GiB",
        "(EngineCore_DP0 pid=4711) INFO 11-27 09:03:31 [kv_cache_utils.py:1087] GPU KV cache size: 508,928 tokens",
        "(EngineCore_DP0 pid=4711) INFO 11-27 09:03:31 [kv_cache_utils.py:1091] Maximum concurrency for 32,768 tokens per request: 15.53x",
    ]
    if not eager:
        lines += [
            "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 9/9 [00:09<00:00,  1.02s/it]",
            "Capturing CUDA graphs (decode, FULL): 100%|██████████| 9/9 [00:06<00:00,  1.41it/s]",
            "(EngineCore_DP0 pid=4711) INFO 11-27 09:03:48 [model_runner_v1.py:3170] Graph capturing finished in 16 secs, took 0.52 GiB",
        ]
    lines += [
        "(EngineCore_DP0 pid=4711) INFO 11-27 09:03:48 [core.py:210] init engine (profile, create kv cache, warmup model) took 38.20 seconds",
        "INFO 11-27 09:03:52 [api_server.py:1971] Starting vLLM API server 0 on http://0.0.0.0:8000",
    ]
    if fallback:
        lines.append(
            "(EngineCore_DP0 pid=4711) [W1127 09:04:02.118342374 compiler_depend.ts:57] Warning: "
            "CAUTION: The operator 'aten::isin.Tensor_Tensor_out' is not currently supported on "
            "the NPU backend and will fall back to run on the CPU. This may have performance "
            "implications. (function npu_cpu_fallback)"
        )
    if not eager:
        lines.append(
            "(EngineCore_DP0 pid=4711) INFO 11-27 09:04:02 [acl_graph.py:214] Replaying aclgraph"
        )
    for i, (prompt, gen, running, usage) in enumerate(
        ((1804.2, 612.7, 24, 6.1), (2210.9, 1187.3, 48, 12.4), (140.0, 966.5, 31, 9.8))
    ):
        lines.append(
            f"INFO 11-27 09:04:{12 + 10 * i} [loggers.py:127] Engine 000: Avg prompt throughput: "
            f"{prompt} tokens/s, Avg generation throughput: {gen} tokens/s, Running: {running} reqs, "
            f"Waiting: 0 reqs, GPU KV cache usage: {usage}%, Prefix cache hit rate: 41.2%"
        )
    return "\n".join(lines) + "\n"


SERVING_CONFIG = """\
# vllm serve --config serve.yaml
model: /models/Qwen2.5-32B-Instruct
served-model-name: qwen2.5-32b
tensor-parallel-size: 4
max-model-len: 32768
block-size: 128
gpu-memory-utilization: 0.9
enable-prefix-caching: true
port: 8000
"""


def bench_result(ttft_p99: float = 1180.4, tpot_p99: float = 48.2) -> str:
    """`vllm bench serve --save-result` output for 1000 prompts."""
    return json.dumps(
        {
            "date": "20261127-091530",
            "backend": "vllm",
            "model_id": "/models/Qwen2.5-32B-Instruct",
            "tokenizer_id": "/models/Qwen2.5-32B-Instruct",
            "num_prompts": 1000,
            "request_rate": "inf",
            "max_concurrency": 64,
            "duration": 212.6,
            "completed": 1000,
            "failed": 0,
            "total_input_tokens": 1024000,
            "total_output_tokens": 256000,
            "request_throughput": 4.70,
            "request_goodput": None,
            "output_throughput": 1204.1,
            "total_token_throughput": 6020.7,
            "mean_ttft_ms": 402.8,
            "median_ttft_ms": 311.5,
            "p99_ttft_ms": ttft_p99,
            "mean_tpot_ms": 41.7,
            "median_tpot_ms": 40.9,
            "p99_tpot_ms": tpot_p99,
            "mean_itl_ms": 41.5,
            "median_itl_ms": 38.8,
            "p99_itl_ms": 95.3,
        },
        indent=2,
    )


def _driver_info(version: str, inner: str, fw_range: str) -> str:
    return (
        f"Version={version}\nascendhal_version=7.35.23\naicpu_version=1.0\ntdt_version=1.0\n"
        f"log_version=1.0\nprof_version=2.0\ndvppkernels_version=1.1\ntsfw_version=1.0\n"
        f"Innerversion={inner}\n"
        "compatible_version=[V100R001C21],[V100R001C23],[V100R001C25],[V100R001C26]\n"
        f"compatible_version_fw={fw_range}\npackage_version={version}\n"
    )


def _firmware_info(version: str, package: str, drv_ranges: str) -> str:
    return (
        f"Version={version}\nfirmware_version=1.0\npackage_version={package}\n"
        f"compatible_version_drv={drv_ranges}\n"
    )


def _toolkit_info(version: str, families: str) -> str:
    path = f"/usr/local/Ascend/ascend-toolkit/{version}/aarch64-linux"
    return (
        "package_name=Ascend-cann-toolkit\n"
        f"version={version}\n"
        f"innerversion=V100R001C26SPC001B210\n"
        f"compatible_version={families}\n"
        "arch=aarch64\n"
        "os=linux\n"
        f"path={path}\n"
    )


def write_versions(root: Path, mismatch: bool) -> None:
    """Driver, firmware and CANN files: a matched HDK 25.5.1 set, or the classic mismatch."""
    asc = root / "usr/local/Ascend"
    if mismatch:
        driver = _driver_info(OLD_DRIVER, "V100R001C19SPC002B220", "[7.0.0,7.2.99]")
        firmware = _firmware_info(OLD_FIRMWARE, "23.0.3", "[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.]")
    else:
        driver = _driver_info(DRIVER, "V100R001C25SPC001B231", "[7.0.0,7.8.99]")
        firmware = _firmware_info(FIRMWARE, DRIVER, "[24.1,24.1.],[25.0,25.0.],[25.5,25.5.]")
    (asc / "driver/version.info").write_text(driver)
    (asc / "firmware/version.info").write_text(firmware)
    toolkit = asc / "ascend-toolkit"
    shutil.rmtree(toolkit, ignore_errors=True)
    target = toolkit / CANN / "aarch64-linux"
    target.mkdir(parents=True)
    (target / "ascend_toolkit_install.info").write_text(
        _toolkit_info(CANN, "[V100R001C19],[V100R001C21],[V100R001C23],[V100R001C25]")
    )
    (toolkit / "latest").symlink_to(CANN)


def write_model(root: Path, model: str = "Qwen2.5-32B-Instruct", shards: int = 17) -> None:
    """A miniature of the served model: real safetensors headers and index, tiny tensors."""
    import struct

    directory = root / "models" / model
    directory.mkdir(parents=True, exist_ok=True)
    weight_map: dict[str, str] = {}
    for i in range(1, shards + 1):
        name = f"model-{i:05d}-of-{shards:05d}.safetensors"
        tensor = f"model.layers.{i - 1}.mlp.down_proj.weight"
        header = json.dumps(
            {
                "__metadata__": {"format": "pt"},
                tensor: {"dtype": "BF16", "shape": [4, 4], "data_offsets": [0, 32]},
            }
        ).encode()
        (directory / name).write_bytes(struct.pack("<Q", len(header)) + header + bytes(32))
        weight_map[tensor] = name
    (directory / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": 32 * shards}, "weight_map": weight_map}, indent=2)
    )
    (directory / "config.json").write_text(
        json.dumps(
            {
                "architectures": ["Qwen2ForCausalLM"],
                "torch_dtype": "bfloat16",
                # Qwen2.5-32B-Instruct's shape: FWK-MEMFIT-001 sizes one sequence's KV from it
                "hidden_size": 5120,
                "num_hidden_layers": 64,
                "num_attention_heads": 40,
                "num_key_value_heads": 8,
                "max_position_embeddings": 32768,
            },
            indent=2,
        )
    )


def write_host_tuning(root: Path) -> None:
    """A tuned Kunpeng host: performance governor, THP always, no NUMA balancing, no swap."""
    files = {
        "sys/class/dmi/id/sys_vendor": "Huawei\n",
        "sys/class/dmi/id/product_name": "Atlas 800T A2\n",
        "sys/kernel/mm/transparent_hugepage/enabled": "[always] madvise never\n",
        "proc/sys/kernel/numa_balancing": "0\n",
        "proc/sys/vm/overcommit_memory": "0\n",
        "proc/swaps": "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n",
        "proc/meminfo": "MemTotal:       1584312064 kB\nMemFree:        1402117120 kB\n"
        "SwapTotal:             0 kB\nSwapFree:              0 kB\n",
        "proc/cpuinfo": "".join(
            f"processor\t: {i}\nBogoMIPS\t: 200.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 "
            "sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma dcpop asimddp asimdfhm\n"
            "CPU implementer\t: 0x48\nCPU part\t: 0xd01\n\n"
            for i in range(4)
        ),
        "etc/security/limits.conf": "# /etc/security/limits.conf\n"
        "HwHiAiUser soft nofile 1048576\nHwHiAiUser hard nofile 1048576\n"
        "*          soft nofile 1048576\n*          hard nofile 1048576\n"
        "*          soft memlock unlimited\n*          hard memlock unlimited\n"
        "root       soft nofile 1048576\nroot       hard nofile 1048576\n",
    }
    for cpu in range(4):
        files[f"sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"] = "performance\n"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def write_serving_host(root: Path, shm_size: str) -> None:
    """/dev/shm in the mount table and the listening sockets (sshd, node_exporter) of the node."""
    for rel, line in (
        (
            "proc/self/mountinfo",
            f"31 24 0:26 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs shm "
            f"rw,size={shm_size},inode64",
        ),
        ("proc/mounts", f"shm /dev/shm tmpfs rw,nosuid,nodev,size={shm_size},inode64 0 0"),
    ):
        with (root / rel).open("a") as fh:
            fh.write(line + "\n")
    head = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    rows = "".join(
        f"   {i}: 00000000:{port:04X} 00000000:0000 0A 00000000:00000000 00:00000000 00000000"
        f"     0        0 {inode} 1 0000000000000000 100 0 0 10 0\n"
        for i, (port, inode) in enumerate(((22, 21310), (9100, 30122)))
    )
    (root / "proc/net").mkdir(parents=True, exist_ok=True)
    (root / "proc/net/tcp").write_text(head + rows)
    (root / "proc/net/tcp6").write_text(head)


def write_identity(root: Path, hostname: str) -> None:
    (root / "etc").mkdir(exist_ok=True)
    (root / "etc/hostname").write_text(hostname + "\n")
    (root / "etc/os-release").write_text(
        'NAME="openEuler"\nVERSION="22.03 (LTS-SP4)"\nPRETTY_NAME="openEuler 22.03 (LTS-SP4)"\n'
    )
    (root / "proc/sys/kernel").mkdir(parents=True, exist_ok=True)
    (root / "proc/sys/kernel/osrelease").write_text("5.10.0-216.0.0.115.oe2203sp4.aarch64\n")


@dataclass
class Example:
    """One bundled node: how to make it, and what an audit of it must say."""

    name: str
    description: str
    hostname: str
    expect: dict[str, str]
    mismatch: bool = False
    fallback: bool = False
    eager: bool = False
    extra: Callable[[Path], None] | None = None
    npus: list[FakeNpu] = field(default_factory=list)
    shm_size: str = "16777216k"  # 16 GiB; Docker's default without --shm-size is 65536k


EXAMPLES = [
    Example(
        "atlas-800t-a2-ready",
        "8 x 910B3, HDK 25.5.1 / CANN 9.1.0, vllm-ascend with ACL graphs: every layer READY",
        "a2-node-01",
        {"driver": "READY", "operator": "READY", "framework": "READY"},
    ),
    Example(
        "firmware-mismatch",
        "driver 24.1.rc1 with firmware 7.1.0.11.220, which rejects it: driver NOT_READY, rest BLOCKED",
        "a2-node-07",
        {"driver": "NOT_READY", "operator": "BLOCKED", "framework": "BLOCKED"},
        mismatch=True,
    ),
    Example(
        "aicpu-fallback",
        "ArgSort/Cast/NonZero on the AI CPU and aten::isin on the host CPU: operator NOT_READY",
        "a2-node-12",
        {"driver": "READY", "operator": "NOT_READY", "framework": "BLOCKED"},
        fallback=True,
    ),
    Example(
        "eager-mode",
        "vllm-ascend started with --enforce-eager (graph mode off): framework NOT_READY",
        "a2-node-15",
        {"driver": "READY", "operator": "READY", "framework": "NOT_READY"},
        eager=True,
    ),
    Example(
        "shm-too-small",
        "the healthy node in a container started without --shm-size (64 MiB /dev/shm): "
        "driver NOT_READY on DRV-SHM-001, rest BLOCKED",
        "a2-node-21",
        {"driver": "NOT_READY", "operator": "BLOCKED", "framework": "BLOCKED"},
        shm_size="65536k",
    ),
]


def build(example: Example, out: Path, report_json: Path | None = None) -> dict[str, str]:
    """Fabricate the node and its inputs in a temp dir, `collect` it into out, return verdicts."""
    with tempfile.TemporaryDirectory(prefix="ascend-audit-example-") as tmp:
        work = Path(tmp)
        root, bindir = work / "node", work / "bin"
        healthy_910b_node(root)
        write_versions(root, example.mismatch)
        write_identity(root, example.hostname)
        write_model(root)
        write_host_tuning(root)
        write_serving_host(root, example.shm_size)
        software = OLD_DRIVER if example.mismatch else DRIVER
        firmware = OLD_FIRMWARE if example.mismatch else FIRMWARE
        npus = [
            FakeNpu(i, bdf.upper(), software=software, firmware=firmware)
            for i, bdf in enumerate(NPU_BDFS)
        ]
        answers = npu_smi_outputs(npus, software)
        answers["info -t topo"] = npu_smi_topo(
            npus, tuple(NODE_CPUS[0 if i < 4 else 1] for i in range(8))
        )
        standin(bindir, "npu-smi", answers)
        inputs = work / "inputs"
        ops = FALLBACK_OPS if example.fallback else HEALTHY_OPS
        generate(2400, "2025", inputs / "prof/rank0_ascend_pt", seed=7, ops=ops)
        (inputs / "logs").mkdir(parents=True)
        (inputs / "logs/vllm-serve.log").write_text(
            serving_log(eager=example.eager, fallback=example.fallback)
        )
        (inputs / "serve.yaml").write_text(
            SERVING_CONFIG + ("enforce-eager: true\n" if example.eager else "")
        )
        (inputs / "bench-result.json").write_text(bench_result())
        (inputs / "policy.toml").write_text(POLICY)
        if out.exists():
            shutil.rmtree(out)
        env = {
            "PATH": f"{bindir}:/usr/bin:/bin",
            "HOME": str(work),
            "LANG": "C.UTF-8",
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        }
        cmd = [
            sys.executable, "-m", "ascend_audit", "collect", "-q",
            "--sysroot", str(root),
            "--policy", "policy.toml",
            "--trace", "prof/rank0_ascend_pt",
            "--serving-log", "logs/vllm-serve.log",
            "--serving-config", "serve.yaml",
            "--bench-result", "bench-result.json",
            "-o", str(out),
            *(["--json", str(report_json)] if report_json else []),
        ]  # fmt: skip
        subprocess.run(cmd, cwd=inputs, env=env, check=False, capture_output=True, text=True)
        manifest_path = out / "manifest.json"
        manifest = json.loads(manifest_path.read_text())
        manifest["description"] = example.description
        # The node as its operators know it, not the build's temp dir.
        manifest["sysroot"] = manifest["identity"]["sysroot"] = "/"
        manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return verdicts_of(out)


def verdicts_of(bundle: Path) -> dict[str, str]:
    """Layer verdicts of a replayed bundle."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.json"
        subprocess.run(
            [sys.executable, "-m", "ascend_audit", "run", "--snapshot", str(bundle), "-q",
             "--json", str(path)],
            capture_output=True, check=False,
        )  # fmt: skip
        report = json.loads(path.read_text())
    return {layer["name"]: layer["verdict"] for layer in report["layers"]}


def main(names: list[str]) -> int:
    chosen = [e for e in EXAMPLES if not names or e.name in names]
    bad = 0
    for example in chosen:
        got = build(example, HERE / example.name)
        ok = got == example.expect
        bad += not ok
        print(f"{example.name:<22} {'ok' if ok else 'UNEXPECTED'}  {got}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
