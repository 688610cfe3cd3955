"""A catalog of bad inputs, each refused with a typed error that names the value and the rule.

Three tables of cases — (a) model definitions, (b) construct props, (c) runtime calls — each
row ``Bad(id, make, error, match)``: ``make`` produces the bad input, ``error`` is the typed
error expected (one of ours: a ``ModelError`` subclass, ``ConstructPropsError`` or a
``RuntimeClientError`` subclass — never a bare ``ValueError``/``KeyError``/``TypeError`` from
deep inside), ``match`` a regex the message must match: it quotes the offending value and a
word of the rule. Model and props errors happen at construction (so at ``cdk synth``); runtime
errors happen before any AWS call (the client records every call and must have made none).

Rows with ``bug=...`` describe how the library SHOULD behave but does not yet: they are
``xfail(strict=True)``, so they turn red the moment the bug is fixed (then drop the ``bug``).

The last section writes to a real table (DynamoDB Local, created from the synthesized
template) and checks that a rejected write leaves the table exactly as it was.
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from constructs_lib.constructs.exceptions import ConstructPropsError
from constructs_lib.model import (
    AccessPattern,
    AccessPatternError,
    Entity,
    Field,
    Index,
    IndexKey,
    Model,
    ModelError,
    ModelFormatError,
    ModelValidationError,
    TemplateError,
)
from constructs_lib.runtime import (
    CounterClient,
    CursorError,
    DynamoDBError,
    ItemValidationError,
    KeyValueError,
    RuntimeClientError,
    TableClient,
    TransactionCanceledError,
    VersionConflictError,
    attr,
    key_segments,
    keys,
)
from constructs_lib.runtime.exceptions import (
    InvalidConditionError,
    SettingsError,
    UnknownAccessPatternError,
    UnknownAttributeError,
    UpdateRejectedError,
)
from constructs_lib.runtime.patterns.counter import CounterSpec

T0 = datetime(2024, 6, 1, tzinfo=UTC)
NOW_MS = int(time.time() * 1000)  # a TTL value in epoch *milliseconds*
OUR_ERRORS = (ModelError, ConstructPropsError, RuntimeClientError)


@dataclass(frozen=True)
class Bad:
    """One bad input: ``make`` raises; ``error`` and ``match`` say how it must be refused."""

    id: str
    make: Callable[..., object]
    error: type[Exception]
    match: str
    bug: str | None = None  # set when the library does not behave so yet (xfail, strict)


def table(*rows: Bad) -> list[Any]:
    return [
        pytest.param(row, id=row.id, marks=[pytest.mark.xfail(strict=True, reason=row.bug)] if row.bug else [])
        for row in rows
    ]


def assert_refused(row: Bad, *args: Any) -> BaseException:
    """WHEN the bad input is made THEN our typed error names the value and the rule."""
    with pytest.raises(Exception) as info:
        row.make(*args)
    err = info.value
    assert isinstance(err, OUR_ERRORS) and type(err).__module__.startswith("constructs_lib."), (
        f"untyped {type(err).__module__}.{type(err).__name__} escaped: {err}"
    )
    assert isinstance(err, row.error), f"expected {row.error.__name__}, got {type(err).__name__}: {err}"
    assert re.search(row.match, str(err), re.DOTALL), f"message does not match {row.match!r}: {err}"
    return err


# (a) Model definition ---------------------------------------------------------------------------
def user(**overrides: Any) -> Entity:
    """A valid entity; each case breaks one thing."""
    spec: dict[str, Any] = {"name": "User", "pk": "USER#{user_id}", "sk": "PROFILE",
                            "fields": {"user_id": "string", "email": "string"}}
    return Entity(**{**spec, **overrides})


def product() -> Entity:
    return Entity("Product", pk="PRODUCT#{sku}", sk="PRODUCT", fields=["sku"])


def model(*entities: Entity, **kw: Any) -> Model:
    return Model("bad", entities=list(entities) or [user()], **kw)


def many_indexes(count: int, kind: str) -> Model:
    names = [f"Index{i:02d}" for i in range(count)]
    keys_ = {n: IndexKey(pk=f"X{i}#{{user_id}}", sk="X") if kind == "GSI" else IndexKey(sk=f"X{i}#{{email}}")
             for i, n in enumerate(names)}
    return model(user(indexes=keys_), indexes=[Index(n, kind=kind) for n in names])  # type: ignore[arg-type]


def ttl_model(**entity: Any) -> Model:
    return model(user(**entity), ttl_attribute="expires_at")


def gsi1(**index_key: Any) -> dict[str, IndexKey]:
    return {"GSI1": IndexKey(**index_key)}


MODEL_CASES = table(
    # Templates
    Bad("glued-literal", lambda: user(pk="USER{user_id}"), TemplateError, r"'USER\{user_id\}'.*glued"),
    Bad("glued-placeholders", lambda: user(pk="USER#{a}{b}"), TemplateError, r"'\{a\}\{b\}'.*glued"),
    Bad("unknown-template-field", lambda: model(user(pk="USER#{uid}")), ModelValidationError,
        r"'USER#\{uid\}' uses unknown field 'uid'"),
    Bad("empty-segment", lambda: user(pk="USER##{user_id}"), TemplateError, r"'USER##\{user_id\}' has an empty segment"),
    Bad("leading-separator", lambda: user(pk="#USER#{user_id}"), TemplateError, r"'#USER#\{user_id\}' has an empty segment"),
    Bad("literal-with-percent", lambda: user(pk="USER%#{user_id}"), TemplateError, r"literal 'USER%' contains.*may not"),
    Bad("literal-with-bound-marker", lambda: user(sk="PRO$FILE"), TemplateError, r"literal 'PRO\$FILE' contains.*may not"),
    Bad("literal-with-space", lambda: user(sk="MY PROFILE"), TemplateError, r"literal 'MY PROFILE' contains.*spaces"),
    Bad("unknown-time-bucket", lambda: user(sk="AT#{at:decade}"), TemplateError, r"unknown time bucket 'decade'"),
    Bad("bucket-of-a-string", lambda: model(user(sk="AT#{email:month}")), ModelValidationError,
        r"time bucket 'month' needs a timestamp or date field.*'email' is a string"),
    Bad("invalid-field-name", lambda: user(pk="USER#{1st}"), TemplateError, r"invalid field name '1st'"),
    Bad("template-not-a-string", lambda: user(pk=42), TemplateError, r"key template 42 must be a non-empty string"),
    Bad("constant-partition-key", lambda: model(user(pk="CONFIG")), ModelValidationError,
        r"pk template 'CONFIG' is a constant.*one partition"),
    Bad("entities-can-build-the-same-key", lambda: model(
        Entity("Left", pk="X#{a}", sk="Y", fields=["a"]), Entity("Right", pk="X#{b}", sk="Y", fields=["b"])),
        ModelValidationError, r"'Left' \(X#\{a\} / Y\) and 'Right' \(X#\{b\} / Y\) can build the same table key"),
    # Names
    Bad("duplicate-entity", lambda: model(user(), user()), ModelValidationError, r"duplicate entity name 'User'"),
    Bad("duplicate-index", lambda: model(user(indexes=gsi1(pk="E#{email}", sk="U")), indexes=[Index("GSI1"), Index("GSI1")]),
        ModelValidationError, r"duplicate index name 'GSI1'"),
    Bad("duplicate-access-pattern", lambda: model(access_patterns=[AccessPattern("me", entity="User")] * 2),
        ModelValidationError, r"duplicate access pattern name 'me'"),
    Bad("entity-name-with-separator", lambda: user(name="User#1"), ModelValidationError, r"entity name 'User#1' must"),
    Bad("index-name-table", lambda: Index("table"), ModelValidationError, r"index name 'table' must.*not 'table'"),
    # Limits
    Bad("21-gsis", lambda: many_indexes(21, "GSI"), ModelValidationError, r"declares 21 GSIs.*at most 20"),
    Bad("6-lsis", lambda: many_indexes(6, "LSI"), ModelValidationError, r"declares 6 LSIs.*at most 5"),
    Bad("lsi-without-table-sort-key", lambda: model(
        Entity("A", pk="A#{a}", fields=["a", "b"], indexes={"ByB": IndexKey(sk="B#{b}")}), indexes=[Index("ByB", kind="LSI")]),
        ModelValidationError, r"LSI 'ByB' needs a table sort key"),
    Bad("101-projected-attributes", lambda: model(user(indexes=gsi1(pk="E#{email}", sk="U")),
        indexes=[Index("GSI1", projection=tuple(f"a{i}" for i in range(101)))]),
        ModelValidationError, r"project 10[12] distinct INCLUDE attributes.*at most 100"),
    Bad("unused-index", lambda: model(indexes=[Index("GSI1")]), ModelValidationError, r"index 'GSI1' is declared but no entity"),
    # Reserved attributes: TTL / version / key attributes
    Bad("ttl-as-table-key-field",
        lambda: ttl_model(sk="EXP#{expires_at}", fields={"user_id": "string", "expires_at": "number:10"}),
        ModelValidationError, r"'expires_at' is reserved as the model's ttl_attribute"),
    Bad("ttl-as-gsi-key-field", lambda: Model("bad", entities=[user(
        fields={"user_id": "string", "expires_at": "number:10"}, indexes=gsi1(pk="EXP#{expires_at}", sk="U"))],
        indexes=[Index("GSI1")], ttl_attribute="expires_at"),
        ModelValidationError, r"'expires_at' is reserved as the model's ttl_attribute"),
    Bad("ttl-as-sparse-condition", lambda: Model("bad", entities=[user(
        indexes=gsi1(pk="E#{email}", sk="U", when_present="expires_at"))], indexes=[Index("GSI1")], ttl_attribute="expires_at"),
        ModelValidationError, r"'expires_at' is reserved as the model's ttl_attribute"),
    Bad("ttl-is-the-sort-key-attribute", lambda: model(ttl_attribute="SK"), ModelValidationError,
        r"'SK' is used as both sk_attribute and ttl_attribute"),
    Bad("version-as-sort-key-field", lambda: model(user(sk="V#{version}", fields={"user_id": "string", "version": "number:6"},
        version_attribute="version")), ModelValidationError, r"version_attribute 'version' is also a key input"),
    Bad("version-as-gsi-key-field", lambda: Model("bad", entities=[user(
        fields={"user_id": "string", "version": "number:6"}, version_attribute="version",
        indexes=gsi1(pk="V#{version}", sk="U"))], indexes=[Index("GSI1")]),
        ModelValidationError, r"version_attribute 'version' is also a key input"),
    Bad("version-is-the-ttl-attribute", lambda: ttl_model(version_attribute="expires_at"), ModelValidationError,
        r"'expires_at' is reserved as the model's ttl_attribute"),
    Bad("field-named-like-the-pk-attribute", lambda: model(user(pk="USER#{PK}", fields=["PK"])), ModelValidationError,
        r"'PK' is reserved as the model's pk_attribute"),
    Bad("entity-attribute-is-the-pk-attribute", lambda: model(pk_attribute="_type"), ModelValidationError,
        r"'_type' is used as both pk_attribute and entity_attribute"),
    Bad("key-attribute-name-over-255-bytes", lambda: model(pk_attribute="P" * 300), ModelValidationError,
        r"'P{20,}.*255"),
    # Fields
    Bad("number-width-0", lambda: Field.number(0), ModelValidationError, r"width 0 must be an int from 1 to 38"),
    Bad("number-width-39", lambda: Field.number(39), ModelValidationError, r"width 39 must be an int from 1 to 38"),
    Bad("number-without-width", lambda: user(fields={"user_id": "number"}), ModelValidationError,
        r"field spec 'number' needs a width"),
    Bad("unknown-field-kind", lambda: user(fields={"user_id": "blob"}), ModelValidationError, r"field spec 'blob' must be"),
    Bad("enum-with-empty-choice", lambda: Field.enum("PAID", ""), ModelValidationError, r"choices \('PAID', ''\) must be"),
    # Access patterns that would need a Scan
    Bad("scan-entity-not-in-index", lambda: model(user(indexes=gsi1(pk="E#{email}", sk="U")), product(),
        indexes=[Index("GSI1")], access_patterns=[AccessPattern("products by gsi", entity="Product", index="GSI1")]),
        AccessPatternError, r"'products by gsi'.*'Product' has no keys in index 'GSI1'.*Scan"),
    Bad("scan-range-on-constant-sort-key", lambda: model(access_patterns=[AccessPattern("users after", entity="User", sk=">")]),
        AccessPatternError, r"'users after'.*range condition '>' on constant sort key 'PROFILE'"),
    Bad("scan-entities-in-different-partitions", lambda: model(user(), product(),
        access_patterns=[AccessPattern("users and products", entity=("User", "Product"))]),
        AccessPatternError, r"'users and products'.*share no partition"),
    Bad("scan-unknown-index", lambda: model(access_patterns=[AccessPattern("by nope", entity="User", index="Nope")]),
        AccessPatternError, r"'by nope'.*index 'Nope' does not exist"),
    Bad("scan-unknown-entity", lambda: model(access_patterns=[AccessPattern("ghosts", entity="Ghost")]),
        AccessPatternError, r"'ghosts'.*entity 'Ghost' does not exist"),
    Bad("sk-fields-not-a-leading-run", lambda: model(Entity("Order", pk="U#{u}", sk="O#{at}#{oid}",
        fields={"u": "string", "at": "timestamp", "oid": "string"}),
        access_patterns=[AccessPattern("order", entity="Order", sk="=", sk_fields=("oid",))]),
        AccessPatternError, r"sk_fields \['oid'\] must be a leading run"),
    Bad("begins-with-an-empty-prefix", lambda: model(Entity("Order", pk="U#{u}", sk="{at}#{oid}",
        fields={"u": "string", "at": "timestamp", "oid": "string"}),
        access_patterns=[AccessPattern("orders", entity="Order", sk="begins_with")]),
        AccessPatternError, r"'orders'.*'begins_with' without sk_fields on '\{at\}#\{oid\}'.*empty prefix.*sk_fields=\('at',\)"),
    # Serialized models
    Bad("model-json-of-another-version", lambda: Model.from_json('{"format": "constructs_lib.model", "version": 2}'),
        ModelFormatError, r"version 2 is not supported"),
    Bad("model-json-with-a-bad-entity", lambda: Model.from_dict({**model().to_dict(), "entities": [1]}), ModelFormatError,
        r"entit.*\b1\b"),
)


@pytest.mark.parametrize("row", MODEL_CASES)
def test_bad_model_is_refused_at_construction(row: Bad) -> None:
    # GIVEN one broken part of a model  WHEN it is declared  THEN a ModelError names it
    assert_refused(row)


def test_model_limits_are_exact() -> None:
    # GIVEN models exactly at DynamoDB's limits  WHEN declared  THEN they are accepted
    assert len(many_indexes(20, "GSI").gsis) == 20
    assert len(many_indexes(5, "LSI").lsis) == 5
    assert Field.number(38).width == 38 and Field.number(1).width == 1


# (b) Construct props --------------------------------------------------------------------------
@dataclass
class Kit:
    """aws_cdk modules, the constructs, one never-synthesized stack and source tables."""

    cdk: Any
    dynamodb: Any
    kms: Any
    SingleTable: Any
    ShardedCounter: Any
    StreamAudit: Any
    stack: Any
    tables: dict[str, Any]
    _n: int = 0

    def id(self) -> str:
        self._n += 1
        return f"bad{self._n}"

    def table(self, model_: Model, **props: Any) -> Any:
        return self.SingleTable(self.stack, self.id(), model=model_, **props)


PROPS_MODEL = Model("props", entities=[
    Entity("User", pk="TENANT#{tenant}#USER#{user_id}", sk="PROFILE", fields=["tenant", "user_id", "email"],
           indexes={"GSI1": IndexKey(pk="EMAIL#{email}", sk="USER")}),
    Entity("Session", pk="SESSION#{sid}", sk="SESSION", fields=["sid"]),
], indexes=[Index("GSI1")])


@pytest.fixture(scope="module")
def kit() -> Kit:
    # aws_cdk is imported here, not at module level: tests/synth/conftest.py must be the first to
    # start jsii (it sets the asset-metadata context flag before doing so).
    import aws_cdk as cdk
    from aws_cdk import aws_dynamodb as dynamodb
    from aws_cdk import aws_kms as kms

    from constructs_lib import ShardedCounter, SingleTable, StreamAudit

    stack = cdk.Stack(cdk.App(), "BadProps")  # never synthesized: half-built constructs do no harm
    view = dynamodb.StreamViewType
    tables = {
        "streamed": SingleTable(stack, "Streamed", model=PROPS_MODEL, stream=view.NEW_AND_OLD_IMAGES),
        "keys_only": SingleTable(stack, "KeysOnly", model=PROPS_MODEL, stream=view.KEYS_ONLY),
        "no_stream": SingleTable(stack, "NoStream", model=PROPS_MODEL),
        "pk_only": SingleTable(stack, "PkOnly", model=Model("pk", entities=[Entity("A", pk="A#{a}", fields=["a"])]),
                               stream=view.NEW_AND_OLD_IMAGES),
        "counterish": SingleTable(stack, "Counterish", model=Model("c", entities=[
            Entity("Counterish", pk="COUNTER#{a}#{b}", sk="TOTAL", fields=["a", "b"])]), stream=view.NEW_AND_OLD_IMAGES),
    }
    ShardedCounter(stack, "Clicks", table=tables["streamed"], name="clicks", shards=2)
    return Kit(cdk, dynamodb, kms, SingleTable, ShardedCounter, StreamAudit, stack, tables)


def counter(k: Kit, table_: str = "streamed", **props: Any) -> Any:
    # A fresh family name by default: a refused counter may already have claimed its key prefix.
    id_ = k.id()
    return k.ShardedCounter(k.stack, id_, table=k.tables[table_], **{"name": id_.lower(), "shards": 4, **props})


def audit(k: Kit, table_: str = "streamed", **props: Any) -> Any:
    return k.StreamAudit(k.stack, k.id(), source=k.tables[table_], **props)


PROPS_CASES = table(
    # SingleTable
    Bad("destroy-with-deletion-protection", lambda k: k.table(PROPS_MODEL, removal_policy=k.cdk.RemovalPolicy.DESTROY),
        ConstructPropsError, r"removal_policy=DESTROY with deletion_protection=True"),
    Bad("cmk-without-region", lambda k: k.table(PROPS_MODEL, encryption=k.dynamodb.TableEncryptionV2.customer_managed_key(
        k.kms.Key(k.stack, k.id()))), ConstructPropsError,
        r"customer_managed_key\(\.\.\.\) needs a stack with a concrete region"),
    Bad("index-capacity-with-on-demand-billing",
        lambda k: k.table(PROPS_MODEL, index_write_capacity=k.dynamodb.Capacity.fixed(5)),
        ConstructPropsError, r"index_write_capacity.*on-demand"),
    Bad("provisioned-without-index-capacity", lambda k: k.table(PROPS_MODEL, billing=k.dynamodb.Billing.provisioned(
        read_capacity=k.dynamodb.Capacity.fixed(5), write_capacity=k.dynamodb.Capacity.autoscaled(max_capacity=9))),
        ConstructPropsError, r"needs index_write_capacity for the model's GSIs \(GSI1\)"),
    Bad("model-not-a-model", lambda k: k.SingleTable(k.stack, k.id(), model={"entities": []}), ConstructPropsError,
        r"model must be a constructs_lib.model.Model, got \{'entities': \[\]\}"),
    Bad("invalid-table-name", lambda k: k.table(PROPS_MODEL, table_name="my table!"), ConstructPropsError,
        r"'my table!'.*3.255"),
    # ShardedCounter
    Bad("shards-0", lambda k: counter(k, shards=0), ConstructPropsError, r"shards 0 must be an int from 1 to 1000"),
    Bad("shards-1001", lambda k: counter(k, shards=1001), ConstructPropsError, r"shards 1001 must be an int from 1 to 1000"),
    Bad("shards-and-rate", lambda k: counter(k, expected_writes_per_second=100), ConstructPropsError,
        r"exactly one of shards=4 and expected_writes_per_second=100"),
    Bad("rate-needing-over-1000-shards", lambda k: counter(k, shards=None, expected_writes_per_second=10**7),
        ConstructPropsError, r"needs 12000 shards.*limit is 1000"),
    Bad("family-with-uppercase", lambda k: counter(k, name="Views"), ConstructPropsError, r"counter family 'Views' must match"),
    Bad("family-with-separator", lambda k: counter(k, name="views#eu"), ConstructPropsError,
        r"counter family 'views#eu' must match"),
    Bad("idempotency-without-ttl", lambda k: counter(k, name="likes", idempotency_window=k.cdk.Duration.hours(1)),
        ConstructPropsError, r"'likes'.*idempotent increments need the table's TTL attribute"),
    Bad("family-claimed-twice", lambda k: counter(k, name="clicks"), ConstructPropsError,
        r"key prefix 'COUNTER#clicks#'.*overlaps"),
    Bad("counter-on-table-without-sort-key", lambda k: counter(k, "pk_only"), ConstructPropsError,
        r"model 'pk' has no sort key"),
    Bad("entity-could-build-counter-keys", lambda k: counter(k, "counterish"), ConstructPropsError,
        r"entity 'Counterish' could build the same key as a counter total item"),
    Bad("counter-without-stream-or-schedule", lambda k: counter(k, "no_stream"), ConstructPropsError,
        r"table 'NoStream' has no stream.*schedule"),
    Bad("counter-on-keys-only-stream", lambda k: counter(k, "keys_only"), ConstructPropsError,
        r"stream of SingleTable 'KeysOnly' is KEYS_ONLY.*must be NEW_IMAGE or NEW_AND_OLD_IMAGES"),
    Bad("counter-scheduled-on-a-stream", lambda k: counter(k, schedule=k.cdk.Duration.minutes(5),
        scheduled_counters=["home"]), ConstructPropsError, r"'Streamed' has a stream.*cannot be recomputed on a schedule"),
    Bad("retry-attempts-negative", lambda k: counter(k, retry_attempts=-2), ConstructPropsError,
        r"retry_attempts -2 must be an int from 0"),
    Bad("scheduled-counters-as-a-string", lambda k: counter(k, "no_stream", schedule=k.cdk.Duration.minutes(5),
        scheduled_counters="vid1"), ConstructPropsError, r"scheduled_counters='vid1' must be a list"),
    # StreamAudit
    Bad("redact-table-key-attribute", lambda k: audit(k, redact=["PK"]), ConstructPropsError,
        r"cannot redact 'PK'.*key attribute"),
    Bad("redact-table-key-field", lambda k: audit(k, redact=["user_id"]), ConstructPropsError,
        r"cannot redact field 'user_id'.*'User''s table key"),
    Bad("redact-entity-attribute", lambda k: audit(k, redact=["_type"]), ConstructPropsError,
        r"redact names '_type', the entity attribute"),
    Bad("redact-as-a-string", lambda k: audit(k, redact="email"), ConstructPropsError, r"redact='email' must be a list"),
    Bad("audit-on-keys-only-stream", lambda k: audit(k, "keys_only"), ConstructPropsError,
        r"'KeysOnly' stream is KEYS_ONLY.*NEW_AND_OLD_IMAGES"),
    Bad("audit-without-stream", lambda k: audit(k, "no_stream"), ConstructPropsError, r"'NoStream' stream is off"),
    Bad("include-and-exclude-entities", lambda k: audit(k, include_entities=["User"], exclude_entities=["Session"]),
        ConstructPropsError, r"\['User'\].*\['Session'\].*not both"),
    Bad("audit-unknown-entity", lambda k: audit(k, include_entities=["Ghost"]), ConstructPropsError,
        r"entities \['Ghost'\] are neither in model"),
    Bad("audit-retention-under-a-day", lambda k: audit(k, retention=k.cdk.Duration.hours(1)), ConstructPropsError,
        r"retention 1 hour must be at least 1 day"),
    Bad("audit-day-shards-0", lambda k: audit(k, day_shards=0), ConstructPropsError,
        r"day_shards 0 must be an int from 1 to 100"),
    Bad("audit-own-key-without-region", lambda k: audit(k, encryption="own_key"), ConstructPropsError,
        r"encryption='own_key' needs a stack with a concrete region"),
)


@pytest.mark.parametrize("row", PROPS_CASES)
def test_bad_construct_props_are_refused_at_construction(row: Bad, kit: Kit) -> None:
    # GIVEN a stack and valid source tables  WHEN a construct gets one bad prop  THEN ConstructPropsError
    assert_refused(row, kit)


# (c) Runtime calls ------------------------------------------------------------------------------
SEC = Model(
    "sec",
    entities=[
        Entity("User", pk="TENANT#{tenant}#USER#{user_id}", sk="PROFILE",
               fields={"tenant": "string", "user_id": "string", "email": "string",
                       "tier": Field.enum("FREE", "PRO"), "joined_at": "timestamp"},
               indexes={"GSI1": IndexKey(pk="EMAIL#{email}", sk="TENANT#{tenant}"),
                        "GSI2": IndexKey(pk="TIER#{tier}", sk="{joined_at}#{user_id}")},
               version_attribute="version"),
        Entity("Event", pk="TENANT#{tenant}#USER#{user_id}", sk="EVENT#{at}#{seq}",
               fields={"tenant": "string", "user_id": "string", "at": "timestamp", "seq": "number:6", "day": "date"}),
        Entity("Session", pk="SESSION#{sid}", sk="SESSION", fields=["sid"]),
    ],
    indexes=[Index("GSI1"), Index("GSI2", projection="KEYS_ONLY")],
    access_patterns=[
        AccessPattern("user by email", entity="User", index="GSI1"),
        AccessPattern("users by tier", entity="User", index="GSI2", sk="between"),
        AccessPattern("events of user", entity="Event", sk="between"),
    ],
    ttl_attribute="expires_at",
)
U1 = {"tenant": "acme", "user_id": "u1"}
EV = {**U1, "at": T0, "seq": 1}


class RecordingClient:
    """Stands in for boto3: records every call; a first query page answers one User item and a
    LastEvaluatedKey (so a genuine cursor of "user by email" can be made), later pages nothing."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __getattr__(self, operation: str) -> Callable[..., dict[str, Any]]:
        if operation.startswith("_"):
            raise AttributeError(operation)

        def call(**params: Any) -> dict[str, Any]:
            self.calls.append(operation)
            if operation == "query" and "ExclusiveStartKey" not in params:
                return {"Items": [{"_type": {"S": "User"}, "note": {"S": "x"}}],
                        "LastEvaluatedKey": {"PK": {"S": "p"}, "SK": {"S": "s"}}}
            return {}

        return call


