"""A bundle replays to the same results whoever replays it (issue 15 item 1, issue 13 item 5).

The auditing user is a gathered fact recorded in the bundle (`cached_facts.auditing_user`); the
/dev owners are named with the bundle's own /etc/passwd and /etc/group. The replay runs once as
root and once in a forked child that dropped to uid/gid 65534 (nobody), which must agree.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from ascend_audit.examples_index import example_path

EXAMPLE = "atlas-800t-a2-ready"


def replay(name: str = EXAMPLE) -> list[list[Any]]:
    """(check id, status, summary) of every result of replaying a bundled example."""
    from ascend_audit.context import Context, Inputs
    from ascend_audit.engine import Selection, run_audit
    from ascend_audit.host.snapshot import SnapshotHost
    from ascend_audit.inventory import build_inventory
    from ascend_audit.policy import parse_policy
    from ascend_audit.registry import load_registry

    host = SnapshotHost(example_path(name))
    inputs = Inputs.from_dict(host.manifest.get("run_inputs") or {})
    ctx = Context(host, parse_policy(host.policy_text() or ""), inputs)
    report = run_audit(
        load_registry(entry_points=False), ctx, Selection(), inventory=build_inventory
    )
    return [[r.id, r.status.value, r.summary] for r in report.results]


def replay_as(uid: int) -> list[list[Any]]:
    """The same replay in a child process running as UID (every module already imported)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop to uid, replay, send the results, exit without cleanup
        code = 1
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            data = json.dumps({"uid": os.geteuid(), "results": replay()}).encode()
            with os.fdopen(write_end, "wb") as fh:
                fh.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as fh:
        raw = fh.read()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "the child replay failed"
    got = json.loads(raw)
    assert got["uid"] == uid
    return got["results"]


def test_bundle_records_who_audited():
    with open(os.path.join(example_path(EXAMPLE), "manifest.json"), encoding="utf-8") as fh:
        manifest = json.load(fh)
    assert manifest["cached_facts"]["auditing_user"] == {"name": "root", "uid": 0}


@pytest.mark.skipif(not hasattr(os, "fork") or os.geteuid() != 0, reason="needs root to drop uid")
def test_replay_as_nobody_gives_the_same_results():
    as_root = replay()
    dev = next(r for r in as_root if r[0] == "DRV-DEV-001")
    assert dev[1] == "PASS", dev
    assert replay_as(65534) == as_root
