"""Directory listings are bounded: a process holding a huge number of fds (a hostile local user
can open a million) or a /proc crowded with pids is listed only as far as the scan will look,
so the socket-owner search reads a bounded number of names, not the whole directory."""

from __future__ import annotations

from ascend_audit.context import Context
from ascend_audit.gather import serving_host
from ascend_audit.host.live import LiveHost
from ascend_audit.policy import parse_policy
from ascend_audit.safe_io import listdir_in_root


def test_a_limited_listing_stops_at_the_limit(tmp_path):
    d = tmp_path / "proc" / "7" / "fd"
    d.mkdir(parents=True)
    for i in range(3000):
        (d / str(i)).touch()
    assert len(listdir_in_root(str(tmp_path), "/proc/7/fd", 100)) == 100
    assert len(listdir_in_root(str(tmp_path), "/proc/7/fd")) == 3000
    host = LiveHost(str(tmp_path))
    names = host.listdir("/proc/7/fd", limit=250)
    assert names is not None and len(names) == 250 and names == sorted(names)
    assert host.listdir("/proc/7/fd", limit=0) == []


class _CountingHost(LiveHost):
    """Records the limit each listing was asked with."""

    def __init__(self, root: str) -> None:
        super().__init__(root)
        self.asked: list[tuple[str, int | None]] = []

    def listdir(self, path: str, limit: int | None = None) -> list[str] | None:
        self.asked.append((path, limit))
        return super().listdir(path, limit)

    def processes(self):  # type: ignore[override]
        return []


def test_socket_owner_search_lists_within_its_fd_budget(tmp_path, monkeypatch):
    monkeypatch.setattr(serving_host, "MAX_FDS", 40)
    for pid in (11, 12):
        fd = tmp_path / "proc" / str(pid) / "fd"
        fd.mkdir(parents=True)
        for i in range(30):
            (fd / str(i)).symlink_to(f"pipe:[{pid * 100 + i}]")
    host = _CountingHost(str(tmp_path))
    ctx = Context(host, parse_policy(""))
    owners, unreadable = serving_host.find_owners(ctx, {999999})
    assert owners == {} and unreadable == 0
    assert ("/proc/11/fd", 40) in host.asked and ("/proc/12/fd", 10) in host.asked
    assert all(limit is not None for _path, limit in host.asked)  # /proc itself too