@dataclass
class Runtime:
    table: TableClient
    client: RecordingClient
    counter: CounterClient

    @staticmethod
    def cursor(pattern: str, **values: Any) -> str:
        """A genuine cursor, from another client (so ``client.calls`` stays empty)."""
        page = TableClient(SEC, "sec", client=RecordingClient()).query(pattern, limit=1, **values)
        assert page.cursor is not None
        return page.cursor


@pytest.fixture
def rt() -> Runtime:
    client = RecordingClient()
    return Runtime(TableClient(SEC, "sec", client=client), client,
                   CounterClient(CounterSpec("views", 4), "sec", client=client))  # type: ignore[arg-type]


def session(**attrs: Any) -> tuple[str, dict[str, Any]]:
    return "Session", {"sid": "s1", **attrs}


def forged_cursor(rt: Runtime) -> str:
    """A cursor the client issued, edited to hold a non-key, its signature kept."""
    body, _, mac = rt.cursor("user by email", email="a@x").partition(".")
    data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    data["k"] = "not-a-key"
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=") + "." + mac


def unsigned_cursor(rt: Runtime) -> str:
    """A cursor the client issued, without its signature."""
    return rt.cursor("user by email", email="a@x").partition(".")[0]


def add_101(rt: Runtime) -> None:
    tx = rt.table.transaction()
    for i in range(101):
        tx.put("Session", {"sid": f"s{i}"})


