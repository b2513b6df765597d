"""Rank tables (RANK_TABLE_FILE / hccl.json): v1.0, v1.2 super pod, legacy group_list, P/D lists.

`model` holds the dataclasses, `jsonc` the lenient JSON reader, `parse` one reader per layout,
`rules` the named consistency rules behind `problems_of`.
"""

from __future__ import annotations

from ascend_audit.facts.rank_table.jsonc import strip_json_comments
from ascend_audit.facts.rank_table.model import (
    RankDevice,
    RankServer,
    RankTable,
    SuperPod,
    devices_of_server,
)
from ascend_audit.facts.rank_table.parse import parse_rank_table
from ascend_audit.facts.rank_table.rules import problems_of

__all__ = [
    "RankDevice",
    "RankServer",
    "RankTable",
    "SuperPod",
    "devices_of_server",
    "parse_rank_table",
    "problems_of",
    "strip_json_comments",
]
