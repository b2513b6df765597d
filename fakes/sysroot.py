"""Fake sysroot trees for tests: write a node's /sys, /proc, /dev, /etc from a dict, and read it."""

from __future__ import annotations

import os
import stat as stat_mod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ascend_audit.host.base import FileRead, StatInfo

# ---------------------------------------------------------------------------------------------
# tree spec


@dataclass(frozen=True)
class Link:
    """A symlink with this target, written exactly as given (relative, like real sysfs)."""

    target: str


@dataclass(frozen=True)
class Dir:
    """An (empty) directory."""


DIR = Dir()


def local(root: str | Path, node_path: str) -> Path:
    """Local path of a node path under root."""
    return Path(root) / node_path.lstrip("/")


def write_tree(root: str | Path, spec: Mapping[str, str | bytes | Link | Dir]) -> None:
    """Write files (str/bytes written verbatim), symlinks (Link) and dirs (DIR) under root."""
    for node_path, value in spec.items():
        p = local(root, node_path)
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(value, Dir):
            p.mkdir(parents=True, exist_ok=True)
        elif isinstance(value, Link):
            if p.is_symlink() or p.exists():
                p.unlink()
            os.symlink(value.target, p)
        elif isinstance(value, bytes):
            p.write_bytes(value)
        else:
            p.write_text(value, encoding="utf-8")


def attrs(directory: str, **values: Any) -> dict[str, str]:
    """sysfs attribute files under directory, each value followed by the kernel's newline."""
    return {f"{directory}/{k}": f"{v}\n" for k, v in values.items()}


# ---------------------------------------------------------------------------------------------
# a tiny reader with the Host's file primitives


def char_device(owner: str = "HwHiAiUser", uid: int = 1000, mode: int = 0o660) -> StatInfo:
    """A character device node's stat, for ownership shims (tests cannot chown or mknod)."""
    return StatInfo(stat_mod.S_IFCHR | mode, uid, uid, owner, owner, "char")


class DirReader:
    """Resolves node paths under a local root; records every path read."""

    def __init__(
        self,
        root: str | Path,
        *,
        errors: Mapping[str, str] | None = None,
        stats: Mapping[str, StatInfo] | None = None,
    ) -> None:
        self.root = os.path.realpath(root)
        self.errors = dict(errors or {})  # node path -> error string read_text returns
        self.stats = dict(stats or {})  # node path -> StatInfo overriding os.stat
        self.reads: list[str] = []

    def _local(self, path: str) -> str:
        return os.path.join(self.root, os.path.normpath("/" + path).lstrip("/"))

    def read_text(self, path: str) -> FileRead:
        self.reads.append(path)
        if path in self.errors:
            return FileRead(path, None, self.errors[path])
        try:
            with open(self._local(path), "rb") as fh:
                return FileRead(path, fh.read().decode("utf-8", errors="replace"))
        except OSError as exc:
            return FileRead(path, None, exc.strerror or type(exc).__name__)

    def listdir(self, path: str, limit: int | None = None) -> list[str] | None:
        try:
            return sorted(os.listdir(self._local(path)))[:limit]
        except OSError:
            return None

    def realpath(self, path: str) -> str:
        real = os.path.realpath(self._local(path))
        if real == self.root:
            return "/"
        if real.startswith(self.root + os.sep):
            return real[len(self.root) :]
        return path  # escaped the root: report the path unresolved

    def readlink(self, path: str) -> str | None:
        try:
            return os.readlink(self._local(path))
        except OSError:
            return None

    def exists(self, path: str) -> bool:
        return path in self.stats or os.path.exists(self._local(path))

    def stat(self, path: str) -> StatInfo | None:
        if path in self.stats:
            return self.stats[path]
        try:
            st = os.stat(self._local(path))
        except OSError:
            return None
        kind = "dir" if stat_mod.S_ISDIR(st.st_mode) else "file"
        if stat_mod.S_ISCHR(st.st_mode):
            kind = "char"
        return StatInfo(st.st_mode, st.st_uid, st.st_gid, str(st.st_uid), str(st.st_gid), kind)


