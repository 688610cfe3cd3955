"""Unit tests for constructs_lib.runtime.versions (versions in the sort key)."""

from __future__ import annotations

import pytest
from assertions import assert_rejected
from hypothesis import given, settings
from hypothesis import strategies as st

from constructs_lib.runtime.versions import AT, HASH_V, SortKeyVersions

PROPS = settings(max_examples=500, deadline=None)




def test_hash_v_style() -> None:
    # GIVEN the default '#v' style WHEN versions are added, read and removed
    assert HASH_V.add("PROFILE", 3) == "PROFILE#v3"
    assert HASH_V.get("PROFILE#v3") == 3
    assert HASH_V.remove("PROFILE#v3") == "PROFILE"
    assert HASH_V.split("PROFILE#v3") == ("PROFILE", 3)
    # THEN latest is version 0 and the prefix lists all versions
    assert HASH_V.latest("PROFILE") == "PROFILE#v0"
    assert HASH_V.prefix("PROFILE") == "PROFILE#v"
    assert HASH_V.add("PROFILE", 12).startswith(HASH_V.prefix("PROFILE"))


def test_at_style() -> None:
    # GIVEN the '@' style WHEN versions are added, read and removed
    assert AT.add("PROFILE", 3) == "PROFILE@3"
    assert AT.get("PROFILE@3") == 3
    assert AT.remove("PROFILE@3") == "PROFILE"
    assert AT.latest("PROFILE") == "PROFILE@0"
    assert AT.prefix("PROFILE") == "PROFILE@"


def test_unversioned_keys() -> None:
    # GIVEN keys without a version suffix WHEN read THEN None, and remove refuses
    assert HASH_V.get("PROFILE") is None
    assert HASH_V.get("USER#vince") is None  # '#v' followed by non-digits is an ordinary key
    assert HASH_V.split("PROFILE") == ("PROFILE", None)
    assert AT.get("USER#bob@example.com") is None
    assert_rejected(lambda: HASH_V.remove("PROFILE"), "'PROFILE'", "no version suffix")
    assert_rejected(lambda: AT.remove("PROFILE#v3"), "'PROFILE#v3'", "no version suffix")


def test_last_marker_wins() -> None:
    # GIVEN a base that itself ends in something marker-like WHEN versioned and split
    # THEN only the last marker is the version
    assert HASH_V.split(HASH_V.add("A#v", 2)) == ("A#v", 2)
    assert HASH_V.split(HASH_V.add("A#v7", 2)) == ("A#v7", 2)
    assert AT.split(AT.add("bob@", 1)) == ("bob@", 1)


def test_padding_makes_versions_sort_numerically() -> None:
    # GIVEN unpadded versions WHEN sorted as text THEN v10 sorts before v2 (documented pitfall)
    assert sorted([HASH_V.add("P", 2), HASH_V.add("P", 10)]) == ["P#v10", "P#v2"]
    # GIVEN width=4 WHEN sorted THEN numeric order
    padded = SortKeyVersions("hash_v", width=4)
    assert padded.add("P", 2) == "P#v0002"
    assert sorted([padded.add("P", 10), padded.add("P", 2)]) == ["P#v0002", "P#v0010"]
    assert padded.get("P#v0010") == 10
    assert padded.latest("P") == "P#v0000"
    assert SortKeyVersions("at", width=3).add("P", 7) == "P@007"


def test_properties_and_equality() -> None:
    # GIVEN two helpers with the same config WHEN compared THEN equal and hash alike
    assert SortKeyVersions("at", width=2) == SortKeyVersions("at", width=2)
    assert hash(SortKeyVersions("at", width=2)) == hash(SortKeyVersions("at", width=2))
    assert SortKeyVersions("at", width=2) != SortKeyVersions("hash_v", width=2)
    assert (AT.style, AT.width, AT.marker) == ("at", 0, "@")
    assert repr(HASH_V) == "SortKeyVersions('hash_v', width=0)"


