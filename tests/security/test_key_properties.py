"""Property tests of the key codec against hostile values (hypothesis: 4,400 examples, 44,000 in soak).

For arbitrary Unicode values — separators ``#``, the bound marker ``$``, ``%`` and look-alike
escapes (``%23``), control characters, literals of the model (``USER``), very long strings —
the keys of a small multi-tenant model are checked for:

(a) build -> parse is the identity, for every entity and multi-field template;
(b) distinct value tuples never build the same key (also when a value's text moves across
    the separator: ``("a#", "b")`` vs ``("a", "#b")``);
(c) keys of different entities never collide, and never parse as another entity's keys;
(d) tenant isolation: the ``begins_with`` prefix of tenant A never matches a key of tenant B,
    and the BETWEEN bounds the client sends for "this key and its children" hold exactly
    tenant A's keys (compared as UTF-8 bytes, as DynamoDB compares them);
(e) values no key may hold — lone surrogates, empty strings — raise ``KeyValueError``
    naming the field (the other properties exclude them).

Every property counts the examples it checked; the last test asserts and prints the total.
``make soak`` (``CONSTRUCTS_LIB_SOAK=1``) runs every property at 10x its examples.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from constructs_lib.model import AccessPattern, Entity, Model
from constructs_lib.runtime import KeyValueError, TableClient, key_segments, keys

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
#: Examples per property (a)-(d), and for (e); 10x under soak.
EXAMPLES_PER_PROPERTY = 10_000 if SOAK else 1_000
EXAMPLES_REFUSED = 4_000 if SOAK else 400
PROPS = settings(max_examples=EXAMPLES_PER_PROPERTY, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
#: Examples checked per property (a body that reached its last assertion counts once).
CHECKED: Counter[str] = Counter()

TENANCY = Model(
    "tenancy",
    entities=[
        Entity("Tenant", pk="TENANT#{tenant}", sk="META", fields=["tenant"]),
        Entity("User", pk="TENANT#{tenant}#USER#{user_id}", sk="PROFILE", fields=["tenant", "user_id"]),
        Entity("Group", pk="TENANT#{tenant}#GROUP#{group_id}", sk="PROFILE", fields=["tenant", "group_id"]),
        Entity("Member", pk="TENANT#{tenant}#GROUP#{group_id}", sk="MEMBER#{user_id}",
               fields=["tenant", "group_id", "user_id"]),
        Entity("Event", pk="TENANT#{tenant}#USER#{user_id}", sk="EVENT#{at}#{seq}#{kind}",
               fields={"tenant": "string", "user_id": "string", "at": "timestamp", "seq": "number:6", "kind": "string"}),
        Entity("Daily", pk="TENANT#{tenant}#DAY#{day}", sk="STATS#{hour}",
               fields={"tenant": "string", "day": "date", "hour": "number:2"}),
        # Three adjacent string placeholders: the layout most exposed to a forged separator.
        Entity("Link", pk="TENANT#{tenant}#{src}#{dst}", sk="LINK", fields=["tenant", "src", "dst"]),
    ],
)
# Tenants in the *sort* key, read with the client's own conditions.
DOCS = Model(
    "docs",
    entities=[
        Entity("Space", pk="ORG#{org}", sk="TENANT#{tenant}", fields=["org", "tenant"]),
        Entity("Doc", pk="ORG#{org}", sk="TENANT#{tenant}#DOC#{doc_id}", fields=["org", "tenant", "doc_id"]),
    ],
    access_patterns=[
        AccessPattern("tenant docs", entity="Doc", sk="begins_with", sk_fields=("tenant",)),
        AccessPattern("tenant space and children", entity="Space", sk="begins_with", sk_fields=("tenant",)),
    ],
)

# Values ------------------------------------------------------------------------------------------
#: Every code point but surrogates (which must raise, see property (e)).
CHARS = st.characters(blacklist_categories=("Cs",))
#: Text that sits next to the separator, mimics escapes or equals a literal of the model.
TRICKY = st.sampled_from([
    "#", "$", "%", "%23", "%24", "%25", "%2", "#%", "$#", "\x00", "\x1f", " ", "!", '"', "\x7f", "\u2028",
    "\ufeff", "é", "😀", "\U0010ffff", "TENANT", "USER", "GROUP", "PROFILE", "MEMBER", "EVENT", "META", "LINK",
    "#USER#", "#GROUP#", "#DOC#", "#LINK", "PROFILE#", "$#",
])
STRINGS = st.one_of(
    st.text(CHARS, min_size=1, max_size=16),
    st.lists(st.one_of(TRICKY, st.text(CHARS, min_size=1, max_size=3)), min_size=1, max_size=6).map("".join),
    st.builds(lambda s, n: s * n, st.text(CHARS, min_size=1, max_size=4), st.integers(100, 500)),  # very long
)
OFFSETS = st.integers(-(24 * 60 - 1), 24 * 60 - 1).map(lambda minutes: timezone(timedelta(minutes=minutes)))
MOMENTS = st.datetimes(min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31), timezones=OFFSETS)
TIMESTAMPS = st.one_of(MOMENTS, MOMENTS.map(datetime.isoformat))  # aware datetimes or ISO text with an offset
KINDS = {"string": STRINGS, "timestamp": TIMESTAMPS, "date": st.dates(),
         "number:6": st.integers(0, 999_999), "number:2": st.integers(0, 99)}


def spec_of(entity: Entity, field: str) -> str:
    f = entity.field(field)
    return f"number:{f.width}" if f.kind == "number" else f.kind


def values_for(entity: Entity) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({f: KINDS[spec_of(entity, f)] for f in entity.table_key_fields})


def expected(entity: Entity, values: dict[str, Any]) -> dict[str, Any]:
    """What parsing must return: strings, ints and dates as given; timestamps as the same instant."""
    out = {}
    for name, value in values.items():
        if entity.field(name).kind == "timestamp":
            value = value if isinstance(value, datetime) else datetime.fromisoformat(value)
        out[name] = value
    return out


def table_key(entity: Entity, values: dict[str, Any]) -> tuple[str, str]:
    return (keys.build(entity, entity.pk_template, values), keys.build(entity, entity.sk_template, values))  # type: ignore[arg-type]


def parse_table_key(entity: Entity, key: tuple[str, str]) -> dict[str, Any]:
    return {**keys.parse(entity, entity.pk_template, key[0]), **keys.parse(entity, entity.sk_template, key[1])}  # type: ignore[arg-type]


ENTITIES = list(TENANCY.entities.values())
ENTITY_VALUES = st.sampled_from(ENTITIES).flatmap(lambda e: st.tuples(st.just(e), values_for(e)))


# (a) ---------------------------------------------------------------------------------------------
@PROPS
@given(ENTITY_VALUES)
def test_build_then_parse_is_the_identity(entity_values: tuple[Entity, dict[str, Any]]) -> None:
    # GIVEN any entity of the model and any valid values for its key fields
    entity, values = entity_values
    # WHEN its table key is built and parsed back
    key = table_key(entity, values)
    parsed = parse_table_key(entity, key)
    # THEN the values come back (timestamps as the same instant, in UTC), one segment per template segment
    assert parsed == expected(entity, values)
    assert all(v.tzinfo == UTC for v in parsed.values() if isinstance(v, datetime))
    assert len(key[0].split("#")) == len(entity.pk_template.segments)
    assert len(key[1].split("#")) == len(entity.sk_template.segments)  # type: ignore[union-attr]
    # ... and rebuilding from the parsed values gives the same key
    assert table_key(entity, parsed) == key
    CHECKED["a: build->parse identity"] += 1


# (b) ---------------------------------------------------------------------------------------------
LINK = TENANCY.entities["Link"]
LINK_FIELDS = ("tenant", "src", "dst")


@st.composite
def link_value_pairs(draw: st.DrawFn) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Two value tuples for Link (tenant, src, dst: adjacent in one key) that are likely to be
    confused: the same text cut at different places, one value replaced by its escaped text,
    one value edited, or two unrelated tuples."""
    how = draw(st.sampled_from(["shift", "lookalike", "edit", "independent"]))
    if how == "shift":
        parts = st.one_of(TRICKY, st.text(CHARS, min_size=1, max_size=2))
        text = draw(st.lists(parts, min_size=4, max_size=8).map("".join))
        cuts = st.lists(st.integers(1, len(text) - 1), min_size=2, max_size=2, unique=True).map(sorted)
        (i, j), (k, m) = draw(cuts), draw(cuts)
        return (text[:i], text[i:j], text[j:]), (text[:k], text[k:m], text[m:])
    first = draw(st.tuples(STRINGS, STRINGS, STRINGS))
    second = list(first)
    at = draw(st.integers(0, 2))
    if how == "lookalike":  # "#" vs "%23": the escaped text of a value, given as a raw value
        second[at] = key_segments.escape(first[at])
    elif how == "edit":
        second[at] = draw(st.one_of(TRICKY, STRINGS, st.builds(lambda s: first[at] + s, TRICKY)))
    else:
        second = list(draw(st.tuples(STRINGS, STRINGS, STRINGS)))
    return first, tuple(second)