# ---------------------------------------------------------------------------------------------
# ready-made nodes


NPU_BDFS = (
    "0000:01:00.0",
    "0000:02:00.0",
    "0000:41:00.0",
    "0000:42:00.0",
    "0000:81:00.0",
    "0000:82:00.0",
    "0000:c1:00.0",
    "0000:c2:00.0",
)
NODE_CPUS = {0: "0-95", 1: "96-191"}
DAVINCI_MAJOR = 236
WEIGHTS_NQN = "nqn.2014-08.org.example:weights"
LOCAL_NVME_BDF = "0000:83:00.0"
RDMA_NIC_BDF = "0000:84:00.0"


@dataclass
class BuiltNode:
    """A written fake node: where it is, the stat shims for /dev, and what the tree holds."""

    root: Path
    stats: dict[str, StatInfo] = field(default_factory=dict)
    npu_bdfs: tuple[str, ...] = ()
    davinci: tuple[int, ...] = ()
    downtrained_bdf: str | None = None
    models_kind: str = "nvme-of"

    def reader(self, **kwargs: Any) -> DirReader:
        return DirReader(self.root, stats=self.stats, **kwargs)


def _root_port(bdf: str, slot: int) -> tuple[str, str]:
    """(root complex dir, root port BDF) for an endpoint: one root port per slot."""
    bus = int(bdf.split(":")[1], 16)
    base = bus & 0xC0
    return f"pci0000:{base:02x}", f"0000:{base:02x}:{slot:02x}.0"


def _pci_function(
    complex_dir: str,
    port: str,
    bdf: str,
    *,
    port_link: tuple[str, int],
    **values: Any,
) -> dict[str, Any]:
    port_dir = f"/sys/devices/{complex_dir}/{port}"
    dev_dir = f"{port_dir}/{bdf}"
    spec: dict[str, Any] = {}
    spec.update(
        attrs(
            port_dir,
            vendor="0x19e5",
            device="0xa120",
            **{"class": "0x060400"},
            numa_node=values.get("numa_node", "-1"),
            current_link_speed=port_link[0],
            current_link_width=port_link[1],
            max_link_speed="16.0 GT/s PCIe",
            max_link_width=16,
        )
    )
    spec.update(attrs(dev_dir, **values))
    spec[f"/sys/bus/pci/devices/{port}"] = Link(f"../../../devices/{complex_dir}/{port}")
    spec[f"/sys/bus/pci/devices/{bdf}"] = Link(f"../../../devices/{complex_dir}/{port}/{bdf}")
    return spec


def _driver_info(version: str, inner: str, fw_range: str) -> str:
    return (
        f"Version={version}\n"
        "ascendhal_version=7.35.23\n"
        "aicpu_version=1.0\n"
        "tdt_version=1.0\n"
        "log_version=1.0\n"
        "prof_version=2.0\n"
        "dvppkernels_version=1.1\n"
        "tsfw_version=1.0\n"
        f"Innerversion={inner}\n"
        "compatible_version=[V100R001C30],[V100R001C13],[V100R001C15],[V100R001C17],"
        "[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21]\n"
        f"compatible_version_fw={fw_range}\n"
        f"package_version={version}\n"
    )


def _firmware_info(version: str, package: str, drv_ranges: str) -> str:
    return (
        f"Version={version}\n"
        "firmware_version=1.0\n"
        f"package_version={package}\n"
        f"compatible_version_drv={drv_ranges}\n"
    )