@pytest.mark.parametrize(
    ("version", "offending", "rule_word"),
    [
        (-1, "-1", "negative"),
        (True, "True", "non-negative int"),
        (1.0, "1.0", "non-negative int"),
        ("3", "'3'", "non-negative int"),
        (None, "None", "non-negative int"),
    ],
)
def test_add_rejects_bad_versions(version: object, offending: str, rule_word: str) -> None:
    # GIVEN a version that is not a non-negative int WHEN added THEN rejected
    assert_rejected(lambda: HASH_V.add("PROFILE", version), offending, rule_word)  # type: ignore[arg-type]


def test_add_rejects_version_wider_than_padding() -> None:
    # GIVEN width=2 WHEN version 100 is added THEN rejected: it would sort wrongly
    assert_rejected(lambda: SortKeyVersions(width=2).add("P", 100), "100", "more than 2 digits")


@pytest.mark.parametrize("sk", ["", 5, None])
def test_rejects_bad_sort_keys(sk: object) -> None:
    # GIVEN an empty or non-str sort key WHEN used THEN rejected
    for call in (lambda: HASH_V.add(sk, 1), lambda: HASH_V.get(sk), lambda: HASH_V.prefix(sk)):  # type: ignore[arg-type]
        assert_rejected(call, repr(sk), "sort key")


@pytest.mark.parametrize(
    ("helper", "sk", "rule_word"),
    [
        (HASH_V, "PROFILE#v03", "leading zeros"),
        (AT, "PROFILE@00", "leading zeros"),
        (SortKeyVersions(width=3), "PROFILE#v3", "exactly 3 digits"),
        (SortKeyVersions(width=3), "PROFILE#v0003", "exactly 3 digits"),
        (HASH_V, "#v3", "no base"),
    ],
)
def test_malformed_suffixes_rejected(helper: SortKeyVersions, sk: str, rule_word: str) -> None:
    # GIVEN an all-digit suffix that is not canonical for this helper WHEN read THEN rejected
    assert_rejected(lambda: helper.get(sk), repr(sk), rule_word)
    assert_rejected(lambda: helper.remove(sk), repr(sk), rule_word)


@pytest.mark.parametrize(
    ("kwargs", "offending", "rule_word"),
    [
        ({"style": "colon"}, "'colon'", "style must be one of"),
        ({"width": -1}, "-1", "between 0"),
        ({"width": 39}, "39", "between 0"),
        ({"width": True}, "True", "int"),
    ],
)
def test_constructor_validation(kwargs: dict, offending: str, rule_word: str) -> None:
    # GIVEN an unknown style or bad width WHEN constructing THEN rejected
    assert_rejected(lambda: SortKeyVersions(**kwargs), offending, rule_word)


@PROPS
@given(
    st.sampled_from(["hash_v", "at"]),
    st.integers(0, 6).flatmap(lambda w: st.tuples(st.just(w), st.integers(0, 10 ** (w or 9) - 1))),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1),
)
def test_property_split_inverts_add(style: str, width_version: tuple[int, int], sk: str) -> None:
    # GIVEN any base and any version that fits the width WHEN added then split
    # THEN both come back
    width, version = width_version
    helper = SortKeyVersions(style, width=width)  # type: ignore[arg-type]
    versioned = helper.add(sk, version)
    assert helper.split(versioned) == (sk, version)
    assert versioned.startswith(helper.prefix(sk))


@PROPS
@given(st.integers(0, 10**6 - 1), st.integers(0, 10**6 - 1))
def test_property_padded_versions_sort_numerically(m: int, n: int) -> None:
    # GIVEN width=6 WHEN two versions are rendered THEN byte order equals numeric order
    helper = SortKeyVersions(width=6)
    a, c = helper.add("P", m).encode(), helper.add("P", n).encode()
    assert (a < c) == (m < n)