@PROPS
@given(link_value_pairs())
def test_distinct_values_never_build_the_same_key(pair: tuple[tuple[str, ...], tuple[str, ...]]) -> None:
    # GIVEN two different value tuples for three adjacent string placeholders
    first, second = pair
    assume(first != second)
    # WHEN both keys are built
    key_1 = table_key(LINK, dict(zip(LINK_FIELDS, first, strict=True)))
    key_2 = table_key(LINK, dict(zip(LINK_FIELDS, second, strict=True)))
    # THEN they differ
    assert key_1 != key_2
    CHECKED["b: distinct values, distinct keys"] += 1


# (c) ---------------------------------------------------------------------------------------------
def may_meet(a: Any, b: Any) -> bool:
    """Test oracle: could some values make templates ``a`` and ``b`` build the same text?
    Only with as many segments, and equal literals wherever both have one."""
    return len(a.segments) == len(b.segments) and all(
        not (isinstance(x, str) and isinstance(y, str)) or x == y for x, y in zip(a.segments, b.segments, strict=True))


@PROPS
@given(st.data())
def test_keys_of_different_entities_never_collide(data: st.DataObject) -> None:
    # GIVEN two different entities, and values for each biased towards the other's literals
    a, b = data.draw(st.lists(st.sampled_from(ENTITIES), min_size=2, max_size=2, unique_by=lambda e: e.name))
    key_a = table_key(a, data.draw(values_for(a)))
    key_b = table_key(b, data.draw(values_for(b)))
    # WHEN their table keys are compared  THEN they differ
    assert key_a != key_b
    # ... and neither parses as the other entity's key (an item never reads back as another entity)
    for entity, key in ((b, key_a), (a, key_b)):
        with pytest.raises(KeyValueError):
            parse_table_key(entity, key)
    # ... and where their partition-key templates cannot meet, no value makes the partition keys meet
    if not may_meet(a.pk_template, b.pk_template):
        assert key_a[0] != key_b[0]
        with pytest.raises(KeyValueError):
            keys.parse(b, b.pk_template, key_a[0])
    CHECKED["c: entities never collide"] += 1


