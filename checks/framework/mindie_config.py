"""MindIE config.json: limits and parallel sizes, weights, devices and memory, multi-node."""

from __future__ import annotations

from typing import Any

from ascend_audit.context import Context
from ascend_audit.facts.driver_scan import NPU_SMI
from ascend_audit.facts.mindie_config import MINDIE_CONFIGS
from ascend_audit.facts.network import RANK_TABLE, SERVING_ENV
from ascend_audit.model import Evidence, Outcome, error, fail, skip, warn, worst
from ascend_audit.registry import check

from .inputs import optional_fact, unless_dead

NO_CONFIG = (
    "no MindIE config.json (no --serving-config in MindIE form, no MindIE process, "
    "no default install)"
)
INFER_MODES = ("standard", "Standard", "dmi")
GIB = 1 << 30


def _inputs(ctx: Context) -> tuple[list[Any], Outcome | None]:
    found: tuple[Any, ...] = ctx.fact(MINDIE_CONFIGS)
    items = list(found)
    if not items:
        return [], skip(NO_CONFIG)
    bad = [i for i in items if i.error]
    if bad and len(bad) == len(items):
        ev = [Evidence("config", i.path, i.error or "") for i in bad]
        return [], error(f"MindIE config unreadable: {bad[0].path}: {bad[0].error}", ev)
    return [i for i in items if not i.error], None


def _ev(cfg: Any, *names: str) -> list[Evidence]:
    out = []
    for n in names:
        v = cfg.values.get(n)
        if v is not None:
            out.append(Evidence("config", cfg.where(n), v.text, {v.key: v.value}))
    return out


def _bad(cfg: Any, summary: str, *names: str) -> Outcome:
    return fail(f"{cfg.source}: {summary}", _ev(cfg, *names))


def _conclude(ctx: Context, findings: list[Outcome], ok: str, ev: list[Evidence]) -> Outcome:
    """The worst finding, or a PASS on the evidence gathered; never a PASS beside a dead engine."""
    out = worst(findings, ok)
    if out.status.value == "PASS":
        out.evidence = ev
    return unless_dead(ctx, out)


def _limits(cfg: Any) -> list[Outcome]:
    """Token limits and batch sizes: msprechecker's assertions, and MindIE's own ranges."""
    out: list[Outcome] = []
    seq, inp = cfg.num("maxSeqLen"), cfg.num("maxInputTokenLen")
    pre, it = cfg.num("maxPrefillTokens"), cfg.num("maxIterTimes")
    if inp is not None and inp < 1:
        out.append(_bad(cfg, f"maxInputTokenLen={inp} < 1", "maxInputTokenLen"))
    if seq is not None and inp is not None and seq < inp:
        out.append(
            _bad(
                cfg,
                f"maxSeqLen={seq} < maxInputTokenLen={inp}: the output budget is negative",
                "maxSeqLen",
                "maxInputTokenLen",
            )
        )
    if pre is not None and inp is not None and pre < inp:
        out.append(
            _bad(
                cfg,
                f"maxPrefillTokens={pre} < maxInputTokenLen={inp}: a full-length prompt "
                "never fits one prefill",
                "maxPrefillTokens",
                "maxInputTokenLen",
            )
        )
    if it is not None and (it < 1 or (seq is not None and it > seq)):
        out.append(
            _bad(
                cfg,
                f"maxIterTimes={it} outside 1..maxSeqLen={seq}",
                "maxIterTimes",
                "maxSeqLen",
            )
        )
    pb, mb = cfg.num("maxPrefillBatchSize"), cfg.num("maxBatchSize")
    if pb is not None and pb < 1:
        out.append(_bad(cfg, f"maxPrefillBatchSize={pb} < 1", "maxPrefillBatchSize"))
    if mb is not None and mb < 1:
        out.append(_bad(cfg, f"maxBatchSize={mb} < 1", "maxBatchSize"))
    if pb is not None and mb is not None and pb > mb:
        out.append(
            _bad(
                cfg,
                f"maxPrefillBatchSize={pb} > maxBatchSize={mb}",
                "maxPrefillBatchSize",
                "maxBatchSize",
            )
        )
    blk = cfg.num("cacheBlockSize")
    if blk is not None and not 1 <= blk <= 128:
        out.append(_bad(cfg, f"cacheBlockSize={blk} outside 1..128", "cacheBlockSize"))
    for key, top in (("tokenTimeout", 3600), ("e2eTimeout", 65535)):
        v = cfg.num(key)
        if v is not None and not 1 <= v <= top:
            out.append(_bad(cfg, f"{key}={v} outside 1..{top}", key))
    mode = cfg.get("inferMode")
    if mode is not None and mode not in INFER_MODES:
        out.append(_bad(cfg, f"inferMode={mode!r}: not standard or dmi", "inferMode"))
    return out