BIG = "x" * (400 * 1024)

RUNTIME_CASES = table(
    # Key values: empty, wrong type, missing
    Bad("empty-string-key-value", lambda rt: rt.table.keys("User", tenant="", user_id="u1"), KeyValueError,
        r"'User.tenant': '' is empty"),
    Bad("int-for-string-key-value", lambda rt: rt.table.keys("User", tenant=42, user_id="u1"), KeyValueError,
        r"'User.tenant': 42 is a int; string fields need a str"),
    Bad("bytes-for-string-key-value", lambda rt: rt.table.keys("User", tenant=b"acme", user_id="u1"), KeyValueError,
        r"b'acme' is a bytes; string fields need a str"),
    Bad("missing-key-value", lambda rt: rt.table.get("User", user_id="u1"), KeyValueError,
        r"needs field 'tenant', which is missing"),
    Bad("empty-key-on-delete", lambda rt: rt.table.delete("Session", {"sid": ""}), KeyValueError, r"'Session.sid': '' is empty"),
    # The separator: values are escaped (round trip in test_key_properties); raw keys and literals that forge it are refused
    Bad("raw-key-with-forged-separator", lambda rt: rt.table.parse_keys(
        {"_type": "User", "PK": "TENANT#acme#evil#USER#u1", "SK": "PROFILE"}), KeyValueError,
        r"'TENANT#acme#evil#USER#u1' does not match template.*5 segments, expected 4"),
    Bad("unescape-raw-separator", lambda rt: key_segments.unescape("a#b"), KeyValueError,
        r"'a#b'.*raw character '#'.*must be escaped"),
    Bad("unescape-non-canonical", lambda rt: key_segments.unescape("%41"), KeyValueError, r"'%41'.*never escaped"),
    Bad("entity-key-literal-with-separator", lambda rt: keys.entity_key("USER#ADMIN", "1"), KeyValueError,
        r"entity type 'USER#ADMIN' must be a non-empty literal"),
    # Unicode
    Bad("lone-surrogate-key-value", lambda rt: rt.table.keys("User", tenant="a\ud800", user_id="u1"), KeyValueError,
        r"'a\\ud800' cannot be UTF-8 encoded \(lone surrogate"),
    Bad("lone-surrogate-counter-id", lambda rt: rt.counter.increment("vid\udc00"), KeyValueError, r"lone surrogate"),
    Bad("lone-surrogate-attribute", lambda rt: rt.table.put(*session(note="a\ud800")), ItemValidationError,
        r"note.*'a\\ud800'.*(UTF-8|surrogate)"),
    # Numbers that would sort wrongly
    Bad("negative-number", lambda rt: rt.table.keys("Event", **{**EV, "seq": -1}), KeyValueError, r"-1 is negative"),
    Bad("number-too-wide", lambda rt: rt.table.keys("Event", **{**EV, "seq": 10**6}), KeyValueError,
        r"1000000 has more than 6 digits.*sort wrongly"),
    Bad("float-number", lambda rt: rt.table.keys("Event", **{**EV, "seq": 1.5}), KeyValueError,
        r"1\.5 is a float; keys that sort need integers"),
    Bad("integral-float-number", lambda rt: rt.table.keys("Event", **{**EV, "seq": 2.0}), KeyValueError, r"2\.0 is a float"),
    Bad("decimal-number", lambda rt: rt.table.keys("Event", **{**EV, "seq": Decimal(3)}), KeyValueError,
        r"Decimal\('3'\) is a Decimal"),
    Bad("bool-number", lambda rt: rt.table.keys("Event", **{**EV, "seq": True}), KeyValueError, r"True is a bool"),
    Bad("numeric-string-number", lambda rt: rt.table.keys("Event", **{**EV, "seq": "12"}), KeyValueError, r"'12' is a str"),
    # Time
    Bad("naive-datetime", lambda rt: rt.table.keys("Event", **{**EV, "at": datetime(2024, 6, 1)}), KeyValueError,
        r"datetime\(2024, 6, 1, 0, 0\) is a naive datetime"),
    Bad("timestamp-string-without-offset", lambda rt: rt.table.keys("Event", **{**EV, "at": "2024-06-01T00:00:00"}),
        KeyValueError, r"'2024-06-01T00:00:00' has no UTC offset"),
    Bad("epoch-int-as-timestamp", lambda rt: rt.table.keys("Event", **{**EV, "at": 1717200000}), KeyValueError,
        r"1717200000 is a int; timestamp fields"),
    Bad("date-as-timestamp", lambda rt: rt.table.keys("Event", **{**EV, "at": date(2024, 6, 1)}), KeyValueError,
        r"date\(2024, 6, 1\) is a date; timestamp fields"),
    Bad("datetime-as-date", lambda rt: rt.table.put("Event", {**EV, "day": T0}), KeyValueError,
        r"'Event.day'.*is a datetime; date fields need a date"),
    Bad("impossible-date", lambda rt: rt.table.put("Event", {**EV, "day": "2024-02-30"}), KeyValueError,
        r"'2024-02-30' is not a valid date"),
    # TTL
    Bad("ttl-in-milliseconds-update", lambda rt: rt.table.update(*session(), set={"expires_at": NOW_MS}), KeyValueError,
        rf"'expires_at': {NOW_MS} looks like epoch milliseconds"),
    Bad("ttl-in-milliseconds-put", lambda rt: rt.table.put(*session(expires_at=NOW_MS)), KeyValueError,
        rf"'expires_at': {NOW_MS} looks like epoch milliseconds"),
    Bad("ttl-years-in-the-past-update", lambda rt: rt.table.update(*session(), set={"expires_at": 1_000_000_000}),
        KeyValueError, r"1000000000 is more than five years in the past"),
    Bad("ttl-years-in-the-past-put", lambda rt: rt.table.put(*session(expires_at=1_000_000_000)), KeyValueError,
        r"1000000000 is more than five years in the past"),
    Bad("ttl-float", lambda rt: rt.table.update(*session(), set={"expires_at": 1.9e9}), KeyValueError,
        r"1900000000\.0 is a float; TTL values must be an int"),
    Bad("expires-in-negative", lambda rt: rt.table.put(*session(), expires_in=timedelta(seconds=-5)), KeyValueError,
        r"expires_in .*-1.* is not positive"),
    Bad("expires-at-naive", lambda rt: rt.table.put(*session(), expires_at=datetime(2030, 1, 1)), KeyValueError,
        r"expires_at datetime.datetime\(2030, 1, 1, 0, 0\) is a naive datetime"),
    # Size and storable values
    Bad("item-over-400kb", lambda rt: rt.table.put(*session(blob=BIG)), ItemValidationError,
        r"Session item is 4096\d\d bytes.*limited to 409600"),
    Bad("item-over-400kb-in-batch", lambda rt: rt.table.batch_write(puts=[session(blob=BIG)]), ItemValidationError,
        r"Session item is 4096\d\d bytes"),
    Bad("update-value-over-400kb", lambda rt: rt.table.update(*session(), set={"blob": BIG + "x"}), ItemValidationError,
        r"('blob'|update of \{'PK': 'SESSION#s1'.*) .*\d+ bytes.*400 KB"),
    Bad("partition-key-over-2048-bytes", lambda rt: rt.table.put(*session(sid="s" * 2100)), KeyValueError,
        r"2048 bytes"),
    Bad("sort-key-over-1024-bytes", lambda rt: rt.table.put("User", {**U1, "user_id": "u" * 1100, "tier": "PRO",
        "joined_at": T0}), KeyValueError, r"GSI2SK.*1024 bytes"),
    Bad("empty-set", lambda rt: rt.table.put(*session(tags=set())), ItemValidationError, r"Session.tags: empty set"),
    Bad("nan-float", lambda rt: rt.table.put(*session(score=float("nan"))), ItemValidationError, r"Session.score: nan"),
    Bad("nan-decimal", lambda rt: rt.table.put(*session(score=Decimal("NaN"))), ItemValidationError,
        r"Session.score.*NaN"),
    Bad("number-over-38-digits", lambda rt: rt.table.put(*session(n=10**40 + 1)), ItemValidationError,
        r"Session.n: 10{39}1 has 41 significant digits.*38"),
    Bad("mixed-type-set", lambda rt: rt.table.put(*session(tags={1, "a"})), ItemValidationError, r"Session.tags"),
    Bad("managed-key-attribute-set", lambda rt: rt.table.put(*session(PK="SESSION#other")), ItemValidationError,
        r"attribute 'PK' is managed by the model"),
    Bad("managed-index-attribute-set", lambda rt: rt.table.put("User", {**U1, "GSI1PK": "EMAIL#x"}), ItemValidationError,
        r"attribute 'GSI1PK' is managed by the model"),
    Bad("enum-value-not-a-choice", lambda rt: rt.table.put("User", {**U1, "tier": "GOLD"}), ItemValidationError,
        r"User.tier: value 'GOLD' is not one of the declared choices"),
    # Names
    Bad("unknown-entity", lambda rt: rt.table.put("Ghost", {"sid": "s1"}), KeyValueError,
        r"entity 'Ghost' is not in model 'sec'"),
    Bad("unknown-access-pattern", lambda rt: rt.table.query("users by name", name="ada"), UnknownAccessPatternError,
        r"'users by name' is not declared"),
    Bad("empty-table-name", lambda rt: TableClient(SEC, ""), RuntimeClientError, r"table_name '' must be a non-empty"),
    # Queries and cursors
    Bad("limit-0", lambda rt: rt.table.query("user by email", email="a@x", limit=0), SettingsError,
        r"limit 0 must be a positive int"),
    Bad("limit-negative", lambda rt: rt.table.query("user by email", email="a@x", limit=-5), SettingsError, r"limit -5 must"),
    Bad("limit-bool", lambda rt: rt.table.query("user by email", email="a@x", limit=True), SettingsError, r"limit True must"),
    Bad("malformed-cursor", lambda rt: rt.table.query("user by email", email="a@x", cursor="not-a-cursor!!"), CursorError,
        r"cursor 'not-a-cursor!!' is malformed"),
    Bad("cursor-not-a-string", lambda rt: rt.table.query("user by email", email="a@x", cursor=12), CursorError,
        r"cursor 12"),
    Bad("cursor-from-another-query", lambda rt: rt.table.query("user by email", email="b@x",
        cursor=rt.cursor("user by email", email="a@x")), CursorError, r"cursor 'ey.*' belongs to a different query"),
    Bad("cursor-from-another-pattern", lambda rt: rt.table.query("events of user", **U1, at=(T0, T0),
        cursor=rt.cursor("user by email", email="a@x")), CursorError, r"belongs to a different query"),
    Bad("cursor-with-a-non-key", lambda rt: rt.table.query("user by email", email="a@x", cursor=forged_cursor(rt)),
        CursorError, r"cursor '.*' is not one this table's client issued \(its signature does not verify\)"),
    Bad("cursor-without-signature", lambda rt: rt.table.query("user by email", email="a@x", cursor=unsigned_cursor(rt)),
        CursorError, r"cursor '.*' is malformed"),
    Bad("between-low-above-high", lambda rt: rt.table.query("events of user", **U1, at=(T0 + timedelta(1), T0)),
        KeyValueError, r"low datetime.*2024, 6, 2.* is above high"),
    Bad("between-not-a-pair", lambda rt: rt.table.query("events of user", **U1, at=T0), KeyValueError,
        r"needs a \(low, high\) pair"),
    Bad("consistent-read-on-gsi", lambda rt: rt.table.query("user by email", email="a@x", consistent=True), SettingsError,
        r"GSI 'GSI1'; GSIs do not support consistent reads"),
    # Batches and transactions
    Bad("batch-write-duplicate-key", lambda rt: rt.table.batch_write(puts=[session(), session(n=2)]), ItemValidationError,
        r"key \{'PK': 'SESSION#s1', 'SK': 'SESSION'\} appears more than once"),
    Bad("batch-write-put-and-delete-same-key", lambda rt: rt.table.batch_write(puts=[session()], deletes=[session()]),
        ItemValidationError, r"'SESSION#s1'.*appears more than once"),
    Bad("batch-write-request-not-a-pair", lambda rt: rt.table.batch_write(puts=[{"sid": "s1"}]), ItemValidationError,
        r"entry \{'sid': 's1'\} must be an \(entity name, attributes\) pair"),
    Bad("transaction-two-actions-same-item", lambda rt: rt.table.transaction().put(*session()).delete(*session()),
        ItemValidationError, r"already has an action on Session \{'PK': 'SESSION#s1'"),
    Bad("transaction-101-actions", add_101, ItemValidationError, r"at most 100 actions"),
    Bad("transaction-empty", lambda rt: rt.table.transaction().commit(), ItemValidationError, r"transaction has no actions"),
    # Updates that would break derived keys or managed attributes
    Bad("update-one-template-input", lambda rt: rt.table.update("User", U1, set={"tier": "PRO"}), UpdateRejectedError,
        r"sets \['tier'\].*index 'GSI2'.*not \['joined_at'\]"),
    Bad("update-table-key-field", lambda rt: rt.table.update("User", U1, set={"tenant": "other"}), UpdateRejectedError,
        r"'tenant' is part of the table key"),
    Bad("update-version-attribute", lambda rt: rt.table.update("User", U1, set={"version": 9}), UpdateRejectedError,
        r"'version' is the version attribute"),
    Bad("update-set-and-remove", lambda rt: rt.table.update("User", U1, set={"nick": "a"}, remove=["nick"]),
        UpdateRejectedError, r"attribute 'nick' is named in both set and remove; an update may change each attribute once"),
    Bad("update-remove-managed-attribute", lambda rt: rt.table.update("User", U1, remove=["GSI1PK"]), UpdateRejectedError,
        r"attribute 'GSI1PK' is managed by the model"),
    Bad("update-add-to-key-input", lambda rt: rt.table.update("User", U1, add={"email": 1}), UpdateRejectedError,
        r"ADD on 'email' is not allowed"),
    Bad("update-add-nan", lambda rt: rt.table.update("User", U1, add={"score": float("nan")}), ItemValidationError,
        r"score.*nan"),
    Bad("update-remove-as-a-string", lambda rt: rt.table.update("User", U1, remove="nickname"), UpdateRejectedError,
        r"remove='nickname' must be a list"),
    Bad("expected-version-negative", lambda rt: rt.table.update("User", U1, set={"nick": "a"}, expected_version=-1),
        UpdateRejectedError, r"expected_version -1 must be a non-negative int"),
    Bad("expected-version-as-string", lambda rt: rt.table.put("User", U1, expected_version="1"), UpdateRejectedError,
        r"expected_version '1' must be a non-negative int"),
    Bad("expected-version-without-version-attribute", lambda rt: rt.table.update(*session(), set={"n": 1}, expected_version=1),
        UpdateRejectedError, r"Session: expected_version given, but the entity has no version_attribute"),
    # Conditions, filters, projections
    Bad("condition-on-a-key-attribute",
        lambda rt: rt.table.update("User", U1, set={"nick": "a"}, condition=attr("GSI1PK") == "x"),
        UnknownAttributeError, r"names 'GSI1PK', an attribute the model manages on User"),
    Bad("condition-used-as-bool", lambda rt: rt.table.delete("User", U1, condition=(attr("a") == 1) or (attr("b") == 2)),
        InvalidConditionError, r"no truth value"),
    Bad("condition-as-a-string", lambda rt: rt.table.delete("User", U1, condition="nick = :x"), InvalidConditionError,
        r"condition='nick = :x' must be a condition built with attr"),
    Bad("condition-with-none", lambda rt: rt.table.delete("User", U1, condition=attr("nick") == None),  # noqa: E711
        InvalidConditionError, r"None never matches"),
    Bad("projection-as-a-string", lambda rt: rt.table.get("User", attributes="nick", **U1), InvalidConditionError,
        r"attributes='nick' must be a list of attribute names"),
    Bad("projection-of-the-entity-attribute", lambda rt: rt.table.get("User", attributes=["_type"], **U1),
        UnknownAttributeError, r"names '_type', an attribute the model manages"),
    # Counters
    Bad("counter-increment-by-float", lambda rt: rt.counter.increment("vid1", 1.5), KeyValueError,
        r"increment by 1\.5 must be an int"),
    Bad("counter-empty-id", lambda rt: rt.counter.increment(""), KeyValueError, r"counter id '' must be a non-empty str"),
    Bad("counter-idempotency-without-window", lambda rt: rt.counter.increment("vid1", idempotency_key="req-1"), KeyValueError,
        r"counter family 'views' was synthesized without idempotent increments"),
)