# (d) ---------------------------------------------------------------------------------------------
class Capture:
    """boto3 stand-in that keeps the last Query's key condition and answers nothing."""

    def __init__(self) -> None:
        self.params: dict[str, Any] = {}

    def query(self, **params: Any) -> dict[str, Any]:
        self.params = params
        return {"Items": []}


def key_condition_values(client: Capture) -> list[str]:
    """The string values of the last key condition, in the order they appear in it."""
    values = client.params["ExpressionAttributeValues"]
    return [values[p]["S"] for p in re.findall(r":v\d+", client.params["KeyConditionExpression"])]


def utf8(text: str) -> bytes:
    return text.encode("utf-8")  # DynamoDB orders string keys by their UTF-8 bytes


@st.composite
def tenant_pairs(draw: st.DrawFn) -> tuple[str, str]:
    """Tenant A and a different tenant B, often a near miss: a prefix/extension of A, A with a
    separator or bound marker appended, or A's escaped form."""
    a = draw(STRINGS)
    escaped = key_segments.escape(a)
    near = st.sampled_from(["#", "$", "%", "%23", "%24", " ", "!", "\x00", "\x7f", "0", "a", "é", "#USER#"])
    b = draw(st.one_of(
        STRINGS,  # unrelated
        st.builds(lambda s: a + s, near),  # "acme#", "acme$", "acme%"...
        st.builds(lambda s, t: a + s + t, near, STRINGS),  # "acme#x", "acmecorp"...
        st.just(a[:-1] or a + "#"),  # a prefix of A
        st.just(escaped if escaped != a else a + "%23"),  # A's escaped text as a raw value
    ))
    assume(a != b)
    return a, b


