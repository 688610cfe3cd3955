"""Model-based test of ``TableClient`` on DynamoDB Local.

A hypothesis ``RuleBasedStateMachine`` runs random programs of puts (plain, create-only,
versioned), partial updates (set, remove, ADD), upserts, deletes, transactions and batch writes
with adversarial values on a table created from the **synthesized CloudFormation template** of
a model that has everything the key rules must get right: a GSI overloaded by two entities, a
``when_equals`` and a ``when_present`` sparse GSI, a GSI partitioned on two fields, a
zero-padded number and a timestamp in keys, KEYS_ONLY and INCLUDE projections, a versioned
entity and a TTL attribute — and two GSIs on which the two entities' keys can be identical
(``HOLDS#{email}`` beside ``HOLDS#{order_id}``; ``{team}#R`` beside ``{account_id}#R`` with a
shared ``ACCT#`` sort-key prefix), with value pools that make them collide.

Every write also goes to a **twin table** created from the same template, whose client shares
the cursor secret: transactions carry the same ``client_request_token`` on both, both tables
must answer alike and equal the reference, and a cursor of one table is refused by the other.

After every step the table must equal an in-memory reference (``mbt_reference.py``) written
without the runtime's codec: every item and every key attribute (one consistent Scan), every
item the step touched (``get`` / ``batch_get``), and every declared access pattern for the
partitions the step touched — with ``query_all`` and with small pages following cursors —
compared item by item and in key order. Calls the client must refuse raise the error class the
reference predicts, and leave the table unchanged.

Bounded for ``make test``: 30 examples x 25 steps, derandomized (the same programs on every
run), a failing program reported as found. ``make soak`` (``CONSTRUCTS_LIB_SOAK=1``) runs
300 x 50 from a random seed printed in the summary (``CONSTRUCTS_LIB_SEED=<n>`` replays it) and
shrinks a failure to a minimal program. The counts are printed at the end of the pytest run.
"""

from __future__ import annotations

import os
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest
import run_summary
from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test
from mbt_reference import (
    ENTITIES,
    INDEXES,
    PATTERNS,
    PK,
    SK,
    TTL,
    TYPE,
    Errors,
    Outcome,
    Reference,
    Refused,
    canon_item,
    escape,
    utc_text,
)

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model
from constructs_lib.runtime import (
    CursorError,
    ItemValidationError,
    RuntimeClientError,
    TableClient,
    TransactionCanceledError,
)
from constructs_lib.testing import LocalDeployment

pytestmark = pytest.mark.integration

SOAK = os.environ.get("CONSTRUCTS_LIB_SOAK", "") not in ("", "0")
EXAMPLES = int(os.environ.get("CONSTRUCTS_LIB_MBT_EXAMPLES") or (300 if SOAK else 30))
STEPS = int(os.environ.get("CONSTRUCTS_LIB_MBT_STEPS") or (50 if SOAK else 25))
#: Shrinking a failing program to a minimal one takes hypothesis up to 5 minutes against a
#: database, so ``make test`` reports the failing program as found (its last call is named with
#: what it returned and what was expected); ``make soak`` shrinks. ``CONSTRUCTS_LIB_MBT_SHRINK=1|0``
#: overrides either.
SHRINK = os.environ.get("CONSTRUCTS_LIB_MBT_SHRINK", "1" if SOAK else "0") not in ("", "0")
#: CI replays the same programs (derandomized); a soak explores from a random, printed seed.
SEED = int(os.environ["CONSTRUCTS_LIB_SEED"]) if os.environ.get("CONSTRUCTS_LIB_SEED") else (
    random.randrange(2**32) if SOAK else None
)


# --------------------------------------------------------------------------------- the model
def build_model() -> Model:
    """The test model, declared from the same specification the reference reads."""
    entities = []
    for spec in ENTITIES.values():
        fields: dict[str, Field] = {}
        for name, f in spec.fields.items():
            if f.kind == "number":
                fields[name] = Field.number(f.width or 1)
            elif f.choices:
                fields[name] = Field.enum(*f.choices)
            else:
                fields[name] = Field(f.kind)  # type: ignore[arg-type]
        indexes = {
            name: IndexKey(pk=k.pk, sk=k.sk, when_present=k.when_present, when_equals=k.when_equals)
            for name, k in spec.indexes.items()
        }
        entities.append(Entity(spec.name, pk=spec.pk, sk=spec.sk, fields=fields, indexes=indexes,
                               required=spec.required, version_attribute=spec.version))
    patterns = [
        AccessPattern(name, entity=p.entities[0] if len(p.entities) == 1 else p.entities, index=p.index or "table",
                      sk=p.op, sk_fields=(p.field,) if p.field else None, descending=p.descending)  # type: ignore[arg-type]
        for name, p in PATTERNS.items()
    ]
    return Model("mbt", entities=entities, indexes=[Index(n, projection=p) for n, p in INDEXES.items()],
                 access_patterns=patterns, ttl_attribute=TTL)


MODEL = build_model()

# --------------------------------------------------------------------------------- values
UTC = UTC
PLUS2, MINUS0530 = timezone(timedelta(hours=2)), timezone(-timedelta(hours=5, minutes=30))
INSTANTS = [
    datetime(2024, 6, 1, 12, 0, tzinfo=UTC),
    datetime(2024, 6, 1, 12, 0, 0, 1, tzinfo=UTC),
    datetime(2024, 6, 1, 11, 59, 59, 999999, tzinfo=UTC),
    datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC),
    datetime(999, 1, 1, 0, 30, tzinfo=UTC),
    datetime(2038, 1, 19, 3, 14, 8, tzinfo=UTC),
]
#: Ways to write one instant: the same item whichever is used (``+02:00`` vs ``Z``).
REPRESENTATIONS: dict[str, Callable[[datetime], Any]] = {
    "datetime UTC": lambda t: t,
    "datetime +02:00": lambda t: t.astimezone(PLUS2),
    "datetime -05:30": lambda t: t.astimezone(MINUS0530),
    "text Z": lambda t: t.isoformat().replace("+00:00", "Z"),
    "text +02:00": lambda t: t.astimezone(PLUS2).isoformat(),
}
BAD_INSTANTS = [datetime(2024, 6, 1, 12), "2024-06-01T12:00:00", "yesterday", date(2024, 6, 1), 1717243200]