@pytest.mark.parametrize("row", RUNTIME_CASES)
def test_bad_runtime_call_is_refused_before_any_aws_call(row: Bad, rt: Runtime) -> None:
    # GIVEN a client whose every AWS call is recorded
    # WHEN it gets one bad input  THEN a typed error names it, and nothing was sent to AWS
    assert_refused(row, rt)
    assert rt.client.calls == []


def test_the_catalog_is_large_and_its_cases_distinct() -> None:
    # GIVEN the three tables  THEN they hold at least 45 distinct cases, in all three areas
    ids = [p.id for p in (*MODEL_CASES, *PROPS_CASES, *RUNTIME_CASES)]
    assert len(ids) == len(set(ids)) >= 45
    assert min(len(MODEL_CASES), len(PROPS_CASES), len(RUNTIME_CASES)) >= 15


def test_a_value_with_the_separator_is_escaped_not_refused(rt: Runtime) -> None:
    # GIVEN values that contain the separator, the bound marker and escapes
    values = {"tenant": "acme#USER#x", "user_id": "%23$"}
    # WHEN the key is built THEN no value forges a segment, and it parses back to the same values
    key = rt.table.keys("User", **values)
    assert key["PK"] == "TENANT#acme%23USER%23x#USER#%2523%24"
    assert rt.table.parse_keys({"_type": "User", **key}) == ("User", values)


