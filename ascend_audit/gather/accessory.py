"""Accessory stack gatherer: the version files of NNAL/ATB, opp_kernel, MindIE and atb-models.

Paths follow msprechecker 0.4.0's collectors (ATB_HOME_PATH/../../version.info, ASCEND_TOOLKIT_HOME/
opp_kernel/version.info, MINDIE_LLM_HOME_PATH/../version.info, ATB_SPEED_HOME_PATH/version.info),
with the service's environment first and the default install paths after.
"""

from __future__ import annotations

import posixpath
from dataclasses import replace
from typing import TypeVar

from ascend_audit.context import Context, gatherer
from ascend_audit.facts.accessory import (
    ACCESSORY_STACK,
    AccessoryStack,
    Component,
    parse_version_info,
)
from ascend_audit.facts.driver_scan import NPU_SMI
from ascend_audit.facts.framework_inputs import PROBE
from ascend_audit.facts.keys import FactKey
from ascend_audit.facts.network import SERVING_ENV
from ascend_audit.facts.version_files import VERSION_FILES

T = TypeVar("T")

ASCEND = "/usr/local/Ascend"
# name, env var, path under it, default path, version keys
COMPONENTS: tuple[tuple[str, str, str, str, tuple[str, ...]], ...] = (
    (
        "atb",
        "ATB_HOME_PATH",
        "../../version.info",
        f"{ASCEND}/nnal/atb/latest/version.info",
        ("Ascend-cann-atb Version", "Ascend-cann-atb", "version"),
    ),
    (
        "opp_kernel",
        "ASCEND_TOOLKIT_HOME",
        "opp_kernel/version.info",
        f"{ASCEND}/ascend-toolkit/latest/opp_kernel/version.info",
        ("version", "version_dir"),
    ),
    (
        "mindie",
        "MINDIE_LLM_HOME_PATH",
        "../version.info",
        f"{ASCEND}/mindie/latest/version.info",
        ("Ascend-mindie", "mindie version", "version"),
    ),
    (
        "atb_models",
        "ATB_SPEED_HOME_PATH",
        "version.info",
        f"{ASCEND}/atb-models/version.info",
        ("atb-models version", "version"),
    ),
)


def _optional(ctx: Context, key: FactKey[T]) -> T | None:
    try:
        return ctx.fact(key)
    except Exception:
        return None


@gatherer(ACCESSORY_STACK, "framework")
def accessory_stack(ctx: Context) -> AccessoryStack:
    """Versions of the accessories, the CANN toolkit, npu-smi's chip names and the probe."""
    senv = _optional(ctx, SERVING_ENV)
    env = dict(senv.env) if senv is not None else {}
    comps = []
    for name, var, rel, default, keys in COMPONENTS:
        paths = []
        if env.get(var):
            paths.append(posixpath.normpath(posixpath.join(env[var], rel)))
        paths.append(default)
        comp = None
        for path in dict.fromkeys(paths):
            r = ctx.host.read_text(path)
            if r.ok:
                text = r.text or ""
                comp = Component(name, path, parse_version_info(text, keys), text[:600])
                break
            comp = comp or Component(name, path, None, "", r.error or "unreadable")
        if comp is not None:
            comps.append(comp)
    vf = _optional(ctx, VERSION_FILES)
    tk = vf.toolkit if vf is not None else None
    run = _optional(ctx, NPU_SMI)
    info = run.info if run is not None else None
    chips = tuple(info.names) if info is not None else ()
    probe = _optional(ctx, PROBE)
    pf = probe.facts if probe is not None else None
    stack = AccessoryStack(
        tuple(comps),
        vf.cann_version if vf is not None else None,
        tk.path if tk is not None else "",
        chips,
    )
    if probe is None or pf is None or not pf.ran:
        return stack
    return replace(
        stack,
        packages=tuple((k, v) for k, v in pf.packages if v),
        build_device_type=pf.build_device_type,
        build_soc_version=pf.build_soc_version,
        probe_source=probe.source,
    )
