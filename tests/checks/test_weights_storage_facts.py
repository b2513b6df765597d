"""FWK-WGT-001 on facts built directly (no node): weights on network storage and pt shards."""

from __future__ import annotations

import pytest
from ascend_audit.checks.framework.weights import weight_placement
from checkfacts import FactsContext, MissingFact, facts_context, judge

from ascend_audit.context import Inputs
from ascend_audit.facts.framework_inputs import (
    MODEL_DIRS,
    PROBE,
    SERVING_CONFIGS,
    SERVING_LOGS,
    ConfigInput,
    ModelDir,
    ModelDirs,
    ProbeRun,
    ServingConfigs,
)
from ascend_audit.facts.mounts import StorageLocation
from ascend_audit.facts.serving_config.argv import parse_vllm_argv
from ascend_audit.facts.storage import WEIGHTS_STORAGE, WeightsPath, WeightsStorage
from ascend_audit.gather.model_dirs import model_dirs
from ascend_audit.host.base import Host, StatInfo
from ascend_audit.model import Status
from ascend_audit.policy import parse_policy

MODEL = "/models/qwen"
INPUTS = Inputs(serving_configs=("serve.sh",))


def _facts(kind: str, names: tuple[str, ...], size_gb: float | None) -> dict:
    cfg = parse_vllm_argv(["vllm", "serve", MODEL, "--max-model-len", "8192"])
    loc = StorageLocation(MODEL, MODEL, kind, mount_point="/models", fstype=kind, source="srv:/m")
    return {
        SERVING_CONFIGS: ServingConfigs((ConfigInput("serve.sh", cfg),)),
        SERVING_LOGS: [],
        PROBE: ProbeRun(None, ""),
        WEIGHTS_STORAGE: WeightsStorage(WeightsPath(MODEL, "policy"), True, loc, None),
        MODEL_DIRS: ModelDirs((ModelDir(MODEL, names, size_gb),)),
    }


def test_weights_on_nfs_warn_with_a_load_estimate_from_the_gathered_size():
    out = judge(weight_placement, _facts("nfs", ("model.safetensors",), 140.0), inputs=INPUTS)
    assert out.status is Status.WARN
    assert "network storage (nfs)" in out.summary and "~140 GB → ~140 s" in out.summary
    assert out.evidence[0].values["size_gb"] == 140.0


def test_weights_on_local_nvme_need_no_estimate():
    out = judge(weight_placement, _facts("nvme-local", ("a.safetensors",), None), inputs=INPUTS)
    assert "network storage" not in out.summary


def test_pt_shards_without_safetensors_warn_from_the_listed_directory():
    facts = _facts("nvme-local", ("pytorch_model-1.bin", "pytorch_model-2.bin"), None)
    out = judge(weight_placement, facts, inputs=INPUTS)
    assert out.status is Status.WARN and "2 .bin/.pt shards and no safetensors" in out.summary


def test_the_helper_refuses_facts_it_was_not_given_and_the_node():
    ctx = facts_context({})
    with pytest.raises(MissingFact):
        ctx.fact(MODEL_DIRS)
    with pytest.raises(AssertionError, match="asked the node"):
        ctx.host.listdir("/")


class _Dirs(Host):
    """Just enough of a node for the model_dirs gatherer: listings and file sizes."""

    def __init__(self, tree: dict[str, dict[str, int]]) -> None:
        self.tree = tree
        self.asked: list[str] = []

    def listdir(self, path: str) -> list[str] | None:
        self.asked.append(path)
        return list(self.tree[path]) if path in self.tree else None

    def stat(self, path: str) -> StatInfo | None:
        d, _, n = path.rpartition("/")
        size = self.tree.get(d, {}).get(n)
        return None if size is None else StatInfo(0o644, 0, 0, "root", "root", "file", size)


def _gathered(kind: str, tree: dict[str, dict[str, int]]) -> ModelDirs:
    facts = {k.name: v for k, v in _facts(kind, (), None).items() if k is not MODEL_DIRS}
    ctx = FactsContext(_Dirs(tree), parse_policy(""), INPUTS, given=facts)
    return model_dirs(ctx)


def test_gatherer_lists_named_dirs_and_sizes_only_network_weights():
    tree = {MODEL: {"a.safetensors": 60 * 10**9, "b.safetensors": 20 * 10**9}}
    nfs = _gathered("nfs", tree).get(MODEL)
    assert nfs is not None and nfs.size_gb == pytest.approx(80.0)
    assert set(nfs.names or ()) == {"a.safetensors", "b.safetensors"}
    local = _gathered("nvme-local", tree).get(MODEL)
    assert local is not None and local.size_gb is None and local.names


def test_gatherer_keeps_an_unlistable_dir_as_unknown():
    d = _gathered("nfs", {}).get(MODEL)
    assert d is not None and d.names is None and d.size_gb is None
