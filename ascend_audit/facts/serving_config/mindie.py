"""MindIE Service's config.json as a ServingConfig: the values `facts/mindie_config.py` (the
format's one reader) found, with the lines that set them."""

from __future__ import annotations

from collections.abc import Mapping

from ascend_audit.facts.mindie_config import MindieConfig, parse_mindie_json
from ascend_audit.facts.serving_config.builder import Builder, env_of
from ascend_audit.facts.serving_config.model import ConfigItem, ServingConfig
from ascend_audit.facts.serving_config.values import as_int, as_str, jsonable_safe

_MC = "ModelDeployConfig.ModelConfig[0]"
# The keys a ServingConfig reports, in report order, with the section its evidence names.
_ITEMS = (
    ("npuDeviceIds", "BackendConfig"),
    ("modelInstanceNumber", "BackendConfig"),
    ("multiNodesInferEnabled", "BackendConfig"),
    ("maxSeqLen", "ModelDeployConfig"),
    ("maxInputTokenLen", "ModelDeployConfig"),
    ("modelName", _MC),
    ("modelWeightPath", _MC),
    ("worldSize", _MC),
    ("npuMemSize", _MC),
    ("cpuMemSize", _MC),
    ("backendType", _MC),
    ("cacheBlockSize", "ScheduleConfig"),
    ("maxPrefillTokens", "ScheduleConfig"),
    ("maxBatchSize", "ScheduleConfig"),
    ("maxPrefillBatchSize", "ScheduleConfig"),
    ("maxIterTimes", "ScheduleConfig"),
)
_FAILED = {
    "empty": "empty config",
    "too_large": "file too large",
    "not_object": "config.json is not a JSON object",
}


def _structure(cfg: MindieConfig) -> list[str]:
    """What the config lacks: sections, the model list, well-formed device groups."""
    out = []
    if cfg.failure == "no_backend":
        return ["missing section BackendConfig"]
    out += [
        f"missing section {s}"
        for s in ("ModelDeployConfig", "ScheduleConfig")
        if s not in cfg.sections
    ]
    if cfg.model_configs > 1:
        out.append(f"{cfg.model_configs} ModelConfig entries; the first is reported")
    elif "ModelDeployConfig" in cfg.sections and not cfg.model_configs:
        out.append("ModelDeployConfig.ModelConfig is missing or empty")
    ids = cfg.get("npuDeviceIds")
    if isinstance(ids, list):
        for g in ids:
            if not (isinstance(g, list) and all(type(x) is int for x in g)):
                out.append(f"npuDeviceIds entry is not a list of integers: {str(g)[:50]}")
    elif ids is not None:
        out.append("npuDeviceIds is not a list of lists")
    world, groups = as_int(cfg.get("worldSize")), cfg.device_groups
    if world is not None and groups and any(len(g) != world for g in groups):
        out.append(
            f"worldSize {world} differs from npuDeviceIds group sizes {[len(g) for g in groups]}"
        )
    return out


def parse_mindie_config(
    text: str, source: str, env: Mapping[str, str] | None = None
) -> ServingConfig:
    """Parse MindIE Service's config.json (BackendConfig / ModelDeployConfig / ScheduleConfig)."""
    src = str(source)
    cfg = parse_mindie_json(text, src)
    if cfg.failure and cfg.failure != "no_backend":
        why = _FAILED.get(cfg.failure) or (cfg.problems[0] if cfg.problems else cfg.failure)
        return ServingConfig(source=src, engine="mindie", env=env_of(env), problems=(why,))
    b = Builder(src)
    for key, section in _ITEMS:
        v = cfg.values.get(key)
        if v is None:
            continue
        value = jsonable_safe(v.value)
        b.items.append(ConfigItem(f"{section}.{key}", value, src, v.lineno or None, v.text))
        b.options[key] = value
    b.problems.extend(_structure(cfg))
    get = cfg.get
    return b.build(
        "mindie",
        env,
        model=as_str(get("modelName")),
        model_path=as_str(get("modelWeightPath")),
        block_size=as_int(get("cacheBlockSize")),
        max_model_len=as_int(get("maxSeqLen")),
        npu_device_ids=cfg.device_groups,
        world_size=as_int(get("worldSize")),
        npu_mem_size=as_int(get("npuMemSize")),
        cpu_mem_size=as_int(get("cpuMemSize")),
        max_input_token_len=as_int(get("maxInputTokenLen")),
        max_prefill_tokens=as_int(get("maxPrefillTokens")),
        max_batch_size=as_int(get("maxBatchSize")),
        max_prefill_batch_size=as_int(get("maxPrefillBatchSize")),
        backend_type=as_str(get("backendType")),
        model_instances=as_int(get("modelInstanceNumber")),
    )