# Rejected writes on a real table leave it unchanged ----------------------------------------------
@dataclass
class Live:
    table: TableClient
    client: Any
    name: str

    def snapshot(self) -> list[dict[str, Any]]:
        """Every raw item of the table (a Scan: fine in a test), in key order."""
        items, params = [], {"TableName": self.name, "ConsistentRead": True}
        while True:
            page = self.client.scan(**params)
            items += page["Items"]
            if "LastEvaluatedKey" not in page:
                return sorted(items, key=lambda i: (i["PK"]["S"], i["SK"]["S"]))
            params["ExclusiveStartKey"] = page["LastEvaluatedKey"]


@pytest.fixture
def live(synth_table_template: Callable[..., dict[str, Any]], local_deploy: Callable[..., Any],
         dynamodb_client: Any) -> Live:
    """A fresh table on DynamoDB Local, created from the synthesized template of SEC."""
    deployment = local_deploy(synth_table_template(SEC), name_prefix="security-")
    (name,) = deployment.tables.values()
    return Live(TableClient(SEC, name, client=dynamodb_client), dynamodb_client, name)


def seed(live: Live) -> list[dict[str, Any]]:
    live.table.put("User", {**U1, "email": "ada@example.com", "tier": "FREE", "joined_at": T0})
    live.table.put("Session", {"sid": "s0", "n": 1})
    return live.snapshot()