def _parallel(cfg: Any) -> list[Outcome]:
    """worldSize = len(npuDeviceIds[i]) = dp*tp*cp*pp; sp in {1, tp}; pp 1; instance counts."""
    out: list[Outcome] = []
    world = cfg.num("worldSize")
    groups = cfg.device_groups
    if cfg.get("npuDeviceIds") is not None and not groups:
        out.append(_bad(cfg, "npuDeviceIds is not a list of lists of integers", "npuDeviceIds"))
    for i, g in enumerate(groups):
        if world is not None and len(g) != world:
            out.append(
                _bad(
                    cfg,
                    f"worldSize={world} but npuDeviceIds[{i}]={list(g)} has {len(g)} devices",
                    "worldSize",
                    "npuDeviceIds",
                )
            )
    n_inst = cfg.num("modelInstanceNumber")
    if n_inst is not None and groups and n_inst != len(groups):
        out.append(
            _bad(
                cfg,
                f"modelInstanceNumber={n_inst} but npuDeviceIds has {len(groups)} groups",
                "modelInstanceNumber",
                "npuDeviceIds",
            )
        )
    sizes = {k: cfg.num(k) for k in ("dp", "tp", "cp", "pp", "sp")}
    given = [k for k in ("dp", "tp", "cp", "pp") if sizes[k] is not None]
    if given and world is not None and cfg.get("multiNodesInferEnabled") is not True:
        prod = 1
        for k in ("dp", "tp", "cp", "pp"):
            prod *= sizes[k] or 1
        if prod != world:
            shown = " * ".join(f"{k} {sizes[k] or 1}" for k in ("dp", "tp", "cp", "pp"))
            out.append(_bad(cfg, f"{shown} = {prod} != worldSize={world}", *given, "worldSize"))
    if sizes["pp"] is not None and sizes["pp"] != 1:
        out.append(_bad(cfg, f"pp={sizes['pp']}: MindIE serves with pp = 1 only", "pp"))
    sp, tp = sizes["sp"], sizes["tp"] or 1
    if sp is not None and sp not in (1, tp):
        out.append(_bad(cfg, f"sp={sp}: must be 1 or tp ({tp})", "sp", "tp"))
    return out


@check("FWK-MINDIE-001")
def mindie_limits(ctx: Context) -> Outcome:
    items, why = _inputs(ctx)
    if why:
        return why
    findings: list[Outcome] = []
    ev: list[Evidence] = []
    for i in items:
        cfg = i.config
        findings += _limits(cfg) + _parallel(cfg)
        ev += _ev(
            cfg,
            "worldSize",
            "npuDeviceIds",
            "maxSeqLen",
            "maxInputTokenLen",
            "maxPrefillTokens",
            "maxIterTimes",
        )
    shown = "; ".join(
        i.config.show(
            "worldSize", "maxSeqLen", "maxInputTokenLen", "maxPrefillTokens", "maxIterTimes"
        )
        for i in items
    )
    return _conclude(ctx, findings, f"MindIE limits and parallel sizes agree ({shown})", ev)


@check("FWK-MINDIE-002")
def mindie_weights(ctx: Context) -> Outcome:
    items, why = _inputs(ctx)
    if why:
        return why
    findings: list[Outcome] = []
    ev: list[Evidence] = []
    for i in items:
        cfg = i.config
        wp = cfg.get("modelWeightPath")
        if wp is None:
            findings.append(_bad(cfg, "no ModelConfig[0].modelWeightPath", "modelName"))
            continue
        if not isinstance(wp, str) or not wp.startswith("/"):
            findings.append(
                _bad(cfg, f"modelWeightPath={wp!r} is not an absolute path", "modelWeightPath")
            )
            continue
        w = i.weights
        ev += _ev(cfg, "modelWeightPath")
        listing = Evidence(
            "file", wp, "\n".join(w.names) if w else "", {"kind": w.kind if w else None}
        )
        if w is None or w.kind is None:
            findings.append(
                fail(
                    f"{cfg.source}: modelWeightPath={wp} does not exist on this node "
                    "(inside the container)",
                    [*_ev(cfg, "modelWeightPath"), listing],
                )
            )
        elif w.kind != "dir":
            findings.append(fail(f"modelWeightPath={wp} is a {w.kind}, not a directory", [listing]))
        elif not w.has_config or not w.weight_files:
            missing = [
                x
                for x, ok in (("config.json", w.has_config), ("weight files", w.weight_files))
                if not ok
            ]
            findings.append(
                fail(f"modelWeightPath={wp} holds no {' and no '.join(missing)}", [listing])
            )
        else:
            ev.append(listing)
    ok = "modelWeightPath holds a model (config.json and weight files)"
    return _conclude(ctx, findings, ok, ev)


def _hbm_gib(ctx: Context) -> tuple[float | None, str]:
    run = optional_fact(ctx, NPU_SMI)
    info = getattr(run, "info", None)
    chips = info.chips if info is not None else ()
    totals = [c.hbm_total_mb for c in chips if c.hbm_total_mb]
    if not totals:
        return None, ""
    return min(totals) / 1024, f"npu-smi info: HBM {min(totals)} MB per chip"


