"""``StreamAudit``: every change to every item of a model-bound table, answerable afterwards.

A generated Lambda function turns the table's stream (24 hours) into a permanent audit table,
keyed so that a redelivered record rewrites the identical item: exactly once in effect. The
construct adds the audit table (PITR on; deletion protection and RETAIN by default; optional TTL
retention; the source's key or its own), the audit function, an event source mapping with event
filters from ``include_entities``/``exclude_entities``, a failure queue, and alarms that join the
table's operations view. Application code reads the trail with ``AuditClient``.

See docs/adr/0013-audit-key-layout-and-idempotency.md and
docs/adr/0014-stream-consumers-never-drop-records.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Unpack

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from ..runtime import environment
from ..runtime.exceptions import SettingsError
from ..runtime.patterns.audit.spec import DAY_INDEX, GSI1PK, GSI1SK, PK, SK, AuditSpec
from ..runtime.patterns.counter.spec import ENTITIES
from ..runtime.replication import DELETE_ATTRIBUTE, ORIGIN_ATTRIBUTE
from . import nag, perms
from .bound_table import ModelBoundTable, require_bound_table
from .exceptions import ConstructPropsError
from .grants import combined_grant
from .hardening import Hardening
from .single_table import SingleTable
from .stream_consumer import StreamConsumer, StreamConsumerOptions
from .tables import string_attribute, table_v2

if TYPE_CHECKING:
    from ..model import Model

#: The audit table's index for "what changed on day D".
DAY_INDEX = DAY_INDEX
Encryption = Literal["source", "own_key"]


class StreamAudit(StreamConsumer):
    """An audit trail of a :class:`SingleTable`, fed by its stream.

    Parameters
    ----------
    scope, id
        The usual construct scope and id.
    source
        The audited table. Its stream must be ``NEW_AND_OLD_IMAGES`` (the diff needs both).
    actor_attribute
        Item attribute naming who made a change (e.g. ``updated_by``); absent → ``"unknown"``.
        None to not record actors. Default ``"updated_by"``.
    redact
        Attributes never stored in clear: hashed with a secret salt (``redaction="hash"``, the
        default: equal values stay comparable) or dropped (``"drop"``). Index key attributes
        built from a redacted field (e.g. ``GSI1PK = EMAIL#{email}``) are redacted too. A field of
        the table key cannot be redacted — the key identifies the audited item — so keep
        sensitive data out of table keys. Default none.
    redaction
        ``"hash"`` or ``"drop"``. Default ``"hash"``: an HMAC-SHA256 keyed with a random salt
        kept in a Secrets Manager secret the construct creates (read once per cold start; only
        the audit function may read it), so hashes cannot be brute-forced without the secret.
    include_entities, exclude_entities
        Entity names (the model's entity attribute, e.g. ``_type``) to audit or to skip, applied
        as Lambda **event filters**: skipped items never invoke the function. Give at most one of
        the two. Items without the entity attribute are audited unless ``include_entities`` is
        given. Default: everything.
    retention
        Delete audit records after this long (TTL), at least one day. Default None (keep forever).
    encryption
        ``"source"`` (default): the source's customer-managed key if it has one, else the
        AWS-owned key; ``"own_key"``: a new KMS key with rotation, retained.
    day_shards
        Partitions per day of the ``ByDay`` index, 1–100. Default 8.
    removal_policy
        What CloudFormation does with the audit table (and the key of ``encryption="own_key"``
        and the redaction salt) when it leaves the stack. Default ``RETAIN``: the history outlives
        the stack. ``DESTROY`` (e.g. a dev stack) requires ``deletion_protection=False``.
    deletion_protection
        Refuse DeleteTable on the audit table. Default True.
    **options
        The stream-consumer settings (:class:`StreamConsumerOptions`, documented on
        :class:`StreamConsumerProps`): ``batch_size`` (default 100), ``max_batching_window``
        (1 second), ``retry_attempts`` (5), ``max_record_age`` (1 day), ``parallelization_factor``
        (1), ``iterator_age_alarm_threshold`` (5 minutes), ``memory_size`` (256 MB), ``timeout``
        (60 seconds), ``log_retention`` (one month).
    """

    DEFAULT_TIMEOUT = cdk.Duration.seconds(60)
    DEFAULT_MAX_RECORD_AGE = cdk.Duration.days(1)
    DEFAULT_ITERATOR_AGE = cdk.Duration.minutes(5)

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        source: ModelBoundTable,
        actor_attribute: str | None = "updated_by",
        redact: Sequence[str] = (),
        redaction: Literal["hash", "drop"] = "hash",
        include_entities: Sequence[str] = (),
        exclude_entities: Sequence[str] = (),
        retention: cdk.Duration | None = None,
        encryption: Encryption = "source",
        day_shards: int = 8,
        removal_policy: cdk.RemovalPolicy = cdk.RemovalPolicy.RETAIN,
        deletion_protection: bool = True,
        **options: Unpack[StreamConsumerOptions],
    ) -> None:
        super().__init__(scope, id)
        what = f"StreamAudit {id!r}"
        self._removal = self._validate_removal(what, removal_policy, deletion_protection)
        self._validate_source(what, source)
        model = source.model
        self._validate_entities(what, model, redact, include_entities, exclude_entities)
        self._validate_storage(what, encryption, retention)
        settings = self._configure_consumer(what, options)
        self.region = self._replica_region(what, source)
        redact = _redacted_attributes(what, model, redact)
        self.spec = self._spec(what, model, actor_attribute, redact, redaction, day_shards, retention)
        self.source = source
        #: The entity filters as given (read by the cost estimate: which writes the audit records).
        self.include_entities, self.exclude_entities = tuple(include_entities), tuple(exclude_entities)
        self.encryption_key = self._key(encryption)
        self.table = self._audit_table()
        self.salt_secret = self._salt_secret()
        self._consume(
            table=source, settings=settings, handler="constructs_lib.runtime.handlers.audit.handler",
            environment={**self.environment, **source.runtime_environment},
            description=f"Writes the audit trail of {source.node.path} from its stream",
            filters=self._filters(model.entity_attribute, model.pk_attribute, include_entities, exclude_entities,
                                  region=self.region),
            title=f"StreamAudit {id}", alarm_subject=f"Audit of {source.node.path}",
        )
        #: The generated audit writer (also ``function``).
        self.audit_function = self.function
        if self.region is not None:
            count = len(self._filters(model.entity_attribute, model.pk_attribute, include_entities, exclude_entities,
                                      region=self.region))
            if count > 5:
                cdk.Annotations.of(self).add_warning_v2(
                    "constructs-lib:audit-filter-quota",
                    f"{what}: {count} event filters (a replicated source with exclude_entities); Lambda allows 5 per "
                    "event source mapping unless the quota is raised to 10",
                )

    # Validation -------------------------------------------------------------------------------------
    @staticmethod
    def _validate_removal(
        what: str, removal_policy: cdk.RemovalPolicy, deletion_protection: bool
    ) -> tuple[cdk.RemovalPolicy, bool]:
        if not isinstance(deletion_protection, bool):
            raise ConstructPropsError(f"{what}: deletion_protection {deletion_protection!r} must be True or False")
        if not isinstance(removal_policy, cdk.RemovalPolicy):
            raise ConstructPropsError(f"{what}: removal_policy {removal_policy!r} must be an aws_cdk.RemovalPolicy")
        if removal_policy == cdk.RemovalPolicy.DESTROY and deletion_protection:
            raise ConstructPropsError(
                f"{what}: removal_policy=DESTROY with deletion_protection=True would fail when the stack deletes "
                "the audit table; set deletion_protection=False to allow destruction"
            )
        return removal_policy, deletion_protection

    @staticmethod
    def _validate_source(what: str, source: ModelBoundTable) -> None:
        require_bound_table(what, "source", source, importers="SingleTable.from_table_attributes, from_parameters")
        if source.stream_view_type == dynamodb.StreamViewType.NEW_AND_OLD_IMAGES:
            return
        if source.table_stream_arn is not None and source.stream_view_type is None:
            raise ConstructPropsError(
                f"{what}: the view type of {source.what}'s stream is not declared (an import cannot read it); "
                "auditing needs before and after images: if the deployed stream is NEW_AND_OLD_IMAGES, pass "
                "stream_view_type=StreamViewType.NEW_AND_OLD_IMAGES to the importer"
            )
        view = "off" if source.stream_view_type is None else str(source.stream_view_type).rsplit(".", 1)[-1]
        raise ConstructPropsError(
            f"{what}: the source table {source.node.id!r} stream is {view}; auditing needs "
            "stream=StreamViewType.NEW_AND_OLD_IMAGES (before and after images of every change)"
            + ("" if view != "off" or isinstance(source, SingleTable) else f"; {source.stream_hint}")
        )

    @staticmethod
    def _validate_entities(
        what: str, model: Model, redact: Sequence[str], include: Sequence[str], exclude: Sequence[str]
    ) -> None:
        for name, value in (("redact", redact), ("include_entities", include), ("exclude_entities", exclude)):
            if isinstance(value, (str, bytes)):
                raise ConstructPropsError(
                    f"{what}: {name}={value!r} must be a list of names, not a string (a string would be read as "
                    "one name per character)"
                )
        known = [*model.entities, *ENTITIES]
        unknown = [e for e in (*include, *exclude) if e not in known]
        if unknown:
            raise ConstructPropsError(
                f"{what}: entities {unknown} are neither in model {model.name!r} nor counter items "
                f"(known: {', '.join(known)})"
            )
        if include and exclude:
            raise ConstructPropsError(
                f"{what}: include_entities={list(include)!r} and exclude_entities={list(exclude)!r}: "
                "give one of them, not both"
            )

    def _validate_storage(self, what: str, encryption: Encryption, retention: cdk.Duration | None) -> None:
        if encryption not in ("source", "own_key"):
            raise ConstructPropsError(f"{what}: encryption {encryption!r} must be 'source' or 'own_key'")
        if encryption == "own_key" and cdk.Token.is_unresolved(cdk.Stack.of(self).region):
            raise ConstructPropsError(
                f"{what}: encryption='own_key' needs a stack with a concrete region (the audit table's replica "
                "names its key per region); give the stack env=cdk.Environment(region=...)"
            )
        if retention is not None and retention.to_seconds() < 86_400:
            raise ConstructPropsError(f"{what}: retention {retention.to_human_string()} must be at least 1 day")

    @staticmethod
    def _spec(
        what: str, model: Model, actor_attribute: str | None, redact: Sequence[str], redaction: str,
        day_shards: int, retention: cdk.Duration | None,
    ) -> AuditSpec:
        try:
            return AuditSpec(
                source_pk_attribute=model.pk_attribute,
                source_sk_attribute=model.sk_attribute if model.has_sort_key else None,
                entity_attribute=model.entity_attribute,
                actor_attribute=actor_attribute,
                redact=tuple(redact),
                redaction=redaction,
                day_shards=day_shards,
                retention_seconds=int(retention.to_seconds()) if retention is not None else None,
            )
        except SettingsError as exc:
            raise ConstructPropsError(f"{what}: {exc}") from exc

    def _replica_region(self, what: str, source: ModelBoundTable) -> str | None:
        """The region this audit runs in when the source is replicated (else None): it audits the
        changes written in that region only (ADR 0055), so it must be concrete."""
        replicas = tuple(getattr(source, "replica_regions", ()) or ())
        if not replicas:
            return None
        regions = (str(source.home_region), *replicas)
        region = cdk.Stack.of(self).region
        if cdk.Token.is_unresolved(region) or region not in regions:
            raise ConstructPropsError(
                f"{what}: the source table is replicated to {', '.join(regions)}; a StreamAudit audits the changes "
                f"written in its own region, so its stack needs env=cdk.Environment(region=...) naming one of them "
                f"(got {region!r}); add one StreamAudit per region"
            )
        self._replica_regions = regions
        return region

    # The shared consumer shape's hooks ----------------------------------------------------------------
    def _grant_function(self, function: lambda_.Function) -> None:
        # The audit function may only add records: no update, no delete.
        self._grant(function, perms.AUDIT_WRITE, indexes=False, kms=perms.KMS_ENCRYPT_DECRYPT)
        if self.salt_secret is not None:
            self.salt_secret.grant_read(function)

    # The audit table --------------------------------------------------------------------------
    def _salt_secret(self) -> secretsmanager.Secret | None:
        """The redaction salt of ``redaction="hash"`` (None when nothing is hashed)."""
        if not (self.spec.redact and self.spec.redaction == "hash"):
            return None
        secret = secretsmanager.Secret(
            self, "RedactionSalt",
            description=f"Salt of the redaction hashes in the audit trail of {self.source.node.path}",
            generate_secret_string=secretsmanager.SecretStringGenerator(password_length=48, exclude_punctuation=True),
            encryption_key=self.encryption_key,
            removal_policy=self._removal[0],
        )
        # No rotation schedule, on purpose: a new salt would change every hash.
        nag.acknowledge_resource(secret, "AwsSolutions-SMG4", nag.SALT_MUST_NOT_ROTATE)
        # In a VPC we created (lambda-in-vpc), the function reaches the secret through an endpoint.
        Hardening.of(self).need_secrets_manager()
        return secret

    def _key(self, encryption: Encryption) -> kms.IKey | None:
        if encryption == "own_key":
            return kms.Key(
                self, "Key", enable_key_rotation=True, removal_policy=self._removal[0],
                description=f"Encrypts the audit trail of {self.source.node.path}",
            )
        return self.source.encryption_key

    def _audit_table(self) -> dynamodb.TableV2:
        return table_v2(
            self,
            "Table",
            partition_key=PK,
            sort_key=SK,
            global_secondary_indexes=[dynamodb.GlobalSecondaryIndexPropsV2(
                index_name=DAY_INDEX,
                partition_key=string_attribute(GSI1PK),
                sort_key=string_attribute(GSI1SK),
                projection_type=dynamodb.ProjectionType.ALL,
            )],
            time_to_live_attribute=self.spec.audit_ttl_attribute if self.spec.retention_seconds else None,
            deletion_protection=self._removal[1],
            removal_policy=self._removal[0],
            encryption=dynamodb.TableEncryptionV2.customer_managed_key(self.encryption_key)
            if self.encryption_key is not None else None,
        )

    # Event filters ----------------------------------------------------------------------------------
    @staticmethod
    def _filters(
        entity_attr: str, pk_attr: str, include: Sequence[str], exclude: Sequence[str], *, region: str | None = None,
    ) -> list[dict[str, Any]]:
        """Lambda event filters (OR-ed) selecting the records to audit.

        A REMOVE (or TTL expiry) carries only the old image, INSERT only the new one, so each
        rule is stated for both images. On a replicated source (``region`` given) each rule also
        requires the change to have been written in ``region`` (:func:`replicated_filters`).
        """
        base = StreamAudit._entity_filters(entity_attr, pk_attr, include, exclude)
        return base if region is None else replicated_filters(base, region, pk_attr)

    @staticmethod
    def _entity_filters(
        entity_attr: str, pk_attr: str, include: Sequence[str], exclude: Sequence[str]
    ) -> list[dict[str, Any]]:
        if include:
            wanted = sorted(set(include))
            return [{"dynamodb": {image: {entity_attr: {"S": wanted}}}} for image in ("NewImage", "OldImage")]
        if exclude:
            skipped = sorted(set(exclude))
            return [
                {"dynamodb": {"NewImage": {entity_attr: {"S": [{"anything-but": skipped}]}}}},
                {"eventName": ["REMOVE"], "dynamodb": {"OldImage": {entity_attr: {"S": [{"anything-but": skipped}]}}}},
                # items without an entity attribute are not excluded by name: audit them
                # (patterns on leaves only: AWS defines "exists" for leaf nodes, not for the {"S": ...} object)
                {"dynamodb": {"NewImage": {pk_attr: {"S": [{"exists": True}]}, entity_attr: {"S": [{"exists": False}]}}}},
                {"eventName": ["REMOVE"],
                 "dynamodb": {"OldImage": {pk_attr: {"S": [{"exists": True}]}, entity_attr: {"S": [{"exists": False}]}}}},
            ]
        return []

    # Access ------------------------------------------------------------------------------------------------
    @property
    def environment(self) -> dict[str, str]:
        """What ``AuditClient.from_environment()`` (and the audit function) read."""
        env = {
            environment.ENV_AUDIT_SPEC: self.spec.to_json(),
            environment.ENV_AUDIT_TABLE: self.table.table_name,
            environment.ENV_SOURCE_TABLE: self.source.table_name,
        }
        if self.salt_secret is not None:
            env[environment.ENV_AUDIT_SALT_SECRET] = self.salt_secret.secret_arn
        if self.region is not None:
            env[environment.ENV_REPLICA_REGIONS] = ",".join(self._replica_regions)
        return env

    def grant_read(self, grantee: iam.IGrantable) -> iam.Grant:
        """Query and GetItem on the audit table and its ``ByDay`` index (``history``, ``changes``,
        ``as_of``). Nobody but the audit function gets write access."""
        return self._grant(grantee, perms.AUDIT_READ, indexes=True, kms=perms.KMS_DECRYPT)

    def _grant(self, grantee: iam.IGrantable, actions: Sequence[str], *, indexes: bool, kms: Sequence[str]) -> iam.Grant:
        resources = [self.table.table_arn] + ([f"{self.table.table_arn}/index/{DAY_INDEX}"] if indexes else [])
        return combined_grant(grantee, actions, resources, key=self.encryption_key, key_actions=kms)

def replicated_filters(base: Sequence[dict[str, Any]], region: str, pk_attr: str) -> list[dict[str, Any]]:
    """``base`` (the entity filters; empty = everything) restricted to changes written in ``region``.

    A put or update carries its region in the new image (``_origin_region``, set by
    ``TableClient``) and no delete stamp; a delete made through ``TableClient`` carries
    ``_deleted_in = <region>#<token>`` in its old image. Replicated changes carry another region and
    never match. TTL deletions carry no stamp; AWS marks them (``userIdentity``) only in the region
    where they happened, and Lambda filters DynamoDB records on the ``dynamodb`` key only, so REMOVE
    records without a stamp pass and the audit handler keeps those marked as TTL deletions.
    """
    origin = {ORIGIN_ATTRIBUTE: {"S": [region]}, DELETE_ATTRIBUTE: {"S": [{"exists": False}]}}
    deleted_here = {DELETE_ATTRIBUTE: {"S": [{"prefix": f"{region}#"}]}}
    unstamped = {pk_attr: {"S": [{"exists": True}]}, DELETE_ATTRIBUTE: {"S": [{"exists": False}]}}
    rules = list(base) or [{"dynamodb": {"NewImage": {}}}, {"eventName": ["REMOVE"], "dynamodb": {"OldImage": {}}}]
    out: list[dict[str, Any]] = []
    for rule in rules:
        images = rule.get("dynamodb", {})
        if "NewImage" in images:
            out.append({**rule, "dynamodb": {"NewImage": {**images["NewImage"], **origin}}})
        else:
            old = images.get("OldImage", {})
            out.append({"eventName": ["REMOVE"], "dynamodb": {"OldImage": {**old, **deleted_here}}})
            out.append({"eventName": ["REMOVE"], "dynamodb": {"OldImage": {**old, **unstamped}}})
    return _merge_remove_rules(out)


def _merge_remove_rules(rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop duplicate rules (the same REMOVE rule may come from several entity rules)."""
    seen: list[dict[str, Any]] = []
    for rule in rules:
        if rule not in seen:
            seen.append(rule)
    return seen


def _redacted_attributes(what: str, model: Any, redact: Sequence[str]) -> tuple[str, ...]:
    """``redact`` plus every index key attribute built from a redacted field; refuses table-key
    attributes and fields (they would stay in clear in the audited item's key)."""
    wanted = list(dict.fromkeys(redact))
    table_keys = {model.pk_attribute, model.sk_attribute}
    derived: list[str] = []
    for name in wanted:
        if not isinstance(name, str) or not name:
            raise ConstructPropsError(f"{what}: redact entry {name!r} must be a non-empty attribute name")
        if name in table_keys:
            raise ConstructPropsError(
                f"{what}: cannot redact {name!r}: it is a key attribute of the source table, which identifies "
                "the audited item and is stored as the audit record's key"
            )
        for entity in model.entities.values():
            table_templates = [entity.pk_template, entity.sk_template]
            if any(t is not None and name in t.fields for t in table_templates):
                raise ConstructPropsError(
                    f"{what}: cannot redact field {name!r}: it is part of entity {entity.name!r}'s table key "
                    f"({entity.pk_template.source}), so it would stay in clear in the audit record's key; "
                    "keep sensitive data out of table keys"
                )
            for key in entity.indexes.values():
                for attr, template in key.written:
                    if name in template.fields:
                        derived.append(attr)
    return tuple(dict.fromkeys([*wanted, *derived]))


__all__ = ["DAY_INDEX", "StreamAudit", "replicated_filters"]

#: Names this module defined before 0.2.0, importable from it until 1.0.0 with a DeprecationWarning:
#: name -> (the module defining it now, its name there, since, removed in).
_DEPRECATED = {"COUNTER_ENTITIES": ("constructs_lib", "ShardedCounter.ENTITIES", "0.2.0", "1.0.0")}

if not TYPE_CHECKING:  # a type checker flags the old names
    def __getattr__(name: str) -> Any:
        if name not in _DEPRECATED:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from ..runtime import _deprecated

        return _deprecated.value(__name__, name, _DEPRECATED[name])