def put_oversized_in_transaction(t: TableClient) -> None:
    with t.transaction() as tx:
        tx.put("Session", {"sid": "s1"})
        tx.put(*session(sid="s2", blob=BIG))


OVERSIZED_WRITES = {
    "put": lambda t: t.put(*session(blob=BIG)),
    "batch_write": lambda t: t.batch_write(puts=[session(sid=f"s{i}") for i in range(30)] + [session(sid="big", blob=BIG)]),
    "transaction": put_oversized_in_transaction,
}


@pytest.mark.integration
@pytest.mark.parametrize("path", OVERSIZED_WRITES)
def test_an_oversized_item_writes_nothing(live: Live, path: str) -> None:
    # GIVEN a table holding a user and a session
    before = seed(live)
    # WHEN an item over 400 KB is written (alone, after 30 valid batch items, or in a transaction)
    with pytest.raises(ItemValidationError, match=r"Session item is \d+ bytes"):
        OVERSIZED_WRITES[path](live.table)
    # THEN nothing at all was written — not even the valid items sent with it
    assert live.snapshot() == before


@pytest.mark.integration
@pytest.mark.parametrize("bad_at", [1, 28])
def test_batch_write_with_a_duplicate_key_writes_nothing(live: Live, bad_at: int) -> None:
    # GIVEN 30 puts where one repeats the key of the first (in the first or the second chunk of 25)
    before = seed(live)
    puts = [session(sid=f"s{i}", n=i) for i in range(1, 31)]
    puts[bad_at] = session(sid="s1", n=99)
    # WHEN they are batch-written  THEN the batch is refused and no chunk was sent
    with pytest.raises(ItemValidationError, match=r"'SESSION#s1'.*appears more than once"):
        live.table.batch_write(puts=puts)
    assert live.snapshot() == before


