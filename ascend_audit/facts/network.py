"""RoCE network facts: hccn_tool answers per device, local addresses, the serving environment
and the rank table it names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ascend_audit.facts.keys import FactKey
from ascend_audit.host.base import CommandResult, FileRead
from ascend_audit.model import Evidence

if TYPE_CHECKING:
    from ascend_audit.facts.hccn import HccnConf
    from ascend_audit.facts.rank_table import RankTable


@dataclass(frozen=True)
class NetworkScan:
    """hccn_tool answers per device and subcommand, parsed, with /etc/hccn.conf beside them."""

    tool: str | None  # argv[0] used, None when hccn_tool is not on this node
    devices: tuple[int, ...]
    device_source: str  # "npu-smi" | "/dev/davinci*" | ""
    results: dict[tuple[int, str], CommandResult] = field(default_factory=dict)
    parsed: dict[str, dict[int, Any]] = field(default_factory=dict)  # sub -> device -> fact
    conf: HccnConf | None = None
    conf_read: FileRead | None = None

    def get(self, sub: str, device: int) -> Any:
        """The parsed answer of one device to one subcommand (None when it gave none)."""
        return self.parsed.get(sub, {}).get(device)

    def result(self, sub: str, device: int) -> CommandResult | None:
        return self.results.get((device, sub))

    def evidence(self, sub: str, lines: dict[int, str] | None = None, **values: Any) -> Evidence:
        """One evidence item for a subcommand over all devices: a line per device."""
        out = []
        for d in self.devices:
            res = self.result(sub, d)
            if lines is not None and d in lines:
                text = lines[d]
            elif res is None:
                text = "(not run)"
            else:
                raw = (res.stdout.strip() or res.stderr.strip() or res.describe()).splitlines()
                text = " | ".join(x.strip() for x in raw[:3]) + (" | …" if len(raw) > 3 else "")
            out.append(f"device {d}: {text}")
        devs = _span(self.devices)
        return Evidence("command", f"{self.tool} -i {devs} -{sub} -g", "\n".join(out), values)


def _span(devices: tuple[int, ...]) -> str:
    if devices and devices == tuple(range(devices[0], devices[-1] + 1)):
        return f"{{{devices[0]}..{devices[-1]}}}"
    return "{" + ",".join(str(d) for d in devices) + "}"


@dataclass(frozen=True)
class LocalAddresses:
    """IPv4 addresses this node owns (from /proc/net/fib_trie, sysroot-aware), and the hostname."""

    addresses: tuple[str, ...]
    hostname: str | None
    read_ok: bool


@dataclass(frozen=True)
class ServingEnv:
    """Environment the service runs with: a serving process's environ, else the audit's own."""

    env: dict[str, str]
    origin: str  # "process 123 (vllm serve …)" | "the audit's environment"
    pid: int | None = None
    # processes the scan could not read in time: the serving process may be one of them, so an
    # environment taken from elsewhere is not proven to be the service's
    table_gaps: tuple[str, ...] = ()


@dataclass(frozen=True)
class RankTableInput:
    """The rank table to judge: where it came from, its text, and the parsed table."""

    path: str | None
    origin: str  # "--rank-table" | "RANK_TABLE_FILE in process 12 (…)" | ""
    text: str | None = None
    error: str | None = None
    table: RankTable | None = None


NETWORK: FactKey[NetworkScan] = FactKey("network")
LOCAL_ADDRESSES: FactKey[LocalAddresses] = FactKey("local_addresses")
SERVING_ENV: FactKey[ServingEnv] = FactKey("serving_env")
RANK_TABLE: FactKey[RankTableInput] = FactKey("rank_table")
