"""The node's users: /etc/passwd and /etc/group text read into names, uids and group memberships."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.keys import FactKey


@dataclass(frozen=True)
class ServiceUser:
    """Who the service runs as, and the groups that grant it access."""

    name: str
    uid: int | None = None
    groups: frozenset[str] = frozenset()
    gids: frozenset[int] = frozenset()
    source: str = "unknown"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "uid": self.uid,
            "groups": sorted(self.groups),
            "gids": sorted(self.gids),
            "source": self.source,
        }


@dataclass(frozen=True)
class AuditingUser:
    """The user the audit ran as (recorded in snapshots, so a replay judges for the same user)."""

    name: str | None
    uid: int | None
    source: str  # "this process" | "snapshot" | "not recorded in the snapshot"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "uid": self.uid, "source": self.source}


@dataclass(frozen=True)
class UserDb:
    """uid -> name and gid -> name from the node's /etc/passwd and /etc/group."""

    users: dict[int, str]
    groups: dict[int, str]
    passwd_text: str = ""
    group_text: str = ""

    def user(self, uid: int | None) -> str | None:
        return None if uid is None else self.users.get(uid)

    def group(self, gid: int | None) -> str | None:
        return None if gid is None else self.groups.get(gid)


def _ids(text: str) -> dict[int, str]:
    out: dict[int, str] = {}
    for ln in (text or "").splitlines():
        f = ln.split(":")
        if len(f) >= 3 and f[0] and f[2].isdigit():
            out.setdefault(int(f[2]), f[0])
    return out


def parse_user_db(passwd: str, group: str) -> UserDb:
    """The node's uid and gid names (malformed lines are skipped)."""
    return UserDb(_ids(passwd), _ids(group), passwd or "", group or "")


def service_user(passwd: str, group: str, name: str) -> ServiceUser | None:
    """NAME's uid and groups from /etc/passwd and /etc/group text; None when not listed."""
    entry = next((ln.split(":") for ln in passwd.splitlines() if ln.split(":")[0] == name), None)
    if entry is None or len(entry) < 4 or not entry[2].isdigit() or not entry[3].isdigit():
        return None
    primary = int(entry[3])
    names, gids = set(), {primary}
    for ln in group.splitlines():
        f = ln.split(":")
        if len(f) >= 4 and f[2].isdigit() and (int(f[2]) == primary or name in f[3].split(",")):
            names.add(f[0])
            gids.add(int(f[2]))
    return ServiceUser(name, int(entry[2]), frozenset(names), frozenset(gids), "/etc/passwd")


AUDITING_USER: FactKey[AuditingUser] = FactKey("auditing_user")
USER_DB: FactKey[UserDb] = FactKey("user_db")
SERVICE_USER: FactKey[ServiceUser] = FactKey("service_user")
