"""Gatherers: host I/O plus a pure parser, one fact each, built at most once per run.

Each module of this package registers its gatherers with `@gatherer` and may define
`inventory(facts) -> dict` to contribute what it learned to the report's inventory. A run
imports only the modules it needs: `FACT_MODULES` says which module gathers each fact and
`INVENTORY_READS` which facts each module's inventory reads (tests/engine/test_gather_index.py
proves both against the modules themselves).
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType
from typing import Any

# fact name -> (gather module, layer); a module with `commands` is listed under its layer
FACT_MODULES: dict[str, tuple[str, str]] = {
    "accessory_stack": ("accessory", "framework"),
    "container": ("context_facts", "driver"),
    "device_grant": ("context_facts", "driver"),
    "dev_nodes": ("driver", "driver"),
    "host_nics": ("driver", "driver"),
    "npu_smi": ("driver", "driver"),
    "pci": ("driver", "driver"),
    "bench_results": ("framework", "framework"),
    "probe": ("framework", "framework"),
    "serving_configs": ("framework", "framework"),
    "serving_logs": ("framework", "framework"),
    "host_tuning": ("host_tuning", "driver"),
    "mindie_configs": ("mindie", "framework"),
    "model_dirs": ("model_dirs", "framework"),
    "model_footprint": ("model_footprint", "framework"),
    "local_addresses": ("network", "driver"),
    "network": ("network", "driver"),
    "rank_table": ("network", "driver"),
    "serving_env": ("network", "driver"),
    "npu_boards": ("npu_details", "driver"),
    "npu_topo": ("npu_details", "driver"),
    "fallback_logs": ("operator", "operator"),
    "profiler": ("operator", "operator"),
    "net_view": ("serving_host", "driver"),
    "port_scan": ("serving_host", "driver"),
    "ray_view": ("serving_host", "driver"),
    "shm_mount": ("serving_host", "driver"),
    "mounts": ("storage", "driver"),
    "nvme": ("storage", "driver"),
    "weights_storage": ("storage", "driver"),
    "numa": ("topology", "driver"),
    "topology": ("topology", "driver"),
    "auditing_user": ("users", "driver"),
    "npu_users": ("users", "driver"),
    "service_user": ("users", "driver"),
    "user_db": ("users", "driver"),
    "version_files": ("versions", "driver"),
    "weights_integrity": ("weights_integrity", "framework"),
}
# gather module -> the facts its inventory() reads (it returns {} when none of them was gathered)
INVENTORY_READS: dict[str, tuple[str, ...]] = {
    "context_facts": ("container", "device_grant"),
    "driver": ("npu_smi",),
    "framework": ("probe", "serving_configs", "serving_logs"),
    "host_tuning": ("host_tuning",),
    "mindie": ("mindie_configs",),
    "network": ("network",),
    "npu_details": ("npu_topo",),
    "operator": ("profiler",),
    "serving_host": ("shm_mount",),
    "storage": ("nvme", "weights_storage"),
    "topology": ("topology", "pci"),
    "versions": ("version_files", "npu_boards"),
}


def gather_module(name: str) -> ModuleType:
    """One gather module by its short name, imported once."""
    return importlib.import_module(f"{__name__}.{name}")


def load_for_fact(name: str) -> None:
    """Import the module that gathers this fact (every module for a name not in the index)."""
    entry = FACT_MODULES.get(name)
    if entry is None:
        gather_modules()
    else:
        gather_module(entry[0])


def load_for_layer(layer: str) -> None:
    """Import every module with a gatherer of this layer."""
    for module in dict.fromkeys(m for m, lay in FACT_MODULES.values() if lay == layer):
        gather_module(module)


@cache
def gather_modules() -> tuple[ModuleType, ...]:
    """Every gather module, imported once."""
    import ascend_audit.gather as pkg

    return tuple(
        gather_module(info.name)
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name)
    )


def inventory_sections(facts: dict[str, Any]) -> list[dict[str, Any]]:
    """Each gather module's contribution to the report inventory (modules whose inventory
    reads none of these facts add nothing, so they are not imported)."""
    return [
        gather_module(module).inventory(facts)
        for module, reads in sorted(INVENTORY_READS.items())
        if any(name in facts for name in reads)
    ]
