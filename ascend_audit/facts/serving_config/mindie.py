"""MindIE Service's config.json as a ServingConfig (BackendConfig / ModelDeployConfig /
ScheduleConfig)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ascend_audit.facts.serving_config.builder import Builder, env_of
from ascend_audit.facts.serving_config.model import ConfigItem, ServingConfig
from ascend_audit.facts.serving_config.values import (
    MAX_TEXT,
    as_int,
    as_str,
    find_lineno,
    jsonable_safe,
)


def parse_mindie_config(
    text: str, source: str, env: Mapping[str, str] | None = None
) -> ServingConfig:
    """Parse MindIE Service's config.json (BackendConfig / ModelDeployConfig / ScheduleConfig)."""
    src = str(source)
    b = Builder(src)
    if not isinstance(text, str) or not text.strip():
        return ServingConfig(
            source=src, engine="mindie", env=env_of(env), problems=("empty config",)
        )
    if len(text) > MAX_TEXT:
        return ServingConfig(
            source=src, engine="mindie", env=env_of(env), problems=("file too large",)
        )
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return ServingConfig(
            source=src, engine="mindie", env=env_of(env), problems=(f"invalid JSON: {exc}",)
        )
    if not isinstance(data, dict):
        return ServingConfig(
            source=src,
            engine="mindie",
            env=env_of(env),
            problems=("config.json is not a JSON object",),
        )
    lines = text.splitlines()
    problems: list[str] = []

    def section(obj: Any, name: str) -> dict[str, Any]:
        v = obj.get(name) if isinstance(obj, dict) else None
        if not isinstance(v, dict):
            problems.append(f"missing section {name}")
            return {}
        return v

    backend = section(data, "BackendConfig")
    deploy = section(backend, "ModelDeployConfig") if backend else {}
    sched = section(backend, "ScheduleConfig") if backend else {}
    models = deploy.get("ModelConfig") if deploy else None
    model: dict[str, Any] = {}
    if isinstance(models, list) and models and isinstance(models[0], dict):
        model = models[0]
        if len(models) > 1:
            problems.append(f"{len(models)} ModelConfig entries; the first is reported")
    elif deploy:
        problems.append("ModelDeployConfig.ModelConfig is missing or empty")

    def take(obj: dict[str, Any], key: str, path: str) -> Any:
        if key not in obj:
            return None
        value = obj[key]
        lineno, line = find_lineno(lines, key)
        b.items.append(ConfigItem(f"{path}.{key}", jsonable_safe(value), src, lineno, line))
        b.options[key] = jsonable_safe(value)
        return value

    ids_raw = take(backend, "npuDeviceIds", "BackendConfig")
    groups: list[tuple[int, ...]] = []
    if isinstance(ids_raw, list):
        for g in ids_raw:
            if isinstance(g, list) and all(
                isinstance(x, int) and not isinstance(x, bool) for x in g
            ):
                groups.append(tuple(g))
            else:
                problems.append(f"npuDeviceIds entry is not a list of integers: {str(g)[:50]}")
    elif ids_raw is not None:
        problems.append("npuDeviceIds is not a list of lists")
    instances = as_int(take(backend, "modelInstanceNumber", "BackendConfig"))
    take(backend, "multiNodesInferEnabled", "BackendConfig")
    max_seq = as_int(take(deploy, "maxSeqLen", "ModelDeployConfig"))
    max_in = as_int(take(deploy, "maxInputTokenLen", "ModelDeployConfig"))
    mc = "ModelDeployConfig.ModelConfig[0]"
    name = take(model, "modelName", mc)
    path = take(model, "modelWeightPath", mc)
    world = as_int(take(model, "worldSize", mc))
    npu_mem = as_int(take(model, "npuMemSize", mc))
    cpu_mem = as_int(take(model, "cpuMemSize", mc))
    backend_type = take(model, "backendType", mc)
    block = as_int(take(sched, "cacheBlockSize", "ScheduleConfig"))
    max_prefill_tokens = as_int(take(sched, "maxPrefillTokens", "ScheduleConfig"))
    max_batch = as_int(take(sched, "maxBatchSize", "ScheduleConfig"))
    max_prefill_batch = as_int(take(sched, "maxPrefillBatchSize", "ScheduleConfig"))
    take(sched, "maxIterTimes", "ScheduleConfig")
    if world is not None and groups and any(len(g) != world for g in groups):
        problems.append(
            f"worldSize {world} differs from npuDeviceIds group sizes {[len(g) for g in groups]}"
        )
    b.problems.extend(problems)
    return b.build(
        "mindie",
        env,
        model=as_str(name),
        model_path=as_str(path),
        block_size=block,
        max_model_len=max_seq,
        npu_device_ids=tuple(groups),
        world_size=world,
        npu_mem_size=npu_mem,
        cpu_mem_size=cpu_mem,
        max_input_token_len=max_in,
        max_prefill_tokens=max_prefill_tokens,
        max_batch_size=max_batch,
        max_prefill_batch_size=max_prefill_batch,
        backend_type=as_str(backend_type),
        model_instances=instances,
    )