ACCOUNT_IDS = ["acme", "acme#x", "acmecorp", "a%23b", "%", "$", "a b", "Zoë", "😀", "x\x00y", "#"]
ORDER_IDS = ["o1", "o#1", "o%", "$o", "é", "𝄞", "o1#", "O1"]
EMAILS = ["ann@example.com", "a#b@x", "%40", "ü@x", "😀"]
REGIONS = ["eu", "us#1", "%"]
TEAMS = ["t", "t#", "$t", "ß"]
BAD_STRINGS: list[Any] = ["", 7, "\ud800"]
#: Units for values near the key-size limits: bytes each takes once escaped.
UNITS = {"a": 1, "é": 2, "😀": 4, "#": 3}
#: Escaped byte lengths around each limit: PK = "ACCT#" + id (2048), GSI3SK = "ACCT#" + id (1024),
#: SK = "ORDER#" + 27-char timestamp + "#" + id (1024), GSI1PK = "EMAIL#" + email (2048).
ACCOUNT_LENGTHS, ORDER_LENGTHS, EMAIL_LENGTHS = (1019, 1020, 2043), (989, 990), (2041, 2042)


def nested(depth: int) -> Any:
    """A document ``depth`` containers deep (maps and lists alternating)."""
    value: Any = "leaf"
    for level in range(depth):
        value = {"d": value} if level % 2 else [value]
    return value


FREE_NAMES = ["note", "a:b", "ünï", "x.y", "blob", "meta", "tags", "score"]
BULK_ORDER_IDS = ["b0", "b1", "b2", "b3", "b4", "b#", "b%", "😀"]
ADDABLE = ("tags", "score", "escalations")  # always hold a string set / a number
FREE_VALUES: list[Any] = [
    "", "#", "%25", "$", "😀𝄞", "a\x00b", 0, -7, 10**37, Decimal("1.5"), Decimal("-0.001"), True, False,
    b"\x00\xff", b"", ["x", 1, ""], {"k": "v", "n": None, "e": ""}, {"s#", "t"}, {1, 2}, nested(31),
]
#: Refused before any call: an empty set, a lone surrogate, a document deeper than 32 levels.
BAD_FREE_VALUES: list[Any] = [set(), "\ud800", nested(32)]
NOTES = ["", "#", "n%", "😀", "x" * 10]
TAG_SETS = [{"a"}, {"b#", "😀"}]
SCORES = [0, 1, -3, 10**20]
AMOUNTS: list[Any] = [0, 1, 42, 999_999]
BAD_AMOUNTS: list[Any] = [1_000_000, -1, "5", 1.5, True]
#: Pattern reads after one step and at the end of a program: a batch touches dozens of
#: partitions, so reads wait in a queue (oldest first); reads whose expected result has not
#: changed since it was last verified are skipped. Every stored item is verified after every step.
READS_PER_STEP, READS_AT_END = 3, 12
GOOD_TTL, BAD_TTL = 4_102_444_800, 4_102_444_800_000  # 2100-01-01 in seconds; the same in milliseconds


def long_value(nbytes: int, unit: str) -> str:
    """A string whose escaped form is exactly ``nbytes`` UTF-8 bytes."""
    width = UNITS[unit]
    return unit * (nbytes // width) + "a" * (nbytes % width)


#: Values one byte over a limit (an account id of 1,020 bytes is valid, but too long for GSI3SK).
BAD_ACCOUNT_IDS = [*BAD_STRINGS, long_value(2044, "#"), long_value(2044, "é")]
BAD_ORDER_IDS = [*BAD_STRINGS, long_value(991, "😀"), long_value(991, "#")]
BAD_EMAILS = [*BAD_STRINGS, long_value(2043, "a"), long_value(2043, "😀")]


def key_strings(pool: list[str], lengths: tuple[int, ...]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(pool),
        st.builds(long_value, st.sampled_from(lengths), st.sampled_from(list(UNITS))),
        st.text(st.characters(codec="utf-8"), min_size=1, max_size=5),
    )


_CANONICAL = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{6})Z")


def instant_of(text: str) -> datetime:
    m = _CANONICAL.fullmatch(text)
    assert m, text
    return datetime(*(int(g) for g in m.groups()), tzinfo=UTC)  # type: ignore[misc]


def from_wire(value: Mapping[str, Any]) -> Any:
    """A DynamoDB wire value as the reference stores it (numbers: int when integral)."""
    (kind, v), = value.items()
    if kind == "S":
        return v
    if kind == "N":
        d = Decimal(v)
        return int(d) if d == d.to_integral_value() else d
    if kind == "B":
        return bytes(v)
    if kind == "BOOL":
        return v
    if kind == "NULL":
        return None
    if kind == "L":
        return [from_wire(x) for x in v]
    if kind == "M":
        return {k: from_wire(x) for k, x in v.items()}
    if kind == "SS":
        return set(v)
    if kind == "NS":
        return {from_wire({"N": x}) for x in v}
    if kind == "BS":
        return {bytes(x) for x in v}
    raise AssertionError(f"unknown wire type {kind}")