@PROPS
@given(tenant_pairs(), st.lists(st.tuples(STRINGS, STRINGS), min_size=1, max_size=3), STRINGS)
def test_a_tenant_prefix_or_range_never_reaches_another_tenant(
    tenants: tuple[str, str], ids: list[tuple[str, str]], org: str
) -> None:
    # GIVEN tenants A != B and keys of both: User partition keys, Space and Doc sort keys
    a, b = tenants
    user, space, doc = TENANCY.entities["User"], DOCS.entities["Space"], DOCS.entities["Doc"]

    def user_keys(t: str) -> list[str]:
        return [keys.build(user, user.pk_template, {"tenant": t, "user_id": u}) for u, _ in ids]

    def doc_keys(t: str) -> list[str]:
        return [keys.build(doc, doc.sk_template, {"tenant": t, "doc_id": d}) for _, d in ids]  # type: ignore[arg-type]

    def space_key(t: str) -> str:
        return keys.build(space, space.sk_template, {"tenant": t})  # type: ignore[arg-type]

    # WHEN the prefix of tenant A is built from the tenant field alone
    prefix, complete = keys.prefix(user, user.pk_template, {"tenant": a}, ("tenant",))
    # THEN it ends on the separator and matches A's keys, never B's
    assert not complete and prefix.endswith("#")
    assert all(k.startswith(prefix) for k in user_keys(a))
    assert not any(k.startswith(prefix) for k in user_keys(b))

    # WHEN the client runs "tenant docs" (begins_with) for tenant A
    capture = Capture()
    client = TableClient(DOCS, "docs", client=capture)  # type: ignore[arg-type]
    expected_prefix, _ = keys.prefix(doc, doc.sk_template, {"tenant": a}, ("tenant",))  # type: ignore[arg-type]
    try:
        client.query("tenant docs", org=org, tenant=a)
    except KeyValueError as exc:
        # THEN a key value over DynamoDB's limits (2,048 bytes partition, 1,024 sort), which no
        # stored key can match, is refused — and only then
        found = re.search(r"is (\d+) bytes; DynamoDB (partition|sort) key values are limited to (\d+)", str(exc))
        assert found and int(found[1]) > int(found[3]), exc
        assert found[2] == "partition" or len(utf8(expected_prefix)) > 1024, exc
        CHECKED["d: tenant isolation"] += 1
        return
    _, docs_prefix = key_condition_values(capture)
    # THEN its prefix matches A's documents and none of B's
    assert "begins_with" in capture.params["KeyConditionExpression"]
    assert all(k.startswith(docs_prefix) for k in doc_keys(a))
    assert not any(k.startswith(docs_prefix) for k in doc_keys(b))

    # WHEN the client reads "tenant A's space and everything under it" (BETWEEN key AND key + "$")
    client.query("tenant space and children", org=org, tenant=a)
    _, low, high = key_condition_values(capture)
    assert " BETWEEN " in capture.params["KeyConditionExpression"]
    # (a key of the maximum size has nothing under it: the bound is the key itself)
    assert (low, high) == (space_key(a), space_key(a) + ("$" if len(utf8(space_key(a))) < 1024 else ""))

    def inside(k: str) -> bool:
        return utf8(low) <= utf8(k) <= utf8(high)

    # THEN the range holds A's space and documents, and nothing of B
    assert all(inside(k) for k in [space_key(a), *doc_keys(a)])
    assert not any(inside(k) for k in [space_key(b), *doc_keys(b)])
    CHECKED["d: tenant isolation"] += 1