@pytest.mark.integration
def test_batch_write_with_an_invalid_item_in_a_later_chunk_writes_nothing(live: Live) -> None:
    # GIVEN 26 puts whose last one (in the second chunk) has an empty key value
    before = seed(live)
    puts = [session(sid=f"s{i}") for i in range(1, 26)] + [session(sid="")]
    # WHEN they are batch-written  THEN the first chunk was not written either
    with pytest.raises(KeyValueError, match=r"'Session.sid': '' is empty"):
        live.table.batch_write(puts=puts)
    assert live.snapshot() == before


REJECTED_UPDATES = {
    "one-template-input": ({"set": {"tier": "PRO"}}, UpdateRejectedError, r"\['joined_at'\]"),
    "table-key-field": ({"set": {"user_id": "u2"}}, UpdateRejectedError, r"'user_id' is part of the table key"),
    "version-attribute": ({"set": {"version": 7}}, UpdateRejectedError, r"'version' is the version attribute"),
    "ttl-in-milliseconds": ({"set": {"expires_at": NOW_MS, "nick": "a"}}, KeyValueError, rf"{NOW_MS} looks like epoch milli"),
    "enum-value": ({"set": {"tier": "GOLD", "joined_at": T0}}, ItemValidationError, r"'GOLD' is not one of"),
    "managed-attribute": ({"remove": ["GSI2PK"]}, UpdateRejectedError, r"'GSI2PK' is managed"),
    "stale-version": ({"set": {"nick": "a"}, "expected_version": 5}, VersionConflictError, r"expected version 5"),
    "value-over-400kb": ({"set": {"blob": BIG + "x"}}, (ItemValidationError, DynamoDBError), r"(?i)size|bytes"),
}


