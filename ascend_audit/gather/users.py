"""Who audits, the node's user database, the service user, and who holds the NPUs.

Gathered once and recorded in snapshots (files through the Host, the auditing user through
`host.cached_fact`), so a replay gives the same verdicts whoever replays it. Apart from the
container facts (`context_facts`), which every run asks for, these are asked by driver checks only.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from ascend_audit.context import Context, gatherer
from ascend_audit.facts.npu_users import NPU_USERS, NpuUser, NpuUsers, parent_pid
from ascend_audit.facts.users import (
    AUDITING_USER,
    SERVICE_USER,
    USER_DB,
    AuditingUser,
    ServiceUser,
    UserDb,
    parse_user_db,
    service_user,
)


def _whoami() -> dict[str, Any]:
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    name = None
    try:
        import pwd

        name = pwd.getpwuid(uid).pw_name if uid is not None else None
    except (ImportError, KeyError):
        pass
    return {"uid": uid, "name": name}


@gatherer(AUDITING_USER, "driver")
def auditing_user(ctx: Context) -> AuditingUser:
    """Who runs the audit: computed live, kept by a recording, replayed from a snapshot."""
    live = ctx.host.kind == "live"
    got = ctx.host.cached_fact("auditing_user", _whoami)
    if not isinstance(got, dict):
        return AuditingUser(None, None, "not recorded in the snapshot")
    uid = got.get("uid")
    return AuditingUser(
        got.get("name") if isinstance(got.get("name"), str) else None,
        uid if isinstance(uid, int) and not isinstance(uid, bool) else None,
        "this process" if live else "snapshot",
    )


@gatherer(USER_DB, "driver")
def user_db(ctx: Context) -> UserDb:
    """The node's /etc/passwd and /etc/group (the sysroot's or the snapshot's)."""
    passwd, group = (ctx.host.read_text(p).text or "" for p in ("/etc/passwd", "/etc/group"))
    return parse_user_db(passwd, group)


@gatherer(SERVICE_USER, "driver")
def service_user_fact(ctx: Context) -> ServiceUser:
    """The policy's service user, else the auditing user, with its groups on the node."""
    from ascend_audit.facts.version_files import VERSION_FILES

    who = ctx.fact(AUDITING_USER)
    db = ctx.fact(USER_DB)
    name = ctx.policy["driver.service_user"] or who.name or db.user(who.uid)
    via = ""
    if name is None:  # a bundle recorded before the auditing user was: the driver's run user
        install = getattr(ctx.fact(VERSION_FILES), "install_info", None)
        name = install.parsed.user_name if install is not None and install.parsed else None
        via = f" ({who.source}; the driver's run user, /etc/ascend_install.info UserName)"
    if name is None:
        return ServiceUser("unknown", who.uid, source=who.source)
    found = service_user(db.passwd_text, db.group_text, name)
    if found:
        return replace(found, source=found.source + via) if via else found
    uid = 0 if name == "root" else (who.uid if name == who.name else None)
    return ServiceUser(name, uid, source="not in the node's /etc/passwd")


@gatherer(NPU_USERS, "driver")
def npu_users(ctx: Context) -> NpuUsers:
    """npu-smi's process rows, each marked as part of the serving process tree or not."""
    from ascend_audit.facts.driver_scan import NPU_SMI
    from ascend_audit.gather.framework import is_serving

    run = ctx.fact(NPU_SMI)
    info = run.info
    if info is None:
        return NpuUsers()
    try:
        procs = {p.pid: p for p in ctx.host.processes()}
        found_gaps = ctx.host.process_gaps()
    except Exception:
        procs, found_gaps = {}, []
    gaps = tuple(g.describe() for g in found_gaps)
    unanswered = {g.pid for g in found_gaps}
    serving = {pid for pid, p in procs.items() if is_serving(p)}

    def parent(pid: int) -> int | None:
        # The scan read every parent within its deadline; /proc/PID/stat is read only for a
        # table recorded without parents, never for a process that did not answer the scan.
        known = procs.get(pid)
        if known is not None and known.ppid is not None:
            return known.ppid
        if pid in unanswered:
            return None
        read = ctx.host.read_text(f"/proc/{pid}/stat")
        return parent_pid(read.text or "") if read.ok else None

    def in_tree(pid: int | None) -> bool:
        seen: set[int] = set()
        while pid is not None and pid > 1 and pid not in seen:
            if pid in serving:
                return True
            seen.add(pid)
            pid = parent(pid)
        return False

    users = []
    for p in info.processes:
        pid = p.container_pid if p.container_pid is not None else p.pid
        proc = procs.get(pid) if pid is not None else None
        users.append(
            NpuUser(
                p.npu_id,
                p.chip_id,
                p.pid,
                p.name,
                p.memory_mb,
                proc is not None,
                in_tree(pid),
                " ".join(proc.cmdline)[:200] if proc is not None else "",
            )
        )
    return NpuUsers(tuple(users), tuple(sorted(serving)), info.has_process_table, gaps)