# (e) ---------------------------------------------------------------------------------------------
SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
UNKEYABLE = st.one_of(
    st.just(""),
    st.builds(lambda before, s, after: before + s + after, st.text(CHARS, max_size=5), SURROGATES, st.text(CHARS, max_size=5)),
)


@settings(max_examples=EXAMPLES_REFUSED, deadline=None)
@given(ENTITY_VALUES, st.data())
def test_values_no_key_may_hold_are_refused(entity_values: tuple[Entity, dict[str, Any]], data: st.DataObject) -> None:
    # GIVEN valid values with one string field replaced by an empty string or a lone surrogate
    entity, values = entity_values
    field = data.draw(st.sampled_from([f for f in values if entity.field(f).kind == "string"]))
    bad = data.draw(UNKEYABLE)
    # WHEN the key is built  THEN KeyValueError names the field and the rule
    with pytest.raises(KeyValueError, match=rf"{entity.name}\.{field}.*(is empty|lone surrogate)"):
        table_key(entity, {**values, field: bad})
    CHECKED["e: unkeyable values refused"] += 1


def test_examples_were_generated_as_budgeted(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN the properties above ran in this session (skip when some were deselected)
    if len(CHECKED) < 5:
        pytest.skip(f"only {sorted(CHECKED)} ran in this session")
    # THEN each checked at least its budget of examples: >= 4,400 in total (44,000 under soak)
    budgets = {name: EXAMPLES_REFUSED if name.startswith("e:") else EXAMPLES_PER_PROPERTY for name in CHECKED}
    assert all(CHECKED[name] >= budgets[name] for name in CHECKED), dict(CHECKED)
    assert sum(CHECKED.values()) >= 4 * EXAMPLES_PER_PROPERTY + EXAMPLES_REFUSED
    with capsys.disabled():
        print(f"\nkey properties: {sum(CHECKED.values())} examples checked — "
              + ", ".join(f"{k}: {v}" for k, v in sorted(CHECKED.items())))


# Pinned examples: the cases the properties above are designed to find -----------------------------
@pytest.mark.parametrize(("first", "second"), [
    (("a#", "b", "c"), ("a", "#b", "c")),
    (("%23", "x", "y"), ("#", "x", "y")),
    (("a", "b$", "c"), ("a", "b", "$c")),
])
def test_known_ambiguities_build_distinct_keys(first: tuple[str, ...], second: tuple[str, ...]) -> None:
    # GIVEN value tuples that would collide if values were joined unescaped  THEN their keys differ
    first_key = table_key(LINK, dict(zip(LINK_FIELDS, first, strict=True)))
    assert first_key != table_key(LINK, dict(zip(LINK_FIELDS, second, strict=True)))


def test_known_tenant_near_misses_stay_outside_the_range() -> None:
    # GIVEN tenant "acme" and near misses  THEN none falls in acme's BETWEEN range
    space = DOCS.entities["Space"]
    key = keys.build(space, space.sk_template, {"tenant": "acme"})  # type: ignore[arg-type]
    for other in ("acme#x", "acme$", "acmecorp", "acm", "acme%23", "acme "):
        other_key = keys.build(space, space.sk_template, {"tenant": other})  # type: ignore[arg-type]
        assert not utf8(key) <= utf8(other_key) <= utf8(key + "$"), other
