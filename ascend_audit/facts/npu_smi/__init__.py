"""Parsers for npu-smi outputs, one module a command: info, kv (board/health/…), mapping, topo."""

from __future__ import annotations

from ascend_audit.facts.npu_smi._text import normalize_bus_id
from ascend_audit.facts.npu_smi.info import NpuChip, NpuProcess, NpuSmiInfo, parse_info
from ascend_audit.facts.npu_smi.kv import KvBlock, NpuSmiKv, parse_kv
from ascend_audit.facts.npu_smi.mapping import MappingRow, NpuMapping, parse_mapping
from ascend_audit.facts.npu_smi.topo import NpuTopo, TopoLink, parse_affinity, parse_topo

__all__ = [
    "KvBlock",
    "MappingRow",
    "NpuChip",
    "NpuMapping",
    "NpuProcess",
    "NpuSmiInfo",
    "NpuSmiKv",
    "NpuTopo",
    "TopoLink",
    "normalize_bus_id",
    "parse_affinity",
    "parse_info",
    "parse_kv",
    "parse_mapping",
    "parse_topo",
]