def _visible(ctx: Context, env: dict[str, str]) -> tuple[int | None, str]:
    raw = env.get("ASCEND_RT_VISIBLE_DEVICES")
    if raw is None:
        senv = optional_fact(ctx, SERVING_ENV)
        raw = senv.env.get("ASCEND_RT_VISIBLE_DEVICES") if senv is not None else None
    if raw is not None and raw.strip():
        ids = [x for x in raw.split(",") if x.strip()]
        return len(ids), f"ASCEND_RT_VISIBLE_DEVICES={raw}"
    run = optional_fact(ctx, NPU_SMI)
    info = getattr(run, "info", None)
    if info is not None and info.chips:
        return len(info.chips), f"npu-smi info shows {len(info.chips)} chips"
    return None, ""


@check("FWK-MINDIE-003")
def mindie_devices_memory(ctx: Context) -> Outcome:
    items, why = _inputs(ctx)
    if why:
        return why
    findings: list[Outcome] = []
    ev: list[Evidence] = []
    hbm, hbm_how = _hbm_gib(ctx)
    for i in items:
        cfg = i.config
        ev += _ev(cfg, "npuDeviceIds", "npuMemSize")
        count, how = _visible(ctx, i.env)
        ids = sorted({d for g in cfg.device_groups for d in g})
        if count is not None and ids:
            out_of = [d for d in ids if d >= count or d < 0]
            if out_of:
                findings.append(
                    _bad(
                        cfg,
                        f"npuDeviceIds {out_of} outside the {count} visible devices "
                        f"(ids index them: 0..{count - 1}; {how})",
                        "npuDeviceIds",
                    )
                )
        mem = cfg.num("npuMemSize")
        if mem == 0 or (mem is not None and mem < -1):
            findings.append(
                _bad(cfg, f"npuMemSize={mem}: -1 (auto) or a size > 0 GB", "npuMemSize")
            )
        elif mem is not None and mem > 0 and hbm is not None and mem >= hbm:
            findings.append(
                _bad(
                    cfg,
                    f"npuMemSize={mem} GB of KV cache per NPU >= {hbm:.1f} GiB of HBM ({hbm_how}): "
                    "nothing is left for the weights",
                    "npuMemSize",
                )
            )
        elif mem is not None and mem > 0 and hbm is None:
            findings.append(warn(f"npuMemSize={mem} GB: HBM per chip unknown (no npu-smi)"))
    shown = "; ".join(i.config.show("npuDeviceIds", "npuMemSize") for i in items)
    ok = f"MindIE devices and memory fit this node ({shown}; {hbm_how or 'HBM ?'})"
    return _conclude(ctx, findings, ok, ev)


@check("FWK-MINDIE-004")
def mindie_multinode_tls(ctx: Context) -> Outcome:
    items, why = _inputs(ctx)
    if why:
        return why
    rt = optional_fact(ctx, RANK_TABLE)
    table = getattr(rt, "table", None)
    servers = len(table.servers) if table is not None else None
    findings: list[Outcome] = []
    ev: list[Evidence] = []
    for i in items:
        cfg = i.config
        multi = cfg.get("multiNodesInferEnabled")
        ev += _ev(cfg, "multiNodesInferEnabled", "interCommTLSEnabled", "interNodeTLSEnabled")
        rt_src = (rt.path or rt.origin) if rt is not None else "rank table"
        rt_ev = [Evidence("file", rt_src, f"{servers} server(s)")] if servers else []
        if multi is True and not servers:
            findings.append(
                _bad(
                    cfg,
                    "multiNodesInferEnabled=true but no rank table was found (RANK_TABLE_FILE "
                    "or --rank-table): the nodes cannot find each other",
                    "multiNodesInferEnabled",
                )
            )
        elif multi is True and servers == 1:
            findings.append(
                fail(
                    f"{cfg.source}: multiNodesInferEnabled=true but the rank table lists 1 server",
                    _ev(cfg, "multiNodesInferEnabled") + rt_ev,
                )
            )
        elif multi is not True and servers and servers > 1:
            findings.append(
                fail(
                    f"{cfg.source}: multiNodesInferEnabled={str(multi).lower()} but the rank "
                    f"table lists {servers} servers",
                    _ev(cfg, "multiNodesInferEnabled") + rt_ev,
                )
            )
        missing = [p for p, ok in i.tls_files.items() if not ok]
        if missing:
            switches = [
                s
                for s in ("httpsEnabled", "interCommTLSEnabled", "interNodeTLSEnabled")
                if cfg.get(s) is True
            ]
            findings.append(
                fail(
                    f"{cfg.source}: {', '.join(f'{s}=true' for s in switches)} but "
                    f"{len(missing)} TLS file(s) are missing: {', '.join(missing[:4])}",
                    _ev(cfg, *switches) + [Evidence("file", p, "missing") for p in missing[:8]],
                )
            )
        if multi is True and cfg.get("interNodeTLSEnabled") is False:
            findings.append(
                warn(f"{cfg.source}: multi-node inference with interNodeTLSEnabled=false")
            )
    shown = "; ".join(i.config.show("multiNodesInferEnabled", "interCommTLSEnabled") for i in items)
    rt_text = f"rank table: {servers} server(s)" if servers else "no rank table"
    ok = f"MindIE multi-node and TLS settings agree ({shown}; {rt_text})"
    return _conclude(ctx, findings, ok, ev)