def healthy_910b_node(
    root: str | Path,
    *,
    all_optimized: bool = True,
    missing_chip: bool = False,
    downtrained: bool = False,
    version_mismatch: bool = False,
    weights_on_nfs: bool = False,
) -> BuiltNode:
    """An 8 x 910B (d802) node on 2 NUMA nodes with NVMe-oF weights, written under root."""
    # Variants: all_optimized=False makes the second multipath path `non-optimized`;
    # missing_chip keeps 8 PCI functions but only 7 davinci nodes (davinci7 absent);
    # downtrained trains NPU 3's link (and its root port) at x8 / 8 GT/s; version_mismatch
    # writes driver 25.0.rc1.1 against firmware 7.1.0.11.220 whose drv ranges exclude it;
    # weights_on_nfs mounts /models from nfs4 instead of the NVMe-oF namespace.
    root = Path(root)
    spec: dict[str, Any] = {}

    # NUMA and CPUs
    spec["/sys/devices/system/node/online"] = "0-1\n"
    spec["/sys/devices/system/node/possible"] = "0-1\n"
    for node, cpus in NODE_CPUS.items():
        spec[f"/sys/devices/system/node/node{node}/cpulist"] = f"{cpus}\n"
    spec["/sys/devices/system/cpu/online"] = "0-191\n"
    spec["/sys/devices/system/cpu/possible"] = "0-191\n"

    # NPUs
    spec["/sys/bus/pci/drivers/devdrv_device_driver"] = DIR
    downtrained_bdf = NPU_BDFS[3] if downtrained else None
    for i, bdf in enumerate(NPU_BDFS):
        node = 0 if i < 4 else 1
        complex_dir, port = _root_port(bdf, 1 + i % 2)
        slow = bdf == downtrained_bdf
        speed, width = ("8.0 GT/s PCIe", 8) if slow else ("16.0 GT/s PCIe", 16)
        spec.update(
            _pci_function(
                complex_dir,
                port,
                bdf,
                port_link=(speed, width),
                vendor="0x19e5",
                device="0xd802",
                **{"class": "0x120000"},
                subsystem_vendor="0x0200",
                subsystem_device="0x0100",
                revision="0x20",
                numa_node=node,
                local_cpulist=NODE_CPUS[node],
                current_link_speed=speed,
                current_link_width=width,
                max_link_speed="16.0 GT/s PCIe",
                max_link_width=16,
                chip_id=0,
                dev_id=i,
            )
        )
        spec[f"/sys/devices/{complex_dir}/{port}/{bdf}/driver"] = Link(
            "../../../../bus/pci/drivers/devdrv_device_driver"
        )

    davinci = tuple(range(7)) if missing_chip else tuple(range(8))
    stats: dict[str, StatInfo] = {}
    for i in davinci:
        spec[f"/sys/class/devdrv-class/davinci{i}"] = Link(
            f"../../devices/virtual/devdrv-class/davinci{i}"
        )
        spec[f"/sys/devices/virtual/devdrv-class/davinci{i}/dev"] = f"{DAVINCI_MAJOR}:{i}\n"
        spec[f"/dev/davinci{i}"] = ""
        stats[f"/dev/davinci{i}"] = char_device()
    for name in ("davinci_manager", "devmm_svm", "hisi_hdc"):
        spec[f"/dev/{name}"] = ""
        stats[f"/dev/{name}"] = char_device()
    spec["/proc/devices"] = (
        "Character devices:\n  1 mem\n  4 /dev/vc/0\n  5 /dev/tty\n"
        f"{DAVINCI_MAJOR} devdrv-cdev\n237 devmm_svm\n238 hisi_hdc\n\n"
        "Block devices:\n  8 sd\n  9 md\n253 device-mapper\n259 blkext\n"
    )
    spec["/proc/modules"] = "".join(
        f"{name} {size} {refs} - Live 0x0000000000000000 (OE)\n"
        for name, size, refs in (
            ("drv_devmng_host", 262144, 3),
            ("drv_pcie_hdc_host", 131072, 1),
            ("drv_pcie_host", 524288, 4),
            ("ascend_queue", 65536, 0),
            ("asdrv_fms", 196608, 1),
            ("asdrv_vpc", 65536, 0),
        )
    ) + (
        "nvme_rdma 53248 2 - Live 0x0000000000000000\n"
        "nvme_fabrics 36864 1 nvme_rdma, Live 0x0000000000000000\n"
        "nvme 57344 2 - Live 0x0000000000000000\n"
        "nvme_core 212992 5 nvme_rdma,nvme_fabrics,nvme, Live 0x0000000000000000\n"
        "mlx5_ib 475136 0 - Live 0x0000000000000000\n"
        "mlx5_core 2060288 1 mlx5_ib, Live 0x0000000000000000\n"
    )

    # Local PCIe NVMe (boot disk), laid out like the real libnvme tree-pcie capture.
    nvme_port_dir = "/sys/devices/pci0000:80/0000:80:03.0"
    nvme_dir = f"{nvme_port_dir}/{LOCAL_NVME_BDF}"
    spec.update(
        _pci_function(
            "pci0000:80",
            "0000:80:03.0",
            LOCAL_NVME_BDF,
            port_link=("16.0 GT/s PCIe", 4),
            vendor="0x144d",
            device="0xa80e",
            **{"class": "0x010802"},
            numa_node=1,
            local_cpulist=NODE_CPUS[1],
            current_link_speed="16.0 GT/s PCIe",
            current_link_width=4,
            max_link_speed="16.0 GT/s PCIe",
            max_link_width=4,
        )
    )
    ctrl0 = f"{nvme_dir}/nvme/nvme0"
    spec.update(
        attrs(
            ctrl0,
            address=LOCAL_NVME_BDF,
            cntlid=129,
            cntrltype="io",
            dev="241:0",
            firmware_rev="GDC5902Q",
            kato=0,
            model="3.84TB NVMe Gen4 U.2 boot SSD".ljust(40),
            numa_node=1,
            queue_count=65,
            serial="S6EWNA0T100211".ljust(20),
            sqsize=1023,
            state="live",
            subsysnqn="nqn.1994-11.com.samsung:nvme:PM9A3:2.5-inch:S6EWNA0T100211".ljust(64),
            transport="pcie",
        )
    )
    spec.update(
        attrs(
            f"{ctrl0}/nvme0n1",
            dev="259:0",
            nsid=1,
            size=7501476528,
            wwid="eui.36344730529002110025384500000001",
        )
    )
    spec[f"{ctrl0}/nvme0n1/numa_nodes"] = "\n"
    spec[f"{ctrl0}/nvme0n1/queue_depth"] = ""
    spec.update(attrs(f"{ctrl0}/nvme0n1/nvme0n1p1", dev="259:4", partition=1, size=2097152))
    spec.update(attrs(f"{ctrl0}/nvme0n1/nvme0n1p2", dev="259:5", partition=2, size=7499377664))
    spec["/sys/class/nvme/nvme0"] = Link(
        f"../../devices/pci0000:80/0000:80:03.0/{LOCAL_NVME_BDF}/nvme/nvme0"
    )
    spec.update(
        attrs(
            "/sys/devices/virtual/nvme-subsystem/nvme-subsys0",
            firmware_rev="GDC5902Q",
            iopolicy="numa",
            model="3.84TB NVMe Gen4 U.2 boot SSD".ljust(40),
            serial="S6EWNA0T100211".ljust(20),
            subsysnqn="nqn.1994-11.com.samsung:nvme:PM9A3:2.5-inch:S6EWNA0T100211".ljust(64),
            subsystype="nvm",
        )
    )
    spec["/sys/devices/virtual/nvme-subsystem/nvme-subsys0/nvme0"] = Link(
        f"../../../pci0000:80/0000:80:03.0/{LOCAL_NVME_BDF}/nvme/nvme0"
    )
    spec["/sys/class/nvme-subsystem/nvme-subsys0"] = Link(
        "../../devices/virtual/nvme-subsystem/nvme-subsys0"
    )
    nvme0n1 = f"../devices/pci0000:80/0000:80:03.0/{LOCAL_NVME_BDF}/nvme/nvme0/nvme0n1"
    spec["/sys/block/nvme0n1"] = Link(nvme0n1)
    for name, dev in (("nvme0n1", "259:0"), ("nvme0n1p1", "259:4"), ("nvme0n1p2", "259:5")):
        sub = nvme0n1 if name == "nvme0n1" else f"{nvme0n1}/{name}"
        spec[f"/sys/class/block/{name}"] = Link(f"../{sub}")
        spec[f"/sys/dev/block/{dev}"] = Link(f"../{sub}")

    # NVMe-oF over RDMA: one subsystem, two namespaces, two controllers (paths).
    fab = "/sys/devices/virtual/nvme-fabrics/ctl"
    spec["/sys/class/nvme-fabrics/ctl"] = Link("../../devices/virtual/nvme-fabrics/ctl")
    subsys1 = "/sys/devices/virtual/nvme-subsystem/nvme-subsys1"
    for c, (cname, traddr) in enumerate(
        (("nvme1", "192.168.10.20"), ("nvme2", "192.168.11.20")), 1
    ):
        spec.update(
            attrs(
                f"{fab}/{cname}",
                transport="rdma",
                address=f"traddr={traddr},trsvcid=4420",
                state="live",
                subsysnqn=WEIGHTS_NQN,
                hostnqn="nqn.2014-08.org.nvmexpress:uuid:4c4c4544-0051-3510-8057-b3c04f4e3233",
                hostid="4c4c4544-0051-3510-8057-b3c04f4e3233",
                cntlid=c,
                numa_node=-1,
                model="Weights Array NVMe-oF".ljust(40),
                serial="WA0019283746".ljust(20),
                firmware_rev="6.2.0.1 ",
                kato=5,
                queue_count=33,
                sqsize=127,
                ctrl_loss_tmo=600,
                reconnect_delay=10,
                dev=f"241:{c}",
            )
        )
        spec[f"/sys/class/nvme/{cname}"] = Link(f"../../devices/virtual/nvme-fabrics/ctl/{cname}")
        spec[f"{subsys1}/{cname}"] = Link(f"../../nvme-fabrics/ctl/{cname}")
        for ns in (1, 2):
            optimized = all_optimized or c == 1
            spec.update(
                attrs(
                    f"{fab}/{cname}/nvme1c{c}n{ns}",
                    ana_state="optimized" if optimized else "non-optimized",
                    ana_grpid=1,
                    numa_nodes="0-1",
                    nsid=ns,
                    size=15002931888,
                    wwid=f"uuid.7f1c0e5a-33a8-4f0b-9d1e-0000000000{ns:02d}",
                )
            )
            spec[f"{fab}/{cname}/nvme1c{c}n{ns}/hidden"] = "1\n"
    spec.update(
        attrs(
            subsys1,
            subsysnqn=WEIGHTS_NQN,
            model="Weights Array NVMe-oF".ljust(40),
            serial="WA0019283746".ljust(20),
            firmware_rev="6.2.0.1 ",
            iopolicy="numa",
            subsystype="nvm",
        )
    )
    spec["/sys/class/nvme-subsystem/nvme-subsys1"] = Link(
        "../../devices/virtual/nvme-subsystem/nvme-subsys1"
    )
    for ns in (1, 2):
        head = f"nvme1n{ns}"
        spec.update(
            attrs(
                f"{subsys1}/{head}",
                dev=f"259:{ns}",
                nsid=ns,
                size=15002931888,
                wwid=f"uuid.7f1c0e5a-33a8-4f0b-9d1e-0000000000{ns:02d}",
            )
        )
        target = f"devices/virtual/nvme-subsystem/nvme-subsys1/{head}"
        spec[f"/sys/block/{head}"] = Link(f"../{target}")
        spec[f"/sys/class/block/{head}"] = Link(f"../../{target}")
        spec[f"/sys/dev/block/259:{ns}"] = Link(f"../../{target}")
    spec["/sys/module/nvme_core/parameters/multipath"] = "Y\n"

    # RDMA NIC on NUMA node 1
    spec.update(
        _pci_function(
            "pci0000:80",
            "0000:80:04.0",
            RDMA_NIC_BDF,
            port_link=("16.0 GT/s PCIe", 16),
            vendor="0x15b3",
            device="0x101b",
            **{"class": "0x020700"},
            numa_node=1,
            local_cpulist=NODE_CPUS[1],
            current_link_speed="16.0 GT/s PCIe",
            current_link_width=16,
            max_link_speed="16.0 GT/s PCIe",
            max_link_width=16,
        )
    )
    nic_dir = f"pci0000:80/0000:80:04.0/{RDMA_NIC_BDF}"
    spec[f"/sys/devices/{nic_dir}/driver"] = Link("../../../../bus/pci/drivers/mlx5_core")
    spec["/sys/bus/pci/drivers/mlx5_core"] = DIR
    spec.update(attrs(f"/sys/devices/{nic_dir}/net/ib0", operstate="up", speed=200000, mtu=4092))
    spec[f"/sys/devices/{nic_dir}/net/ib0/device"] = Link("../../../" + RDMA_NIC_BDF)
    spec["/sys/class/net/ib0"] = Link(f"../../devices/{nic_dir}/net/ib0")
    spec.update(attrs(f"/sys/devices/{nic_dir}/infiniband/mlx5_0", node_type="1: CA"))
    spec[f"/sys/devices/{nic_dir}/infiniband/mlx5_0/device"] = Link("../../../" + RDMA_NIC_BDF)
    spec["/sys/class/infiniband/mlx5_0"] = Link(f"../../devices/{nic_dir}/infiniband/mlx5_0")
    spec.update(attrs("/sys/devices/virtual/net/lo", operstate="unknown", mtu=65536))
    spec["/sys/class/net/lo"] = Link("../../devices/virtual/net/lo")

    # Mounts
    models_line_info = (
        "120 29 259:1 / /models rw,relatime shared:60 - xfs /dev/nvme1n1 "
        "rw,attr2,inode64,logbufs=8,logbsize=32k,noquota"
    )
    models_line_mounts = "/dev/nvme1n1 /models xfs rw,relatime,attr2,inode64,noquota 0 0"
    if weights_on_nfs:
        nfs_opts = (
            "rw,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,hard,proto=tcp,timeo=600,"
            "retrans=2,sec=sys,clientaddr=10.1.24.10,local_lock=none,addr=10.1.24.251"
        )
        models_line_info = (
            f"120 29 0:56 / /models rw,relatime shared:60 - nfs4 10.1.24.251:/weights {nfs_opts}"
        )
        models_line_mounts = (
            f"10.1.24.251:/weights /models nfs4 {nfs_opts.replace('rw,', 'rw,relatime,', 1)} 0 0"
        )
    datasets_opts = (
        "rw,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,hard,proto=tcp,timeo=600,"
        "retrans=2,sec=sys,clientaddr=10.1.24.10,local_lock=none,addr=10.1.24.250"
    )
    mountinfo = "\n".join(
        (
            "29 1 259:5 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro",
            "22 29 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw",
            "23 29 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw",
            "24 29 0:5 / /dev rw,nosuid,relatime shared:2 - devtmpfs udev "
            "rw,size=527483008k,nr_inodes=131870752,mode=755",
            "25 29 0:25 / /run rw,nosuid,nodev,noexec,relatime shared:5 - tmpfs tmpfs "
            "rw,size=105500000k,mode=755",
            "30 29 259:4 / /boot/efi rw,relatime shared:30 - vfat /dev/nvme0n1p1 "
            "rw,fmask=0077,dmask=0077,codepage=437,iocharset=iso8859-1,shortname=mixed,errors=remount-ro",
            models_line_info,
            "121 29 0:55 / /datasets rw,relatime shared:61 - nfs4 10.1.24.250:/nfs "
            + datasets_opts,
        )
    )
    mounts = "\n".join(
        (
            "/dev/nvme0n1p2 / ext4 rw,relatime,errors=remount-ro 0 0",
            "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0",
            "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0",
            "udev /dev devtmpfs rw,nosuid,relatime,size=527483008k,nr_inodes=131870752 0 0",
            "tmpfs /run tmpfs rw,nosuid,nodev,noexec,relatime,size=105500000k,mode=755 0 0",
            "/dev/nvme0n1p1 /boot/efi vfat rw,relatime,fmask=0077,dmask=0077 0 0",
            models_line_mounts,
            "10.1.24.250:/nfs /datasets nfs4 "
            + datasets_opts.replace("rw,", "rw,relatime,", 1)
            + " 0 0",
        )
    )
    spec["/proc/self/mountinfo"] = mountinfo + "\n"
    spec["/proc/mounts"] = mounts + "\n"
    spec["/proc/filesystems"] = (
        "nodev\tsysfs\nnodev\ttmpfs\nnodev\tproc\nnodev\tdevtmpfs\n\text4\n\tvfat\n\txfs\n"
        "nodev\tnfs\nnodev\tnfs4\n"
    )
    spec["/models"] = DIR
    spec["/datasets"] = DIR

    # Driver, firmware, CANN
    if version_mismatch:
        spec["/usr/local/Ascend/driver/version.info"] = _driver_info(
            "25.0.rc1.1", "V100R001C21SPC001B231", "[7.0.0,7.7.99]"
        )
        spec["/usr/local/Ascend/firmware/version.info"] = _firmware_info(
            "7.1.0.11.220", "23.0.7", "[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.]"
        )
    else:
        spec["/usr/local/Ascend/driver/version.info"] = _driver_info(
            "24.1.rc3", "V100R001C19SPC002B224", "[7.0.0,7.5.99]"
        )
        spec["/usr/local/Ascend/firmware/version.info"] = _firmware_info(
            "7.5.0.1.129", "24.1.rc3", "[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.]"
        )
    toolkit = "/usr/local/Ascend/ascend-toolkit"
    spec[f"{toolkit}/8.0.0/aarch64-linux/ascend_toolkit_install.info"] = (
        "package_name=Ascend-cann-toolkit\n"
        "version=8.0.0\n"
        "innerversion=V100R001C20SPC002B103\n"
        "compatible_version=[V100R001C15],[V100R001C17],[V100R001C18],[V100R001C19],"
        "[V100R001C20],[V100R001C21]\n"
        "arch=aarch64\n"
        "os=linux\n"
        f"path={toolkit}/8.0.0/aarch64-linux\n"
    )
    spec[f"{toolkit}/latest"] = Link("8.0.0")
    spec["/etc/ascend_install.info"] = (
        "UserName=HwHiAiUser\n"
        "UserGroup=HwHiAiUser\n"
        "Firmware_Install_Type=full\n"
        "Firmware_Install_Path_Param=/usr/local/Ascend\n"
        "Driver_Install_Type=full\n"
        "Driver_Install_Path_Param=/usr/local/Ascend\n"
        "Driver_Install_For_All=yes\n"
    )
    spec["/lib/davinci.conf"] = "DAVINCI_HOME_PATH=/usr/local/Ascend\n"

    write_tree(root, spec)
    for name in [f"davinci{i}" for i in davinci] + ["davinci_manager", "devmm_svm", "hisi_hdc"]:
        os.chmod(local(root, f"/dev/{name}"), 0o660)
    return BuiltNode(
        root=root,
        stats=stats,
        npu_bdfs=NPU_BDFS,
        davinci=davinci,
        downtrained_bdf=downtrained_bdf,
        models_kind="nfs" if weights_on_nfs else "nvme-of",
    )
