"""Parsers for `hccn_tool -i N <sub> -g` outputs (one module per subcommand), pasted loops of
them (`loops`), /etc/hccn.conf (`conf`) and hccl_tools.py logs (`hccl_tools`)."""

from __future__ import annotations

from ascend_audit.facts.hccn.base import HCCN_ERRORS, NET_HEALTH_CODES
from ascend_audit.facts.hccn.conf import HccnConf, HccnConfDevice, parse_hccn_conf
from ascend_audit.facts.hccn.fec import DeviceFec, FecFacts, parse_fec
from ascend_audit.facts.hccn.gateway import DeviceGateway, GatewayFacts, parse_gateway
from ascend_audit.facts.hccn.hccl_tools import HcclToolsDevice, HcclToolsLog, parse_hccl_tools_log
from ascend_audit.facts.hccn.ip import DeviceIp, IpAddress, IpFacts, parse_ip
from ascend_audit.facts.hccn.link import DeviceLink, LinkFacts, parse_link
from ascend_audit.facts.hccn.link_stat import (
    DeviceLinkStat,
    LinkRecord,
    LinkStatFacts,
    parse_link_stat,
)
from ascend_audit.facts.hccn.lldp import LldpFacts, LldpNeighbour, parse_lldp
from ascend_audit.facts.hccn.loops import DeviceChunk, LoopSplit, split_loop_output
from ascend_audit.facts.hccn.net_health import DeviceNetHealth, NetHealthFacts, parse_net_health
from ascend_audit.facts.hccn.netdetect import DeviceNetdetect, NetdetectFacts, parse_netdetect
from ascend_audit.facts.hccn.optical import OpticalFacts, OpticalModule, parse_optical
from ascend_audit.facts.hccn.ping import DevicePing, PingFacts, parse_ping
from ascend_audit.facts.hccn.stat import DeviceStat, StatFacts, parse_stat
from ascend_audit.facts.hccn.tls import DeviceTls, TlsCert, TlsFacts, parse_tls

__all__ = [
    "HCCN_ERRORS",
    "NET_HEALTH_CODES",
    "DeviceChunk",
    "DeviceFec",
    "DeviceGateway",
    "DeviceIp",
    "DeviceLink",
    "DeviceLinkStat",
    "DeviceNetHealth",
    "DeviceNetdetect",
    "DevicePing",
    "DeviceStat",
    "DeviceTls",
    "FecFacts",
    "GatewayFacts",
    "HcclToolsDevice",
    "HcclToolsLog",
    "HccnConf",
    "HccnConfDevice",
    "IpAddress",
    "IpFacts",
    "LinkFacts",
    "LinkRecord",
    "LinkStatFacts",
    "LldpFacts",
    "LldpNeighbour",
    "LoopSplit",
    "NetHealthFacts",
    "NetdetectFacts",
    "OpticalFacts",
    "OpticalModule",
    "PingFacts",
    "StatFacts",
    "TlsCert",
    "TlsFacts",
    "parse_fec",
    "parse_gateway",
    "parse_hccl_tools_log",
    "parse_hccn_conf",
    "parse_ip",
    "parse_link",
    "parse_link_stat",
    "parse_lldp",
    "parse_net_health",
    "parse_netdetect",
    "parse_optical",
    "parse_ping",
    "parse_stat",
    "parse_tls",
    "split_loop_output",
]