@pytest.mark.integration
@pytest.mark.parametrize("case", REJECTED_UPDATES)
def test_a_rejected_update_leaves_the_item_unchanged(live: Live, case: str) -> None:
    # GIVEN a stored user (in GSI1 and GSI2, version 1)
    before = seed(live)
    kwargs, error, match = REJECTED_UPDATES[case]
    # WHEN an update is refused (by the client, or by DynamoDB for the last two)
    with pytest.raises(error, match=match):
        live.table.update("User", U1, **kwargs)
    # THEN every attribute, derived index keys and version included, is as it was
    assert live.snapshot() == before


@pytest.mark.integration
def test_a_transaction_with_one_invalid_action_writes_nothing(live: Live) -> None:
    # GIVEN a seeded table and a transaction of two valid actions
    before = seed(live)
    # WHEN its third action is invalid (a value outside the enum)
    with pytest.raises(ItemValidationError, match=r"'GOLD' is not one of"), live.table.transaction() as tx:
        tx.put("Session", {"sid": "s1"})
        tx.update("Session", {"sid": "s0"}, set={"n": 2})
        tx.put("User", {**U1, "user_id": "u2", "tier": "GOLD"})
    # THEN the transaction was never committed
    assert live.snapshot() == before


@pytest.mark.integration
def test_a_transaction_cancelled_by_one_action_writes_nothing(live: Live) -> None:
    # GIVEN a seeded table
    before = seed(live)
    # WHEN a transaction's last action is a create-only put of an existing item
    tx = live.table.transaction()
    tx.put("Session", {"sid": "s1"}).update("User", U1, set={"nick": "ada"})
    tx.put("Session", {"sid": "s0"}, create_only=True)
    with pytest.raises(TransactionCanceledError, match=r"Put Session \{'PK': 'SESSION#s0'.*ConditionalCheckFailed"):
        tx.commit()
    # THEN DynamoDB applied none of its actions
    assert live.snapshot() == before
