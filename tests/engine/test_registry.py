"""Registry: built-ins, entry-point plug-ins, --checks-dir drop-ins, refusal of bad checks."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from ascend_audit.registry import RegistryError, load_registry

PLUGIN = textwrap.dedent(
    """
    from ascend_audit.model import passed
    from ascend_audit.registry import check

    @check("SITE-001", layer="driver", title="site rule", severity="low",
           rationale="because", remediation="do it")
    def site_rule(ctx):
        return passed("site rule holds")
    """
)


def test_builtins_load_with_metadata():
    reg = load_registry(entry_points=False)
    spec = reg.get("DRV-NPU-001")
    assert spec is not None and spec.layer == "driver"
    assert spec.rationale and spec.remediation and spec.evidence


def test_checks_dir_adds_drop_in_checks(tmp_path):
    (tmp_path / "site.py").write_text(PLUGIN)
    reg = load_registry([str(tmp_path)], entry_points=False)
    assert reg.get("SITE-001").title == "site rule"


def test_duplicate_ids_are_refused(tmp_path):
    (tmp_path / "a.py").write_text(PLUGIN)
    (tmp_path / "b.py").write_text(PLUGIN)
    with pytest.raises(RegistryError, match="SITE-001 is defined twice"):
        load_registry([str(tmp_path)], entry_points=False)


def test_check_without_layer_is_refused(tmp_path):
    (tmp_path / "nolayer.py").write_text(PLUGIN.replace('layer="driver", ', ""))
    with pytest.raises(RegistryError, match="has no layer"):
        load_registry([str(tmp_path)], entry_points=False)


def test_sidecar_metadata_for_missing_check_is_refused(tmp_path):
    (tmp_path / "side.py").write_text(PLUGIN)
    (tmp_path / "side.toml").write_text('["SITE-999"]\nlayer = "driver"\ntitle = "ghost"\n')
    with pytest.raises(RegistryError, match="SITE-999"):
        load_registry([str(tmp_path)], entry_points=False)


def test_broken_drop_in_names_the_file(tmp_path):
    (tmp_path / "broken.py").write_text("import nonexistent_module_xyz\n")
    with pytest.raises(RegistryError, match=r"broken\.py: failed to import"):
        load_registry([str(tmp_path)], entry_points=False)


def test_entry_point_plugin_is_loaded(tmp_path):
    """A distribution declaring the `ascend_audit.checks` entry point contributes its checks."""
    (tmp_path / "site_checks.py").write_text(PLUGIN)
    dist = tmp_path / "site_checks-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: site-checks\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[ascend_audit.checks]\nsite = site_checks\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-m", "ascend_audit", "checks"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "SITE-001" in out.stdout and "DRV-NPU-001" in out.stdout


def test_catalogue_from_metadata_matches_the_imported_checks():
    """`checks` and `explain` read only the TOML metadata; it must describe exactly the code."""
    imported = load_registry(entry_points=False)
    catalogue = load_registry(entry_points=False, catalogue_only=True)
    assert [s.id for s in catalogue.all()] == [s.id for s in imported.all()]
    for spec in imported.all():
        listed = catalogue.get(spec.id).to_dict()
        assert {**listed, "origin": spec.origin} == spec.to_dict()


def test_checks_listing_imports_no_check_code():
    out = subprocess.run(
        [sys.executable, "-c",
         "import sys; from ascend_audit.cli import entry; sys.argv=['x','checks']\n"
         "try: entry()\nexcept SystemExit: pass\n"
         "print(sorted(m for m in sys.modules if m.startswith('ascend_audit.checks.')))"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_a_layer_subset_imports_only_its_check_modules():
    code = (
        "import sys; from ascend_audit.registry import load_registry;"
        "reg = load_registry(entry_points=False, layers=('operator',));"
        "full = load_registry(entry_points=False, catalogue_only=True);"
        "print(sorted(s.id for s in reg.all()) == sorted(s.id for s in full.all()));"
        "print(all(s.func.__name__ != '_not_loaded' for s in reg.for_layer('operator')));"
        "print(all(s.func.__name__ == '_not_loaded' for s in reg.for_layer('driver')));"
        "print(any(m.startswith('ascend_audit.checks.driver.') and m != "
        "'ascend_audit.checks.driver.npu_absent' for m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["True", "True", "True", "False"]


def _metadata_reads(monkeypatch) -> list[str]:
    """Record the metadata files the registry reads from now on."""
    from ascend_audit import registry

    reads: list[str] = []
    real = registry._read_metadata

    def read(path: str):
        reads.append(path)
        return real(path)

    monkeypatch.setattr(registry, "_read_metadata", read)
    return reads


def _layer_of(path: str) -> str:
    return os.path.basename(os.path.dirname(path))


def test_a_layer_subset_reads_the_other_layers_metadata_only_when_asked(monkeypatch):
    reads = _metadata_reads(monkeypatch)
    reg = load_registry(entry_points=False, layers=("operator",))
    operator = [s.id for s in reg.for_layer("operator")]
    assert operator and {_layer_of(p) for p in reads} == {"operator"}
    assert len(reads) == len(set(reads))  # each operator module's metadata read once
    assert reg.get("OPR-AICPU-001") is not None
    assert {_layer_of(p) for p in reads} == {"operator"}
    spec = reg.get("DRV-HBM-001")  # an id the registry does not hold yet: the rest is read
    assert spec is not None and spec.func.__name__ == "_not_loaded"
    assert {_layer_of(p) for p in reads} == {"driver", "operator", "framework"}
    full = load_registry(entry_points=False, catalogue_only=True)
    assert [s.id for s in reg.all()] == [s.id for s in full.all()]
    assert [s.id for s in reg.for_layer("operator")] == operator


def test_a_layer_subset_lists_and_sizes_every_layer(monkeypatch):
    full = [s.id for s in load_registry(entry_points=False, catalogue_only=True).all()]
    for ask in ("all", "len", "driver"):
        reg = load_registry(entry_points=False, layers=("operator",))
        if ask == "all":
            assert [s.id for s in reg.all()] == full
        elif ask == "len":
            assert len(reg) == len(full)
        else:
            assert [s.id for s in reg.for_layer("driver")] == [i for i in full if i[:3] == "DRV"]


def test_a_drop_in_cannot_reuse_the_id_of_an_unread_builtin(tmp_path):
    (tmp_path / "clash.py").write_text(PLUGIN.replace("SITE-001", "DRV-HBM-001"))
    with pytest.raises(RegistryError, match="DRV-HBM-001 is defined twice"):
        load_registry([str(tmp_path)], entry_points=False, layers=("operator",))


def _fake_builtins(tmp_path, monkeypatch, folder: str, layer: str) -> None:
    import ascend_audit.checks as pkg

    (tmp_path / folder).mkdir()
    (tmp_path / folder / "x.toml").write_text(f'["X-001"]\nlayer = "{layer}"\ntitle = "x"\n')
    monkeypatch.setattr(pkg, "__path__", [str(tmp_path)])


def test_a_builtin_check_outside_its_layers_directory_is_refused(tmp_path, monkeypatch):
    _fake_builtins(tmp_path, monkeypatch, "operator", "driver")
    for load in (
        lambda: load_registry(entry_points=False, catalogue_only=True),
        lambda: load_registry(entry_points=False, layers=("operator",)),
        lambda: load_registry(entry_points=False, layers=("driver",)).all(),
    ):
        with pytest.raises(RegistryError, match=r"X-001 .*layer 'driver', but it lives in"):
            load()


def test_builtin_metadata_outside_a_layer_directory_is_refused(tmp_path, monkeypatch):
    _fake_builtins(tmp_path, monkeypatch, "common", "driver")
    with pytest.raises(RegistryError, match="outside a layer's directory"):
        load_registry(entry_points=False, layers=("operator",))


def _dist(root, name, entry_points=None):
    dist = root / f"{name}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    if entry_points is not None:
        (dist / "entry_points.txt").write_text(entry_points)


def test_plugin_prescan_never_misses_what_importlib_metadata_finds(tmp_path, monkeypatch):
    """The cheap pre-scan says True for every group importlib.metadata lists, here and on a
    sys.path built for each case (a declaring dist, an .egg, a zip, no entry points)."""
    import importlib.metadata as md
    import zipfile

    from ascend_audit.registry import ENTRY_POINT_GROUP, _group_may_be_declared

    groups = {ep.group for dist in md.distributions() for ep in dist.entry_points}
    assert groups and all(_group_may_be_declared(g) for g in groups)
    plain, declaring, egg = tmp_path / "plain", tmp_path / "declaring", tmp_path / "x.egg"
    for d in (plain, declaring, egg / "EGG-INFO"):
        d.mkdir(parents=True)
    _dist(plain, "other", "[console_scripts]\nx = y:z\n")
    _dist(plain, "no_entry_points")
    _dist(declaring, "site", f"[{ENTRY_POINT_GROUP}]\nsite = site_checks\n")
    (egg / "EGG-INFO" / "PKG-INFO").write_text("Metadata-Version: 1.0\nName: x\nVersion: 1\n")
    (egg / "EGG-INFO" / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\na = b\n")
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("z-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: z\nVersion: 1.0\n")
        zf.writestr("z-1.0.dist-info/entry_points.txt", f"[{ENTRY_POINT_GROUP}]\na = b\n")
    for path, expected in (
        ([str(plain), str(tmp_path / "missing")], False),
        ([str(plain), str(declaring)], True),
        ([str(egg)], True),
        ([str(archive)], True),
    ):
        monkeypatch.setattr(sys, "path", path)
        eps = md.entry_points()  # 3.10+: .select(group=); 3.9: a dict of groups
        group = (
            eps.select(group=ENTRY_POINT_GROUP)
            if hasattr(eps, "select")
            else eps.get(ENTRY_POINT_GROUP, ())
        )
        found = bool(group)
        assert found == expected, path
        assert _group_may_be_declared(ENTRY_POINT_GROUP) == expected, path
