"""MindIE Service config.json files to judge, with the node paths their keys name.

Configs come from --serving-config (when it is a MindIE config), from a running MindIE process
(MIES_CONFIG_JSON_PATH, MIES_INSTALL_PATH, its executable's home, the default install), and, on a
node with no serving engine seen yet, from the default install path. For each, the gatherer asks
the Host what modelWeightPath holds and whether the TLS files the config names exist.
"""

from __future__ import annotations

import posixpath
from typing import Any

from ascend_audit.context import Context, gatherer
from ascend_audit.facts.framework_inputs import SERVING_CONFIGS
from ascend_audit.facts.mindie_config import (
    MINDIE_CONFIGS,
    MINDIE_HOME,
    MindieConfig,
    MindieInput,
    WeightDir,
    looks_like_mindie,
    parse_mindie_json,
)
from ascend_audit.safe_io import open_regular

DEFAULT_CONFIG = f"{MINDIE_HOME}/conf/config.json"
CONFIG_CAP = 16 * 1024 * 1024
MAX_LISTING = 10_000
# (switch, files it needs): MindIE resolves relative TLS paths against its install home
TLS_FILES: dict[str, tuple[tuple[str, str | None], ...]] = {
    "httpsEnabled": (("tlsCert", None), ("tlsPk", None), ("tlsCaFile", "tlsCaPath")),
    "interCommTLSEnabled": (
        ("interCommTlsCert", None),
        ("interCommPk", None),
        ("interCommTlsCaFiles", "interCommTlsCaPath"),
    ),
    "interNodeTLSEnabled": (
        ("interNodeTlsCert", None),
        ("interNodeTlsPk", None),
        ("interNodeTlsCaFiles", "interNodeTlsCaPath"),
    ),
}


def _read_user_file(ctx: Context, path: str) -> tuple[str | None, str | None]:
    local = ctx.host.input_path(path)
    if local is None:
        return None, f"{path}: no such file"
    try:
        with open_regular(local) as fh:
            data = fh.read(CONFIG_CAP + 1)
    except OSError as exc:
        return None, f"{path}: cannot read ({exc.strerror or type(exc).__name__})"
    if len(data) > CONFIG_CAP:
        return None, f"{path}: larger than {CONFIG_CAP >> 20} MiB"
    return data.decode("utf-8", errors="replace"), None


def _weights(ctx: Context, path: str) -> WeightDir:
    st = ctx.host.stat(path)
    if st is None:
        return WeightDir(path, None)
    if st.kind != "dir":
        return WeightDir(path, st.kind)
    names = (ctx.host.listdir(path) or [])[:MAX_LISTING]
    weights = [n for n in names if n.endswith((".safetensors", ".bin", ".pt", ".gguf"))]
    return WeightDir(path, "dir", "config.json" in names, len(weights), tuple(names[:20]))


def _tls_paths(cfg: MindieConfig, home: str) -> list[str]:
    out: list[str] = []
    for switch, needs in TLS_FILES.items():
        if cfg.get(switch) is not True:
            continue
        for key, base_key in needs:
            raw = cfg.get(key)
            files = raw if isinstance(raw, list) else [raw]
            base = cfg.get(base_key) if base_key else None
            for f in files:
                if not isinstance(f, str) or not f:
                    continue
                p = posixpath.join(base, f) if isinstance(base, str) and base else f
                out.append(p if p.startswith("/") else posixpath.join(home, p))
    return out


def _home_of(config_path: str) -> str:
    """…/mindie-service/conf/config.json -> …/mindie-service (else the default home)."""
    d = posixpath.dirname(config_path)
    return posixpath.dirname(d) if posixpath.basename(d) == "conf" else MINDIE_HOME


def _judgeable(ctx: Context, path: str, origin: str, text: str, env: dict[str, str]) -> MindieInput:
    cfg = parse_mindie_json(text, path)
    if not cfg.ok:
        return MindieInput(path, origin, cfg, "; ".join(cfg.problems[:2]) or "no values", env=env)
    home = env.get("MIES_INSTALL_PATH") or _home_of(path)
    wp = cfg.get("modelWeightPath")
    weights = _weights(ctx, wp) if isinstance(wp, str) and wp.startswith("/") else None
    tls = {p: ctx.host.exists(p) for p in _tls_paths(cfg, home)}
    return MindieInput(path, origin, cfg, None, home, weights, tls, env)


def _process_candidates(ctx: Context) -> list[tuple[str, str, dict[str, str]]]:
    from ascend_audit.gather.framework import is_serving, serving_processes

    out = []
    for proc in serving_processes(ctx):
        if is_serving(proc) != "mindie":
            continue
        env = dict(proc.environ)
        paths = [env.get("MIES_CONFIG_JSON_PATH", "")]
        if env.get("MIES_INSTALL_PATH"):
            paths.append(posixpath.join(env["MIES_INSTALL_PATH"], "conf/config.json"))
        if proc.exe:
            paths.append(
                posixpath.join(posixpath.dirname(posixpath.dirname(proc.exe)), "conf/config.json")
            )
        paths.append(DEFAULT_CONFIG)
        for p in dict.fromkeys(x for x in paths if x):
            out.append((p, f"process {proc.pid} ({' '.join(proc.cmdline)[:60]})", env))
    return out


@gatherer(MINDIE_CONFIGS, "framework")
def mindie_configs(ctx: Context) -> tuple[MindieInput, ...]:
    """Every MindIE config.json to judge (user files, a running MindIE, the default install)."""
    out: list[MindieInput] = []
    for path in ctx.inputs.serving_configs:
        text, _err = _read_user_file(ctx, path)
        if text is None:
            continue  # the serving-config checks already report an unreadable input
        if looks_like_mindie(text):
            out.append(_judgeable(ctx, path, "--serving-config", text, {}))
    seen = {i.path for i in out}
    for path, origin, env in _process_candidates(ctx):
        if path in seen:
            continue
        r = ctx.host.read_text(path)
        if r.ok and r.text and looks_like_mindie(r.text):
            out.append(_judgeable(ctx, path, origin, r.text, env))
            break
    if not out and not _vllm_seen(ctx):
        r = ctx.host.read_text(DEFAULT_CONFIG)
        if r.ok and r.text and looks_like_mindie(r.text):
            out.append(_judgeable(ctx, DEFAULT_CONFIG, "the default MindIE install", r.text, {}))
    return tuple(out)


def _vllm_seen(ctx: Context) -> bool:
    try:
        sc = ctx.fact(SERVING_CONFIGS)
    except Exception:
        return False
    return any(c.engine == "vllm" for c in sc.configs) or bool(ctx.inputs.serving_configs)


def inventory(facts: dict[str, Any]) -> dict[str, Any]:
    """The MindIE configs judged and their world size."""
    items = facts.get(MINDIE_CONFIGS.name) or ()
    rows = [
        {"path": i.path, "worldSize": i.config.get("worldSize") if i.config else None}
        for i in items
    ]
    return {"mindie": rows} if rows else {}
