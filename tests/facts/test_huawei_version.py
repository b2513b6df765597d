"""The Huawei version grammar: the docstring's examples, real fixture versions, and properties."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ascend_audit.facts import huawei_version as hv

ASCENDING = [
    "7.8.T5.0.B028",
    "8.0.RC3.alpha001",
    "8.0.RC3.alpha002",
    "8.0.RC3.beta1",
    "8.0.RC3",
    "8.0.0",
    "8.0.0.B100",
    "23.0.rc3",
    "23.0.0",
    "23.0.3",
    "24.1.rc1",
    "24.1.rc1.b030",
    "24.1.rc2",
    "24.1.rc2.2",
    "24.1.rc3",
    "24.1.0",
    "24.1.0.3",
    "24.1.1",
    "25.0.rc1",
    "25.0.rc1.1",
    "25.2.0",
]
RELEASE_OF = {
    "24.1.rc1.b030": "24.1.rc1",
    "24.1.rc2.2": "24.1.rc2",
    "25.0.rc1.1": "25.0.rc1",
    "24.1.0.3": "24.1.0",
    "8.0.0.B100": "8.0.0",
    "8.0.RC3.alpha002": "8.0.RC3.alpha002",
    "7.5.0.1.129": "7.5.0.1.129",
    "25.3.rc1": "25.3.rc1",
}


def test_examples_ascend():
    for a, b in zip(ASCENDING, ASCENDING[1:]):
        assert hv.compare(a, b) == -1, (a, b)
    assert sorted(reversed(ASCENDING), key=hv.sort_key) == ASCENDING


@pytest.mark.parametrize(("version", "release"), sorted(RELEASE_OF.items()))
def test_release_of(version, release):
    assert hv.release_of(version) == release
    assert hv.matches(version, release)


def test_case_and_build_zeros_do_not_matter():
    assert hv.same("8.1.RC1", "8.1.rc1") and hv.same("24.1.rc1.b030", "24.1.RC1.B30")
    assert not hv.same("8.1.RC1", "8.1.0") and not hv.same(None, "8.1.0")


def test_firmware_and_wildcards():
    assert hv.compare("7.5.0.1.129", "7.7.0.6.236") == -1
    assert hv.in_range("7.7.0.6.236", "7.0.0", "7.7.99") and not hv.in_range(
        "7.8.0.6.201", "7.0.0", "7.7.99"
    )
    assert hv.in_range("24.1.rc3", "24.1", "24.1.") and hv.in_range(
        "23.0.rc3", "23.0.rc3", "23.0.rc3."
    )
    assert hv.matches("25.0.rc1.1", "25.0.X") and not hv.matches("25.1.0", "25.0.X")
    assert hv.is_prerelease("8.0.RC3.alpha001") and hv.is_prerelease("7.8.T5.0.B028")
    assert not hv.is_prerelease("24.1.rc1.b030")


def test_inner_versions():
    new = hv.parse_inner("V100R001C15SPC006B220")
    old = hv.parse_inner("V100R001C77B220SPC008")
    assert new == hv.InnerVersion(100, 1, 15, 6, 220) and old == hv.InnerVersion(100, 1, 77, 8, 220)
    assert hv.parse_inner("V100R001C19") < hv.parse_inner("V100R001C19SPC001B124")
    assert hv.family_in("V100R001C19SPC001B124", "V100R001C13", "V100R001C19") is True
    assert hv.family_in("V100R001C20SPC001B251", "V100R001C13", "V100R001C19") is False
    assert hv.family_in("8.0.0", "V100R001C13") is None


@pytest.mark.parametrize("text", ["", "...", "\x00\xff", "a" * 10000, "1." * 5000, "rc.rc.b", "-1"])
def test_hostile_input(text):
    hv.compare(text, "24.1.rc1")
    hv.release_of(text)
    hv.matches(text, "24.1.X")
    assert hv.parse_inner(text) is None


# --------------------------------------------------------------------------- properties

nums = st.integers(min_value=0, max_value=40)
stage = st.one_of(st.builds("rc{}".format, st.integers(1, 9)), st.builds(str, nums))
pre = st.one_of(
    st.builds("alpha{:03d}".format, st.integers(1, 9)),
    st.builds("beta{}".format, st.integers(1, 9)),
    st.builds("T{}".format, st.integers(1, 9)),
)
release = st.builds(lambda a, b, s: f"{a}.{b}.{s}", st.integers(5, 30), st.integers(0, 5), stage)
case = st.sampled_from([str.lower, str.upper, lambda s: s])
version = st.one_of(
    release,
    st.builds(lambda r, n: f"{r}.b{n:03d}", release, st.integers(1, 300)),
    st.builds(lambda r, n: f"{r}.{n}", release, st.integers(1, 9)),
    st.builds(lambda r, p: f"{r}.{p}", release, pre),
    st.builds(lambda a, b, c, d, e: f"{a}.{b}.{c}.{d}.{e}", nums, nums, nums, nums, nums),
)


@given(version, version, version)
def test_total_order(a, b, c):
    assert hv.compare(a, a) == 0
    assert hv.compare(a, b) == -hv.compare(b, a)
    if hv.compare(a, b) <= 0 and hv.compare(b, c) <= 0:
        assert hv.compare(a, c) <= 0
    ordered = sorted([a, b, c], key=hv.sort_key)
    assert ordered == sorted(ordered, key=functools.cmp_to_key(hv.compare))


@given(release, st.integers(1, 300), st.integers(1, 9), case)
def test_build_or_patch_sorts_after_its_release_and_matches_it(rel, build, patch, cased):
    for child in (f"{rel}.b{build:03d}", f"{rel}.{patch}"):
        shown = cased(child)
        assert hv.compare(shown, rel) == 1
        assert hv.same(hv.release_of(shown), rel)
        assert hv.matches(shown, cased(rel))
    later = f"{rel}.{patch + 1}"
    assert hv.compare(f"{rel}.{patch}", later) == -1


@given(
    st.integers(5, 30), st.integers(0, 5), st.integers(1, 8), st.integers(1, 9), st.integers(1, 9)
)
def test_alpha_before_beta_before_rc_before_final(major, minor, rc, a, b):
    line = f"{major}.{minor}"
    chain = [f"{line}.RC{rc}.alpha{a:03d}", f"{line}.RC{rc}.beta{b}", f"{line}.RC{rc}", f"{line}.0"]
    for x, y in zip(chain, chain[1:]):
        assert hv.compare(x, y) == -1, (x, y)
    assert hv.compare(f"{line}.RC{rc}", f"{line}.RC{rc + 1}") == -1