class _Long:
    """Stands for a long string in messages: its start and its size in UTF-8 bytes."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"<{len(self.text.encode('utf-8', 'surrogatepass'))}-byte str {self.text[:6]!r}...>"


def brief(value: Any) -> Any:
    """``value`` with strings longer than 40 characters shortened (key values reach 2 KB)."""
    if isinstance(value, str):
        return _Long(value) if len(value) > 40 else value
    if isinstance(value, dict):
        return {brief(k): brief(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(brief(v) for v in value)
    return value


def show(item: Any, limit: int = 300) -> str:
    text = repr(brief(item))
    return text if len(text) <= limit else text[:limit] + "..."


def differences(actual: Mapping[str, Any] | None, expected: Mapping[str, Any] | None) -> str:
    """The attributes on which two items differ, each value shortened (key values can be 2 KB)."""
    if actual is None or expected is None:
        return f"got {show(actual, 600)}, expected {show(expected, 600)}"
    lines = []
    for name in sorted(actual.keys() | expected.keys()):
        a, e = actual.get(name, "<absent>"), expected.get(name, "<absent>")
        if canon_item({"v": a}) != canon_item({"v": e}):
            lines.append(f"    {name}: got {show(a, 120)} ({type(a).__name__}), expected {show(e, 120)} ({type(e).__name__})")
    return "\n".join(lines)


# --------------------------------------------------------------------------------- calls
@dataclass
class Call:
    """One write: ``op`` is put/update/delete; ``arg`` the item or key; ``kw`` the options."""

    op: str
    entity: str
    arg: dict[str, Any]
    kw: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"{self.op}({self.entity!r}, {show(self.arg, 600)}, **{show(self.kw, 600)})"

    def predict(self, ref: Reference, *, in_transaction: bool = False) -> Outcome:
        extra = {"in_transaction": True} if in_transaction and self.op == "put" else {}
        return getattr(ref, self.op)(self.entity, self.arg, **self.kw, **extra)  # type: ignore[no-any-return]

    def run(self, target: Any) -> Any:
        return getattr(target, self.op)(self.entity, self.arg, **self.kw)


STATS: Counter[str] = Counter()
#: Transaction tokens are remembered per server for 10 minutes, across tables: this run's own.
RUN = f"{os.getpid()}-{time.time_ns()}"
CURSOR_KEY = b"mbt-shared-cursor-secret-0123456789"
FOREIGN = "foreign partitions read"


class TableMachine(RuleBasedStateMachine):
    """Drives one ``TableClient`` and the reference side by side (the table starts empty)."""

    table: TableClient
    #: A second table from the same template, its client sharing ``cursor_key``: every write goes
    #: to both (transactions with the same ``client_request_token``) and both must equal the
    #: reference; a cursor of one is refused by the other.
    twin: TableClient
    raw: Any

    def __init__(self) -> None:
        super().__init__()
        self.ref = Reference()
        self.step = 0
        self.clean = False  # True: draw no invalid value (most transactions, batch items)
        self.verified: dict[str, Any] = {}  # (pattern, args) -> the expected result last verified
        self.pending: dict[str, tuple[str, dict[str, Any]]] = {}  # reads still to do
        self.reads = 0
        self.touched_items: list[dict[str, Any]] = []  # reference items (before/after) of this step
        self.read_keys: list[tuple[str, dict[str, Any]]] = []  # (entity, key) to read back
        STATS["examples"] += 1

    # values ----------------------------------------------------------------------------------
    @initialize(data=st.data())
    def choose_values(self, data: st.DataObject) -> None:
        pool = lambda s, n: data.draw(st.lists(s, min_size=2, max_size=n, unique=True))  # noqa: E731
        self.accounts = pool(key_strings(ACCOUNT_IDS, ACCOUNT_LENGTHS), 3)
        self.orders = pool(key_strings(ORDER_IDS, ORDER_LENGTHS), 3)
        self.emails = pool(key_strings(EMAILS, EMAIL_LENGTHS), 3)
        self.regions, self.teams = pool(st.sampled_from(REGIONS), 2), pool(st.sampled_from(TEAMS), 2)
        # Values two entities share, so their GSI5/GSI6 keys collide: an email equal to an order
        # id, a team equal to an account id (short ones: a team is also in GSI3's partition).
        if data.draw(st.booleans(), label="an email equal to an order id"):
            self.emails.append(data.draw(st.sampled_from(self.orders), label="shared email"))
        short = [a for a in self.accounts if len(a) < 64]
        if short and data.draw(st.booleans(), label="a team equal to an account id"):
            self.teams.append(data.draw(st.sampled_from(short), label="shared team"))
        self.instants = sorted(pool(st.sampled_from(INSTANTS) | st.datetimes(
            min_value=datetime(2000, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(UTC)), 3))

    def rare(self, data: st.DataObject, label: str, one_in: int = 20) -> bool:
        """True about once in ``one_in`` draws; never while drawing a clean batch or transaction."""
        return not self.clean and data.draw(st.integers(1, one_in), label=f"{label}? ({one_in}: yes)") == one_in

    def pick(self, data: st.DataObject, pool: list[Any], label: str, bad: list[Any] | None = None) -> Any:
        if bad and self.rare(data, f"invalid {label}"):
            return data.draw(st.sampled_from(bad), label=f"invalid {label}")
        return data.draw(st.sampled_from(pool), label=label)

    def instant(self, data: st.DataObject, at: datetime | None = None) -> Any:
        at = at if at is not None else self.pick(data, self.instants, "instant")
        if self.rare(data, "invalid instant"):
            return data.draw(st.sampled_from(BAD_INSTANTS), label="invalid instant")
        how = data.draw(st.sampled_from(list(REPRESENTATIONS)), label="written as")
        return REPRESENTATIONS[how](at)

    def stored(self, entity: str) -> list[dict[str, Any]]:
        return [i for i in self.ref.items.values() if i[TYPE] == entity]

    def version_of(self, account_id: Any) -> int:
        item = self.ref.items.get((f"ACCT#{escape(account_id)}", "PROFILE")) if isinstance(account_id, str) else None
        return item["version"] if item else 1

    def free_attrs(self, data: st.DataObject) -> dict[str, Any]:
        names = data.draw(st.lists(st.sampled_from(FREE_NAMES), max_size=3, unique=True), label="free attributes")
        return {n: self.free_value(data, n) for n in names}

    def free_value(self, data: st.DataObject, name: str) -> Any:
        pools = {"note": NOTES, "tags": TAG_SETS, "score": SCORES}
        return self.pick(data, pools.get(name, FREE_VALUES), name, None if name in pools else BAD_FREE_VALUES)

    def account_key(self, data: st.DataObject) -> dict[str, Any]:
        existing = self.stored("Account")
        if existing and data.draw(st.integers(0, 2), label="an existing account (1, 2)") > 0:
            key = {"account_id": data.draw(st.sampled_from(existing), label="account")["account_id"]}
        else:
            key = {"account_id": self.pick(data, self.accounts, "account_id", BAD_ACCOUNT_IDS)}
        if self.rare(data, "a non-key field in the key", 24):  # refused, never used to build a key
            key["email"] = self.pick(data, self.emails, "email in key")
        elif self.rare(data, "key without account_id", 40):
            del key["account_id"]
        return key

    def order_key(self, data: st.DataObject) -> dict[str, Any]:
        existing = self.stored("Order")
        if existing and data.draw(st.integers(0, 2), label="an existing order (1, 2)") > 0:
            item = data.draw(st.sampled_from(existing), label="order")
            key = {"account_id": item["account_id"], "order_id": item["order_id"],
                   "created_at": self.instant(data, instant_of(item["created_at"]))}
        else:
            key = {"account_id": self.pick(data, self.accounts, "account_id", BAD_ACCOUNT_IDS),
                   "order_id": self.pick(data, self.orders, "order_id", BAD_ORDER_IDS),
                   "created_at": self.instant(data)}
        if self.rare(data, "a non-key field in the key", 24):
            key["status"] = "PAID"
        elif self.rare(data, "key without order_id", 40):
            del key["order_id"]
        return key

    # call generators -------------------------------------------------------------------------
    def draw_put(self, data: st.DataObject, entity: str) -> Call:
        if entity == "Account":
            attrs = {"account_id": self.pick(data, self.accounts, "account_id", BAD_ACCOUNT_IDS)}
            if not self.rare(data, "without the required email", 24):
                attrs["email"] = self.pick(data, self.emails, "email", BAD_EMAILS)
            which = data.draw(st.sampled_from(["both", "none", "region", "team"]), label="region/team")
            if which in ("both", "region"):
                attrs["region"] = self.pick(data, self.regions, "region", BAD_STRINGS)
            if which in ("both", "team"):
                attrs["team"] = self.pick(data, self.teams, "team", BAD_STRINGS)
        else:
            attrs = {k: v for k, v in self.order_key(data).items() if k != "status"}
            status = data.draw(st.sampled_from(["", "PENDING", "PAID", "SHIPPED"]), label="status")
            if self.rare(data, "status outside the enum"):
                status = "pending"
            if status:
                attrs["status"] = status
            if data.draw(st.booleans(), label="amount"):
                attrs["amount"] = self.pick(data, AMOUNTS, "amount", BAD_AMOUNTS)
            if data.draw(st.booleans(), label="escalated"):
                attrs["escalations"] = data.draw(st.sampled_from([0, 2]), label="escalations")
        attrs.update(self.free_attrs(data))
        if data.draw(st.integers(0, 3), label="ttl (3)") == 3:
            attrs[TTL] = self.pick(data, [GOOD_TTL], "ttl", [BAD_TTL])
        kw: dict[str, Any] = {}
        mode = data.draw(st.sampled_from(["plain", "create_only", "expected_version"]), label="put mode")
        if mode == "create_only" or self.rare(data, "create_only and expected_version"):
            kw["create_only"] = True
        if mode == "expected_version" and (entity == "Account" or self.rare(data, "expected_version, unversioned")):
            current = self.version_of(attrs.get("account_id"))
            kw["expected_version"] = data.draw(st.sampled_from([current, current + 1, 1]), label="expected version")
        return Call("put", entity, attrs, kw)

    def draw_update(self, data: st.DataObject, entity: str, *, must_exist: bool | None = None) -> Call:
        key = self.account_key(data) if entity == "Account" else self.order_key(data)
        if entity == "Account":
            names, forbidden = ["email", "region", "team", TTL, *FREE_NAMES], ["account_id", "version"]
            partners = {"region": "team", "team": "region"}
        else:
            names = ["status", "amount", "escalations", TTL, *FREE_NAMES]
            forbidden = ["created_at", "order_id", "amount", "status"]
            partners = {"amount": "escalations", "escalations": "amount"}
        chosen = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True), label="attributes")
        if entity == "Account" and must_exist is False and "email" not in chosen \
                and data.draw(st.booleans(), label="upsert with the required email"):
            chosen.append("email")
        set_: dict[str, Any] = {}
        remove: list[str] = []
        add: dict[str, Any] = {}

        def change(name: str, ops: list[str]) -> None:
            op = data.draw(st.sampled_from(ops), label=f"{name}: how")
            if op == "remove":
                remove.append(name)
            elif op == "set None":
                set_[name] = None
            elif op == "add":
                add[name] = data.draw(st.sampled_from(TAG_SETS if name == "tags" else [1, 2, -1]), label=f"add {name}")
            else:
                set_[name] = self.set_value(data, entity, name)

        for name in chosen:
            if name in ENTITIES[entity].required and not self.rare(data, f"remove required {name}"):
                change(name, ["set"])
                continue
            change(name, ["set", "set", "set None", "remove"] + (["add", "add"] if name in ADDABLE else []))
        for name, partner in partners.items():
            # index inputs usually change together (one alone is refused: the index key needs both)
            if (set_.get(name) is not None or name in add) and partner not in chosen \
                    and data.draw(st.integers(0, 3), label=f"{partner} too (1-3)") > 0:
                chosen.append(partner)
                change(partner, ["set"] + (["add"] if partner in ADDABLE else []))
        if "escalations" in add and ("amount" in remove or "amount" in set_ and set_["amount"] is None):
            # ADD on the presence input while removing a template input: not modelled, set it instead
            remove = [n for n in remove if n != "amount"]
            set_["amount"] = self.pick(data, AMOUNTS, "amount")
        if self.rare(data, "a forbidden change", 20):
            name = data.draw(st.sampled_from(forbidden), label="forbidden attribute")
            if name in ("amount", "status") or name == "version" and data.draw(st.booleans(), label="as ADD"):
                add[name] = 1
            else:
                set_[name] = self.instant(data) if name == "created_at" else "changed"
        elif self.rare(data, "an overlap", 20):
            name = data.draw(st.sampled_from(["note", "score", "blob"]), label="overlapping attribute")
            kind = data.draw(st.sampled_from(["set+remove", "remove twice", "set+add", "remove+add"]), label="overlap")
            if kind in ("set+remove", "set+add"):
                set_[name] = 1 if name == "score" else "x"
            if kind in ("set+remove", "remove+add", "remove twice"):
                remove += [name, name] if kind == "remove twice" else [name]
            if kind in ("set+add", "remove+add"):
                add[name] = 1
        kw: dict[str, Any] = {}
        if set_:
            kw["set"] = set_
        if remove:
            kw["remove"] = remove
        if add:
            kw["add"] = add
        if entity == "Account" and data.draw(st.integers(0, 5), label="versioned (5)") == 5 \
                or self.rare(data, "expected_version", 24):
            current = self.version_of(key.get("account_id"))
            kw["expected_version"] = data.draw(st.sampled_from([current, current + 1]), label="expected version")
        kw["must_exist"] = data.draw(st.booleans(), label="must exist") if must_exist is None else must_exist
        return Call("update", entity, key, kw)

    def set_value(self, data: st.DataObject, entity: str, name: str) -> Any:
        if name == "email":
            return self.pick(data, self.emails, "email", BAD_EMAILS)
        if name == "region":
            return self.pick(data, self.regions, "region", BAD_STRINGS)
        if name == "team":
            return self.pick(data, self.teams, "team", BAD_STRINGS)
        if name == "status":
            return self.pick(data, ["PENDING", "PAID", "SHIPPED"], "status", ["pending", ""])
        if name == "amount":
            return self.pick(data, AMOUNTS, "amount", BAD_AMOUNTS)
        if name == "escalations":
            return data.draw(st.sampled_from([0, 3]), label="escalations")
        if name == TTL:
            return self.pick(data, [GOOD_TTL], "ttl", [BAD_TTL])
        return self.free_value(data, name)

    def draw_delete(self, data: st.DataObject, entity: str) -> Call:
        key = self.account_key(data) if entity == "Account" else self.order_key(data)
        mode = data.draw(st.sampled_from(["plain", "must_exist", "expected_version"]), label="delete mode")
        kw: dict[str, Any] = {}
        if mode == "must_exist":
            kw["must_exist"] = True
        elif mode == "expected_version" and (entity == "Account" or self.rare(data, "expected_version, unversioned")):
            current = self.version_of(key.get("account_id"))
            kw["expected_version"] = data.draw(st.sampled_from([current, current + 1]), label="expected version")
        return Call("delete", entity, key, kw)

    def draw_call(self, data: st.DataObject) -> Call:
        op = data.draw(st.sampled_from(["put", "update", "delete"]), label="operation")
        entity = data.draw(st.sampled_from(["Account", "Order"]), label="entity")
        return {"put": self.draw_put, "update": self.draw_update, "delete": self.draw_delete}[op](data, entity)

    # bookkeeping -----------------------------------------------------------------------------
    def begin(self) -> None:
        self.step += 1
        STATS["steps"] += 1
        self.touched_items, self.read_keys = [], []

    def note_touch(self, call: Call, outcome: Outcome | None) -> None:
        """Remember the items a call may have changed (before and after) and its key to read back."""
        if outcome is not None:
            for key, new in outcome.writes.items():
                self.touched_items += [i for i in (self.ref.items.get(key), new) if i is not None]
        try:
            self.ref.get(call.entity, self.key_of(call))
        except Refused:
            return
        self.read_keys.append((call.entity, self.key_of(call)))

    @staticmethod
    def key_of(call: Call) -> dict[str, Any]:
        if call.op != "put":
            return call.arg
        return {f: call.arg[f] for f in ENTITIES[call.entity].key_fields if f in call.arg}

    @staticmethod
    def count(call: Call | str, outcome: str) -> None:
        if isinstance(call, Call):
            upsert = call.op == "update" and call.kw.get("must_exist") is False
            call = f"{'upsert' if upsert else call.op} {call.entity}"
        STATS[f"{call}: {outcome}"] += 1

    def expect_error(self, what: str, exc: BaseException, classes: tuple[type[BaseException], ...]) -> None:
        assert isinstance(exc, classes), (
            f"{what}: raised {type(exc).__name__}: {exc}\n  expected one of: {[c.__name__ for c in classes]}"
        )
        STATS["refusals checked"] += 1

    def mirror(self, what: str, call: Callable[[], Any], first: Any) -> None:
        """Run on the twin table what ``first`` came from on the table: the same error class, or
        the same result (the two tables hold the same items, so the same call must agree)."""
        try:
            result = call()
        except RuntimeClientError as exc:
            assert isinstance(first, RuntimeClientError) and type(exc) is type(first), (
                f"{what} on the twin table raised {type(exc).__name__}: {exc}\n  on the table: {show(first)}"
            )
            return
        assert not isinstance(first, BaseException), (
            f"{what} succeeded on the twin table, returning {show(result)}; on the table it raised "
            f"{type(first).__name__}: {first}"
        )
        assert canon_item(result) == canon_item(first) if isinstance(result, dict) or result is None else result == first, (
            f"{what}: the twin table returned {show(result)}, the table {show(first)}"
        )
        STATS["twin calls agreed"] += 1

    # rules -----------------------------------------------------------------------------------
    def single(self, call: Call) -> None:
        self.begin()
        try:
            outcome: Outcome | None = call.predict(self.ref)
            refused: Refused | None = None
        except Refused as exc:
            outcome, refused = None, exc
        self.note_touch(call, outcome)
        try:
            result = call.run(self.table)
        except RuntimeClientError as exc:
            self.mirror(f"{call!r}", lambda: call.run(self.twin), exc)
            if refused is not None:
                self.expect_error(f"{call!r} ({refused})", exc, refused.classes)
                self.count(call, "refused")
            else:
                assert outcome is not None
                assert outcome.condition is not None, f"{call!r}: unexpected {type(exc).__name__}: {exc}"
                self.expect_error(f"{call!r} ({outcome.why})", exc, (outcome.condition,))
                self.count(call, "condition failed")
            return
        self.mirror(f"{call!r}", lambda: call.run(self.twin), result)
        assert refused is None, f"{call!r} succeeded, returning {show(result)}; expected a refusal: {refused}"
        assert outcome is not None
        assert outcome.condition is None, (
            f"{call!r} succeeded, returning {show(result)}; expected {outcome.condition.__name__}: {outcome.why}"
        )
        self.ref.apply(outcome)
        self.count(call, "done")
        assert canon_item(result) == canon_item(outcome.result), (
            f"{call!r} returned an item that differs from the expected one:\n{differences(result, outcome.result)}"
        )

    @rule(data=st.data())
    def put_account(self, data: st.DataObject) -> None:
        self.single(self.draw_put(data, "Account"))

    @rule(data=st.data())
    def put_order(self, data: st.DataObject) -> None:
        self.single(self.draw_put(data, "Order"))

    @rule(data=st.data())
    def update_account(self, data: st.DataObject) -> None:
        self.single(self.draw_update(data, "Account"))

    @rule(data=st.data())
    def update_order(self, data: st.DataObject) -> None:
        self.single(self.draw_update(data, "Order"))

    @rule(data=st.data())
    def upsert(self, data: st.DataObject) -> None:
        entity = data.draw(st.sampled_from(["Account", "Order"]), label="entity")
        self.single(self.draw_update(data, entity, must_exist=False))

    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        self.single(self.draw_delete(data, data.draw(st.sampled_from(["Account", "Order"]), label="entity")))

    @rule(data=st.data())
    def transaction(self, data: st.DataObject) -> None:
        self.clean = data.draw(st.integers(0, 2), label="with invalid values (2)") < 2
        try:
            calls = [self.draw_call(data) for _ in range(data.draw(st.integers(2, 3), label="actions"))]
        finally:
            self.clean = False
        self.begin()
        # GIVEN the reference's prediction for each action, against the state before the transaction
        expected: tuple[type[BaseException], ...] = ()
        why = ""
        outcomes: list[Outcome] = []
        keys: list[Any] = []
        for call in calls:
            try:
                outcome = call.predict(self.ref, in_transaction=True)
            except Refused as exc:
                expected, why = exc.classes, f"{call!r}: {exc}"
                self.note_touch(call, None)
                break
            key = next(iter(outcome.writes), None) or self.ref_key(call)
            if key in keys:
                expected, why = (ItemValidationError,), f"{call!r}: a second action on one item"
                break
            keys.append(key)
            outcomes.append(outcome)
            self.note_touch(call, outcome)
        if not expected and any(o.condition for o in outcomes):
            expected = (TransactionCanceledError,)
            why = "; ".join(f"{c!r}: {o.why}" for c, o in zip(calls, outcomes, strict=False) if o.condition)
        # WHEN the actions are committed in one transaction (a fresh idempotency token; the twin
        # table commits the same actions with the same token)
        token = f"mbt-{RUN}-{self.step}-{STATS['steps']}"

        def commit(target: TableClient) -> None:
            with target.transaction(client_request_token=token) as tx:
                for call in calls:
                    call.run(tx)

        try:
            commit(self.table)
        except RuntimeClientError as exc:
            self.mirror(f"transaction {calls!r}", lambda: commit(self.twin), exc)
            # THEN a refused or cancelled transaction raises the predicted error and writes nothing
            assert expected, f"transaction {calls!r}: unexpected {type(exc).__name__}: {exc}"
            self.expect_error(f"transaction {calls!r} ({why})", exc, expected)
            self.count("transaction", "cancelled" if expected == (TransactionCanceledError,) else "refused")
            return
        self.mirror(f"transaction {calls!r}", lambda: commit(self.twin), None)
        assert not expected, f"transaction {calls!r} committed; expected {[c.__name__ for c in expected]}: {why}"
        for outcome in outcomes:  # distinct items: applying one by one is the atomic result
            self.ref.apply(outcome)
        self.count("transaction", "done")

    def ref_key(self, call: Call) -> Any:
        """The table key a call addresses (for a call whose condition fails, it writes nothing)."""
        return self.ref.table_key(ENTITIES[call.entity], self.key_of(call), Errors(), strict=False)

    @rule(data=st.data())
    def batch_write(self, data: st.DataObject) -> None:
        # Orders on a bounded set of 32 keys (8 ids x 2 accounts x 2 instants; later batches
        # overwrite earlier ones), so 26 distinct puts always fit and cross the 25-item chunk.
        combos = [(a, o, t) for a in self.accounts[:2] for o in BULK_ORDER_IDS for t in self.instants[:2]]
        big = data.draw(st.integers(0, 2), label="more than 25 puts (2)") == 2
        n = 26 if big else data.draw(st.sampled_from([2, 4, 7]), label="puts")
        puts = []
        self.clean = True
        try:
            for account, order, at in data.draw(st.permutations(combos), label="keys")[:n]:
                attrs: dict[str, Any] = {"account_id": account, "order_id": order, "created_at": self.instant(data, at)}
                if data.draw(st.booleans(), label="pending"):
                    attrs.update(status="PENDING", amount=self.pick(data, AMOUNTS, "amount"))
                if data.draw(st.integers(0, 3), label="escalated (3)") == 3:
                    attrs["escalations"] = 1
                puts.append(("Order", attrs))
        finally:
            self.clean = False
        if self.rare(data, "one invalid item in the batch", 6):
            # e.g. a document too deep for DynamoDB in the second chunk: nothing may be written
            at = data.draw(st.integers(0, n - 1), label="invalid item at")
            name, value = data.draw(st.sampled_from(
                [("meta", nested(32)), ("meta", nested(40)), ("amount", -1), ("created_at", "yesterday")]), label="invalid")
            puts[at][1][name] = value
        elif data.draw(st.booleans(), label="a deep document"):
            puts[data.draw(st.integers(0, n - 1), label="at")][1]["meta"] = nested(31)
        # Deletes of other stored items (rarely one the batch also puts: refused, a key appears twice)
        put_keys = {self.ref.table_key(ENTITIES[e], a, Errors(), strict=False) for e, a in puts}
        existing = [i for k, i in self.ref.items.items() if k not in put_keys or self.rare(data, "a key twice", 40)]
        deletes = []
        if existing:
            for item in data.draw(st.lists(st.sampled_from(existing), max_size=4, unique_by=id), label="deletes"):
                ent = ENTITIES[item[TYPE]]
                deletes.append((item[TYPE], {f: item[f] for f in ent.key_fields}))
        self.begin()
        try:
            outcome: Outcome | None = self.ref.batch_write(puts, deletes)
            refused: Refused | None = None
        except Refused as exc:
            outcome, refused = None, exc
        if outcome is not None:
            for key, new in outcome.writes.items():
                self.touched_items += [i for i in (self.ref.items.get(key), new) if i is not None]
        self.read_keys += [(e, {f: a[f] for f in ENTITIES[e].key_fields if f in a}) for e, a in puts] + deletes
        # WHEN the puts and deletes go in one batch_write (chunks of 25)
        try:
            count = self.table.batch_write(puts=puts, deletes=deletes)
        except RuntimeClientError as exc:
            self.mirror("batch_write", lambda: self.twin.batch_write(puts=puts, deletes=deletes), exc)
            # THEN an invalid item anywhere refuses the whole batch before anything is written
            assert refused is not None, f"batch_write of {len(puts)} puts, {len(deletes)} deletes: unexpected {exc!r}"
            self.expect_error(f"batch_write ({refused})", exc, refused.classes)
            self.count("batch_write", "refused")
            self.read_keys = [(e, k) for e, k in self.read_keys if self.readable(e, k)]
            return
        self.mirror("batch_write", lambda: self.twin.batch_write(puts=puts, deletes=deletes), count)
        assert refused is None, f"batch_write of {len(puts)} puts + {deletes!r} succeeded; expected {refused}"
        assert outcome is not None and count == outcome.result
        self.ref.apply(outcome)
        self.count("batch_write", "done, over 25 requests" if count > 25 else "done")

    def readable(self, entity: str, key: dict[str, Any]) -> bool:
        try:
            self.ref.get(entity, key)
        except Refused:
            return False
        return True

    @rule(data=st.data())
    def refused_read(self, data: st.DataObject) -> None:
        """Reads the client must refuse before any call: unknown names, missing or oversized
        partition values, an inverted range, a consistent read of a GSI, an unknown pattern."""
        kind = data.draw(st.sampled_from(
            ["get unknown name", "query typo", "query option typo", "missing partition field", "oversized partition",
             "inverted range", "consistent GSI read", "zero limit", "unknown pattern"]), label="refused read")
        self.begin()
        account = self.pick(data, self.accounts, "account_id")
        pattern, args, options = "orders newest first", {"account_id": account}, {}
        if kind == "get unknown name":
            args = {"account_id": account, data.draw(st.sampled_from(["emial", "email"]), label="name"): "x"}
            classes = self.refusal(lambda: self.ref.get("Account", args))
            self.expect_refusal(f"get('Account', **{show(args)})", lambda: self.table.get("Account", **args), classes)
            return
        if kind == "query typo":
            pattern = data.draw(st.sampled_from(["order by id", "orders before"]), label="pattern")
            args = {"order_idd": "o1"} if pattern == "order by id" else {"account_id": account, "created_at": INSTANTS[0],
                                                                        "order_idd": "o1"}
        elif kind == "query option typo":
            args = {"account_id": account, data.draw(st.sampled_from(["limt", "decending", "cursr"]), label="option"): 1}
        elif kind == "missing partition field":
            pattern, args = "team accounts", {"region": self.pick(data, self.regions, "region")}
        elif kind == "oversized partition":
            args = {"account_id": long_value(data.draw(st.sampled_from([2044, 3000]), label="bytes"), "a")}
        elif kind == "inverted range":
            pattern, args = "orders in a period", {"account_id": account, "created_at": (INSTANTS[0], INSTANTS[3])}
        elif kind == "consistent GSI read":
            pattern, args, options = "account by email", {"email": self.pick(data, self.emails, "email")}, {"consistent": True}
        elif kind == "zero limit":
            options = {"limit": 0}
        else:
            pattern = "orders by colour"
        classes = self.refusal(lambda: self.ref.query(pattern, args, **options))
        # WHEN the read is attempted THEN the predicted error, before any item is returned
        self.expect_refusal(f"query({pattern!r}, **{show(args)}, **{options})",
                            lambda: self.table.query(pattern, **args, **options), classes)

    def expect_refusal(self, what: str, call: Callable[[], Any], classes: tuple[type[BaseException], ...]) -> None:
        try:
            result = call()
        except RuntimeClientError as exc:
            self.expect_error(what, exc, classes)
            self.count("read", "refused")
            return
        raise AssertionError(f"{what} returned {show(result)}; expected {[c.__name__ for c in classes]}")

    @staticmethod
    def refusal(predict: Callable[[], Any]) -> tuple[type[BaseException], ...]:
        try:
            predict()
        except Refused as exc:
            return exc.classes
        raise AssertionError("the reference accepts this read; the rule only draws refused reads")

    # invariants ------------------------------------------------------------------------------
    @invariant()
    def table_equals_reference(self) -> None:
        """Every stored item, key attributes included, is exactly the reference's."""
        items = self.scan()
        assert items.keys() == self.ref.items.keys(), (
            f"after step {self.step}: items only in the table: {show(sorted(items.keys() - self.ref.items.keys()), 600)}; "
            f"only in the reference: {show(sorted(self.ref.items.keys() - items.keys()), 600)}"
        )
        for key, item in items.items():
            expected = self.ref.items[key]
            assert canon_item(item) == canon_item(expected), (
                f"after step {self.step}: stored item {show(key, 120)} differs from the reference:\n"
                f"{differences(item, expected)}"
            )

    @invariant()
    def reads_agree_with_reference(self) -> None:
        """get / batch_get of the touched keys and every access pattern over the touched partitions."""
        if len(self.read_keys) == 1:
            ((entity, key),) = self.read_keys
            got = self.table.get(entity, consistent=True, **key)
            expected = self.ref.get(entity, key)
            assert canon_item(got) == canon_item(expected), (
                f"get({entity!r}, **{show(key)}) differs from the reference:\n{differences(got, expected)}"
            )
            STATS["gets compared"] += 1
        elif self.read_keys:
            unique = list({repr(sorted(self.ref.table_key(ENTITIES[e], k, Errors(), strict=True) or ())): (e, k)
                           for e, k in self.read_keys}.values())
            got_all = self.table.batch_get(unique, consistent=True)
            for (entity, key), got in zip(unique, got_all, strict=True):
                expected = self.ref.get(entity, key)
                assert canon_item(got) == canon_item(expected), (
                    f"batch_get ({entity!r}, {show(key)}) differs from the reference:\n{differences(got, expected)}"
                )
            STATS["gets compared"] += len(unique)
        # Every access pattern over every partition the step touched: at most READS_PER_STEP
        # reads now (a batch touches dozens of partitions), the rest on later steps or at the end.
        for pattern, args in self.partitions(self.touched_items):
            self.pending.setdefault(pattern + repr(sorted(args.items())), (pattern, args))
        reads = 0
        while self.pending and reads < READS_PER_STEP:
            ident = next(iter(self.pending))
            reads += self.check_pattern(*self.pending.pop(ident))

    def scan(self, table: TableClient | None = None) -> dict[tuple[str, str], dict[str, Any]]:
        out: dict[tuple[str, str], dict[str, Any]] = {}
        kw: dict[str, Any] = {"TableName": (table or self.table).table_name, "ConsistentRead": True}
        while True:
            page = self.raw.scan(**kw)
            for wire in page["Items"]:
                item = {k: from_wire(v) for k, v in wire.items()}
                out[(item[PK], item[SK])] = item
            if "LastEvaluatedKey" not in page:
                return out
            kw["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def partitions(self, items: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
        """(pattern, arguments) that read every partition and range position of ``items``."""
        how = list(REPRESENTATIONS.values())[self.step % len(REPRESENTATIONS)]  # same instant, another offset
        out: dict[str, tuple[str, dict[str, Any]]] = {}

        def add(pattern: str, **args: Any) -> None:
            out.setdefault(pattern + repr(sorted(args.items())), (pattern, args))

        lowest = how(self.instants[0])
        for item in items:
            if item[TYPE] == "Account":
                add("account profile", account_id=item["account_id"])
                add("account with orders", account_id=item["account_id"])
                add("account by email", email=item["email"])
                add("holdings of email", email=item["email"])
                if "region" in item and "team" in item:
                    add("team accounts", region=item["region"], team=item["team"])
                    add("team roster", team=item["team"])
                continue
            account, at = item["account_id"], how(instant_of(item["created_at"]))
            add("account with orders", account_id=account)
            add("orders newest first", account_id=account)
            add("orders in a period", account_id=account, created_at=(at, at) if self.step % 2 else (lowest, at))
            add("orders before", account_id=account, created_at=at)
            add("orders until", account_id=account, created_at=at)
            add("order by id", order_id=item["order_id"])
            add("holdings of order", order_id=item["order_id"])
            add("account roster", account_id=account)
            add("holdings of email", email=item["order_id"])  # the Account partition it may share
            add("team roster", team=account)
            add("pending orders in a period", status="PENDING", created_at=(at, at))
            add("pending orders since", status="PENDING", created_at=at)
            amount = item.get("amount", 0)
            add("escalated orders from amount", account_id=account, amount=amount)
            add("escalated orders above amount", account_id=account, amount=amount)
        return list(out.values())

    def check_pattern(self, pattern: str, args: dict[str, Any]) -> bool:
        """Read a pattern and compare it with the reference; False if skipped as unchanged."""
        expected = self.ref.query(pattern, args)
        # A read whose expected result is unchanged since it was verified reads unchanged data
        # (the Scan check has verified every item): it cannot return anything new.
        ident, fingerprint = pattern + repr(sorted(args.items())), [canon_item(i) for i in expected]
        if self.verified.get(ident) == fingerprint:
            return False
        self.verified[ident] = fingerprint
        self.reads += 1
        if self.ref.foreign_in_partition:
            STATS[FOREIGN] += 1
        where = f"after step {self.step}: {pattern!r} with {show(args, 200)}"
        # WHEN read in full THEN the same items, in key order
        self.same_results(where + " (query_all)", pattern, list(self.table.query_all(pattern, args)), expected)
        # AND WHEN read in pages following cursors (every third read) THEN the same, pages within the limit
        if len(expected) >= 2 and self.reads % 3 == 1:
            limit = (len(expected) + 1) // 2
            pages, cursor, items = 0, None, []
            while True:
                page = self.table.query(pattern, args, limit=limit, cursor=cursor)
                assert len(page.items) <= limit, f"{where}: a page of {len(page.items)} items with limit={limit}"
                items += page.items
                pages, cursor = pages + 1, page.cursor
                if cursor is None:
                    break
                if pages == 1:
                    # AND the twin table (same model, same cursor_key) refuses the cursor
                    with pytest.raises(CursorError):
                        self.twin.query(pattern, args, limit=limit, cursor=cursor)
                    STATS["cursors refused by the twin"] += 1
                assert pages <= len(expected) + 1, f"{where}: more pages than items with limit={limit}"
            self.same_results(f"{where} (pages of {limit})", pattern, items, expected)
        return True

    def same_results(self, where: str, pattern: str, actual: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
        STATS["queries compared"] += 1
        missing = Counter(map(canon_item, expected)) - Counter(map(canon_item, actual))
        extra = Counter(map(canon_item, actual)) - Counter(map(canon_item, expected))
        assert not missing and not extra, (
            f"{where}: {len(actual)} items, expected {len(expected)}\n  not returned: {show(list(missing), 1500)}\n"
            f"  returned but not expected: {show(list(extra), 1500)}"
        )
        # Items with equal sort keys (a GSI key is not unique) may come in any order between them.
        order = [self.ref.sort_key_of(pattern, i) for i in actual]
        assert order == [self.ref.sort_key_of(pattern, i) for i in expected], (
            f"{where}: order differs:\n  {show([i.get('order_id', i.get('account_id')) for i in actual], 800)}\n"
            f"expected\n  {show([i.get('order_id', i.get('account_id')) for i in expected], 800)}"
        )

    def teardown(self) -> None:
        try:
            if sys.exc_info()[0] is None:  # not while a failure propagates: it would replace it
                # THEN at the end the reads still waiting agree with the reference (a bounded number)
                reads = 0
                for pattern, args in self.pending.values():
                    reads += self.check_pattern(pattern, args)
                    if reads == READS_AT_END:
                        break
                # AND the twin table, which received every write too, equals the reference
                twin = self.scan(self.twin)
                assert {k: canon_item(i) for k, i in twin.items()} == {
                    k: canon_item(i) for k, i in self.ref.items.items()
                }, f"the twin table differs from the reference: only in the twin: " \
                   f"{show(sorted(twin.keys() - self.ref.items.keys()), 600)}; missing from it: " \
                   f"{show(sorted(self.ref.items.keys() - twin.keys()), 600)}"
        finally:
            self.clear()

    def clear(self) -> None:
        """Delete every item of both tables so the next example starts from empty tables."""
        for table in (self.table, self.twin):
            keys = [{PK: {"S": k[0]}, SK: {"S": k[1]}} for k in self.scan(table)]
            for start in range(0, len(keys), 25):
                request = {table.table_name: [{"DeleteRequest": {"Key": k}} for k in keys[start:start + 25]]}
                while request:
                    request = self.raw.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}


# --------------------------------------------------------------------------------- the tests
def test_reference_builds_the_documented_keys() -> None:
    """The reference's own key rules, on the documented examples (so its predictions mean something)."""
    # GIVEN the documented escaping rule THEN separators, '%', '$' and control characters are escaped
    assert escape("acme#x") == "acme%23x" and escape("50%") == "50%25" and escape("$ \x00") == "%24%20%00"
    assert escape("Zoë😀&") == "Zoë😀&"  # code points above '%' pass through
    # AND equal instants in different offsets give one canonical UTC text
    assert utc_text("2024-06-01T14:00:00+02:00") == utc_text(datetime(2024, 6, 1, 12, tzinfo=UTC)) \
        == utc_text("2024-06-01T12:00:00Z") == "2024-06-01T12:00:00.000000Z"
    assert utc_text(datetime(2024, 6, 1, 12)) is None  # naive: no instant
    # AND the reference builds the stored item's keys from its own rules
    ref = Reference()
    out = ref.put("Order", {"account_id": "a#1", "order_id": "o%", "created_at": "2024-06-01T14:00:00.5+02:00",
                            "amount": 7, "status": "PENDING", "escalations": 1})
    ((key, item),) = out.writes.items()
    assert key == ("ACCT#a%231", "ORDER#2024-06-01T12:00:00.500000Z#o%25")
    assert (item["GSI1PK"], item["GSI2PK"], item["GSI2SK"], item["GSI4SK"]) == (
        "ORDER#o%25", "STATUS#PENDING", "2024-06-01T12:00:00.500000Z#o%25", "000007#o%25")
    # AND the model built for the table declares exactly the reference's patterns
    assert set(MODEL.resolved_patterns) == set(PATTERNS)
    assert {n for n, r in MODEL.resolved_patterns.items() if r.operation == "GetItem"} == {
        n for n, p in PATTERNS.items() if p.get}
    assert set(MODEL.key_attributes()) == {PK, SK, *(f"{i}{p}" for i in INDEXES for p in ("PK", "SK"))}


def test_table_client_agrees_with_the_reference_model(
    synth_table_template: Callable[..., dict[str, Any]],
    local_deploy: Callable[..., LocalDeployment],
    dynamodb_client: Any,
    record_property: Callable[[str, object], None],
    request: pytest.FixtureRequest,
) -> None:
    # GIVEN a table created from the synthesized CloudFormation template of the test model
    template = synth_table_template(MODEL)
    assert {r["Type"] for r in template["Resources"].values()} >= {"AWS::DynamoDB::GlobalTable"}
    deployment = local_deploy(template, name_prefix="mbt-")
    (name,) = deployment.tables.values()
    # AND its twin from the same template, the two clients sharing one cursor secret
    (twin_name,) = local_deploy(template, name_prefix="mbt-twin-").tables.values()
    TableMachine.table = TableClient(MODEL, name, client=dynamodb_client, cursor_key=CURSOR_KEY)
    TableMachine.twin = TableClient(MODEL, twin_name, client=dynamodb_client, cursor_key=CURSOR_KEY)
    TableMachine.raw = dynamodb_client
    machine: Any = TableMachine
    if SEED is not None:
        machine = seed(SEED)(TableMachine)
    STATS.clear()
    started = time.monotonic()
    try:
        # WHEN hypothesis runs random programs against it, THEN every step agrees with the reference
        run_state_machine_as_test(machine, settings=settings(
            max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, database=None,
            derandomize=SEED is None, print_blob=True, report_multiple_bugs=False,
            phases=list(Phase) if SHRINK else [p for p in Phase if p not in (Phase.shrink, Phase.explain)],
            suppress_health_check=list(HealthCheck),  # as hypothesis does by default for state machines
        ))
    finally:
        elapsed = time.monotonic() - started
        summary = (
            f"model-based test: {STATS['examples']} examples, {STATS['steps']} steps "
            f"(settings {EXAMPLES} x {STEPS}{', soak' if SOAK else ''}, "
            f"{'seed ' + str(SEED) if SEED is not None else 'derandomized'}), "
            f"{STATS['queries compared']} pattern reads, {STATS['gets compared']} gets and "
            f"{STATS['refusals checked']} refusals compared, {elapsed:.1f} s; "
            f"{STATS[FOREIGN]} reads of a partition holding another entity's items; twin table: "
            f"{STATS['twin calls agreed']} calls agreed, {STATS['cursors refused by the twin']} cursors refused"
        )
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(STATS.items()) if ":" in k)
        summary += f"\n  outcomes: {outcomes}"
        for key in ("examples", "steps", "queries compared", "gets compared", "refusals checked"):
            record_property(f"mbt {key}", STATS[key])
        record_property("mbt seconds", round(elapsed, 1))
        run_summary.report(request.config, summary)

