"""``ModelBoundTable``: a DynamoDB table bound to a data model, owned or imported.

What :class:`~constructs_lib.constructs.single_table.SingleTable` (a table this stack creates) and
:class:`~constructs_lib.constructs.imported_table.ImportedSingleTable` (a table deployed elsewhere) share, and
all that ``TableFunction``, ``ShardedCounter``, ``StreamAudit`` and ``TableOperations`` need of a table:
its model, name and ARNs, least-privilege grants (table ARN plus named index ARNs, never ``*``,
KMS permissions when a customer-managed key encrypts it), key-prefix claims and the operations
view pattern constructs register with.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

from ..model.indexes import TABLE
from . import perms
from .exceptions import ConstructPropsError
from .grants import combined_grant, leading_keys_condition
from .operations.construct import TableOperations
from .operations.consumers import MonitoredConsumer
from .operations.props import OperationsSettings

if TYPE_CHECKING:
    from ..model import AccessScope, Model
    from .replicas import Replication

#: Write kinds of an access scope that run inside TransactWriteItems.
TRANSACTION_WRITES = ("transaction_put", "transaction_update", "transaction_delete", "condition_check")


class ModelBoundTable(Construct):
    """Base class of the tables constructs of this library accept. Not built directly: use
    :class:`~constructs_lib.constructs.single_table.SingleTable` or one of its importers
    (``SingleTable.from_table_name``, ``from_table_attributes``, ``from_parameters``).

    Attributes
    ----------
    model
        The data model the table was designed for.
    table
        The underlying ``aws_dynamodb.ITableV2`` (a ``TableV2`` when owned).
    encryption_key
        The customer-managed KMS key encrypting the table, or None.
    stream_view_type
        The stream's view type, or None (no stream, or an imported stream of undeclared type).
    provisioned
        Whether the table uses provisioned billing (False for imports: unknown).
    model_fingerprint
        A pinned whole-model fingerprint that functions built on this table check at run time
        (``from_table_attributes(model_fingerprint=...)``), or None.
    contract_parameter
        The SSM parameter holding the table's published contract (imports from published
        parameters): functions built on this table read it at cold start and check the entities
        and indexes they use against it (:mod:`constructs_lib.runtime.contract`), or None.
    pinned_contract
        The producer's contract file the consumer committed (``from_parameters(contract=...)``):
        every function's slice is checked against it at synth, or None.
    operations
        The dashboard and alarms (``add_operations``), or None.
    replication
        A global table's :class:`~constructs_lib.constructs.replicas.Replication` (Regions,
        consistency, MREC acknowledgements), or None (single-Region, or an import that did not
        say). ``replica_regions`` and ``multi_region_consistency`` read it.
    """

    model: Model
    table: dynamodb.ITableV2
    encryption_key: kms.IKey | None
    stream_view_type: dynamodb.StreamViewType | None
    provisioned: bool

    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        self.model_fingerprint: str | None = None
        self.contract_parameter: str | None = None
        self.pinned_contract: Any = None
        self.operations: TableOperations | None = None
        self.replication: Replication | None = None
        self._replica_key_arns: Mapping[str, str] = {}
        self._key_prefixes: dict[str, str] = {}
        self._consumers: list[MonitoredConsumer] = []

    # Describing the table in messages ------------------------------------------------------------
    @property
    def what(self) -> str:
        """``"<class> '<id>'"``, how errors name this table."""
        return f"{type(self).__name__} {self.node.id!r}"

    @property
    def stream_hint(self) -> str:
        """What to pass to give this table a stream (used in error messages)."""
        return "pass stream=StreamViewType.NEW_AND_OLD_IMAGES (or another view type) to SingleTable"

    # Attributes ----------------------------------------------------------------------------------
    def _table_attribute(self, name: str) -> str:
        """``self.table.<name>``, read from the jsii kernel once per table object: a token string
        that never changes, asked for by every grant, metric and environment built on the table."""
        cache: dict[str, tuple[object, str]] = self.__dict__.setdefault("_table_attributes", {})
        found = cache.get(name)
        if found is None or found[0] is not self.table:
            found = cache[name] = (self.table, getattr(self.table, name))
        return found[1]

    @property
    def table_name(self) -> str:
        return self._table_attribute("table_name")

    @property
    def table_arn(self) -> str:
        return self._table_attribute("table_arn")

    @property
    def table_stream_arn(self) -> str | None:
        """The stream ARN, or None when the table has no (known) stream."""
        raise NotImplementedError

    @property
    def runtime_environment(self) -> Mapping[str, str]:
        """Environment variables every function built on this table gets besides its own: the
        published contract's parameter name (imports from published parameters; the function
        reads it at cold start), else a pinned whole-model fingerprint when there is one; and on
        a replicated table every Region of it, home first (``CONSTRUCTS_LIB_REPLICA_REGIONS``:
        ``TableClient.from_environment()`` then stamps each write with ``AWS_REGION``, ADR 0055)."""
        from ..runtime.environment import ENV_CONTRACT_PARAMETER, ENV_MODEL_FINGERPRINT, ENV_REPLICA_REGIONS

        env: dict[str, str] = {}
        if self.contract_parameter is not None:
            env[ENV_CONTRACT_PARAMETER] = self.contract_parameter
        elif self.model_fingerprint is not None:
            env[ENV_MODEL_FINGERPRINT] = self.model_fingerprint
        if self.replica_regions:
            env[ENV_REPLICA_REGIONS] = ",".join(self.all_regions)
        return env

    def index_arn(self, index: str, *, region: str | None = None) -> str:
        """ARN of one index of this table (for per-index least-privilege grants); with ``region``,
        of the index of the replica there."""
        self.model.index(index)
        return f"{self.table_arn if region is None else self.replica_arn(region)}/index/{index}"

    # Replicas (global tables; docs/adr/0054-global-tables.md) ---------------------------------------
    @property
    def replica_regions(self) -> tuple[str, ...]:
        """The Regions the table is replicated to, besides its own (``()``: single-Region)."""
        return self.replication.replica_regions if self.replication is not None else ()

    @property
    def all_regions(self) -> tuple[str, ...]:
        """The table's own Region and its replicas' on a replicated table (home first), else ``()``."""
        return (str(self.home_region), *self.replica_regions) if self.replica_regions else ()

    def check_function_region(self, what: str, scope: Construct) -> None:
        """Refuse a function of this replicated table whose stack is in a concrete Region the table
        is not in: it would write to a replica that does not exist (its ``AWS_REGION`` names it)."""
        region = cdk.Stack.of(scope).region
        if self.replica_regions and not cdk.Token.is_unresolved(region) and region not in self.all_regions:
            raise ConstructPropsError(
                f"{what}: its stack's Region {region!r} is not a Region of {self.what} "
                f"({', '.join(self.all_regions)}); deploy the function in one of them"
            )

    @property
    def multi_region_consistency(self) -> str | None:
        """``"EVENTUAL"`` (MREC) or ``"STRONG"`` (MRSC) for a global table, else None."""
        return self.replication.consistency if self.replication is not None else None

    @property
    def home_region(self) -> str:
        """The Region of the table this construct stands for (the owning stack's); a token when
        the stack has no concrete Region."""
        return self.replication.region if self.replication is not None else cdk.Stack.of(self).region

    def replica_arn(self, region: str) -> str:
        """ARN of the table's replica in ``region``: ``arn:<partition>:dynamodb:<region>:<account>:table/<name>``
        (every replica has the table's name). The table's own Region gives ``table_arn``; a Region the
        table is not in raises ``ConstructPropsError``."""
        if region == self.home_region:
            return self.table_arn
        if region not in self.replica_regions:
            raise ConstructPropsError(
                f"{self.what} has no replica in Region {region!r}; its Regions: "
                f"{', '.join([self.home_region, *self.replica_regions])}"
            )
        arn = self.table_arn
        if not cdk.Token.is_unresolved(arn):  # an imported table's literal ARN: same account and name
            head, _, rest = arn.partition(":dynamodb:")
            return f"{head}:dynamodb:{region}:{rest.split(':', 1)[1]}"
        return cdk.Stack.of(self).format_arn(service="dynamodb", region=region, resource="table",
                                             resource_name=self.table_name)

    def check_scope(self, what: str, scope: AccessScope) -> None:
        """Refuse a scope whose transaction writes a global table cannot promise: never on MRSC
        (no transactions there), on MREC unless ``acknowledge_mrec`` has ``transaction:<entity>``."""
        if self.replication is None:
            return
        from .replicas import MRSC_NO_TRANSACTIONS

        for entity, kinds in scope.writes.items():
            transactional = [k for k in kinds if k in TRANSACTION_WRITES]
            if transactional:
                self.replication.refuse_strong(what, f"transaction writes {transactional} of entity {entity!r}",
                                               MRSC_NO_TRANSACTIONS)
                self.replication.require(what, f"transaction:{entity}",
                                         f"the transaction writes {transactional} of entity {entity!r}")

    def claim_key_prefix(self, prefix: str, *, owner: str) -> None:
        """Reserve a partition-key prefix for a pattern construct's own items (e.g. a counter
        family's ``COUNTER#views#``); a second claim of a prefix that overlaps it is refused.
        Claims are recorded on this construct: an imported table does not see the claims made on
        the owner's ``SingleTable`` in another app."""
        for taken, by in self._key_prefixes.items():
            if prefix.startswith(taken) or taken.startswith(prefix):
                raise ConstructPropsError(f"{self.what}: key prefix {prefix!r} of {owner} overlaps {taken!r} of {by}")
        self._key_prefixes[prefix] = owner

    # Operations ----------------------------------------------------------------------------------
    def add_operations(self, operations: OperationsSettings | None = None) -> TableOperations:
        """Add the table's CloudWatch dashboard and alarms (``OperationsSettings()`` defaults when None);
        at most once per table. Pattern constructs registered before or after join it; the result
        is also ``self.operations``."""
        if self.operations is not None:
            raise ConstructPropsError(
                f"{self.what} already has its operations view ({self.operations.node.path}); "
                "pass one OperationsSettings(...) to operations= or add_operations(), once"
            )
        self.operations = TableOperations(self, "Operations", table=self,
                                          settings=OperationsSettings() if operations is None else operations)
        for consumer in self._consumers:
            self.operations.add_consumer(consumer)
        return self.operations

    def register_consumer(self, consumer: MonitoredConsumer) -> None:
        """Record a pattern construct consuming this table (``ShardedCounter``, ``StreamAudit`` call
        it): its widgets and alarms join the operations view, now or when it is added."""
        self._consumers.append(consumer)
        if self.operations is not None:
            self.operations.add_consumer(consumer)

    # Grants: all go through _grant ---------------------------------------------------------------
    # Every grant but grant_tenant_access and grant_items takes ``region``: the replica there (a
    # function deployed in that Region), default the table's own Region.
    def grant_read_data(self, grantee: iam.IGrantable, *, region: str | None = None) -> iam.Grant:
        """GetItem, BatchGetItem, Query, ConditionCheckItem, DescribeTable on the table and its indexes."""
        return self._grant(grantee, perms.READ_DATA + perms.DESCRIBE, indexes=True, kms=perms.KMS_DECRYPT, region=region)

    def grant_write_data(self, grantee: iam.IGrantable, *, region: str | None = None) -> iam.Grant:
        """PutItem, UpdateItem, DeleteItem, BatchWriteItem, DescribeTable on the table."""
        return self._grant(grantee, perms.WRITE_DATA + perms.DESCRIBE, indexes=False, kms=perms.KMS_ENCRYPT_DECRYPT,
                           region=region)

    def grant_read_write_data(self, grantee: iam.IGrantable, *, region: str | None = None) -> iam.Grant:
        """Both of the above."""
        return self._grant(
            grantee, perms.READ_DATA + perms.WRITE_DATA + perms.DESCRIBE, indexes=True, kms=perms.KMS_ENCRYPT_DECRYPT,
            region=region,
        )

    def grant_query(self, grantee: iam.IGrantable, *, index: str, region: str | None = None) -> iam.Grant:
        """Query on exactly one index ARN (``index="GSI1"``), or the table itself
        (``index="table"``) — CDK's own grants only offer ``index/*``."""
        if index == TABLE:
            return self._grant(grantee, ("dynamodb:Query",), kms=perms.KMS_DECRYPT, region=region)
        if index not in self.model.indexes:
            raise ConstructPropsError(
                f"{self.what}: grant_query index {index!r} is not in model {self.model.name!r} "
                f"(indexes: {', '.join(self.model.indexes) or 'none'}; use index='table' for the table)"
            )
        return self._grant(grantee, ("dynamodb:Query",), resources=[self.index_arn(index, region=region)],
                           kms=perms.KMS_DECRYPT, region=region)

    def grant_tenant_access(
        self,
        grantee: iam.IGrantable,
        *,
        actions: Literal["read", "write", "read_write"] = "read",
        tenant_tag: str = "tenant",
    ) -> iam.Grant:
        """Item access confined to the principal's own tenant.

        The allow statement carries ``ForAllValues:StringLike dynamodb:LeadingKeys`` =
        ``<prefix>${aws:PrincipalTag/<tenant_tag>}`` and ``<prefix>${aws:PrincipalTag/<tenant_tag>}#*``
        (tenant ``acme`` reaches ``TENANT#acme`` and ``TENANT#acme#...``, never ``TENANT#acmecorp``
        or the escaped ``TENANT#acme%23x``), requires the tag and the leading key to be present
        (``ForAllValues`` alone passes a request without the key), and covers the table
        and its tenant-safe indexes. Read grants also get an explicit **Deny** of every read on the
        indexes whose partition keys do not start with the tenant. Requires the model's
        ``tenant_field``; tenant ids are restricted so the tag value equals the key text.
        """
        model = self.model
        if model.tenant_field is None or model.tenant_key_prefix is None:
            raise ConstructPropsError(
                f"{self.what}: grant_tenant_access needs a model with tenant_field=... "
                f"(model {model.name!r} has none)"
            )
        if actions not in ("read", "write", "read_write"):
            raise ConstructPropsError(f"grant_tenant_access actions {actions!r} must be 'read', 'write' or 'read_write'")
        if not re.fullmatch(r"[A-Za-z0-9_.:/=+@-]{1,128}", tenant_tag or ""):
            raise ConstructPropsError(f"grant_tenant_access tenant_tag {tenant_tag!r} is not a valid IAM tag key")
        read = actions in ("read", "read_write")
        wanted = (perms.READ_DATA if read else ()) + (perms.WRITE_DATA if actions != "read" else ())
        tenant = f"${{aws:PrincipalTag/{tenant_tag}}}"
        prefix = model.tenant_key_prefix
        safe = [*model.tenant_safe_gsis, *(i.name for i in model.lsis)] if read else []
        resources = [self.table_arn] + [self.index_arn(name) for name in safe]
        grant = self._grant(
            grantee, wanted, resources=resources,
            kms=perms.KMS_ENCRYPT_DECRYPT if actions != "read" else perms.KMS_DECRYPT,
            conditions=leading_keys_condition([f"{prefix}{tenant}", f"{prefix}{tenant}#*"], principal_tag=tenant_tag),
        )
        unsafe = [i.name for i in model.gsis if i.name not in model.tenant_safe_gsis]
        if read and unsafe:
            grantee.grant_principal.add_to_principal_policy(iam.PolicyStatement(
                effect=iam.Effect.DENY, actions=sorted(perms.READ_DATA),
                resources=[self.index_arn(name) for name in unsafe],
            ))
        return grant

    def grant_scope(self, grantee: iam.IGrantable, scope: AccessScope, *, region: str | None = None) -> list[iam.Grant]:
        """Exactly what ``scope`` declares (see :class:`~constructs_lib.model.AccessScope`): per
        statement only the item actions its patterns and writes need (never Scan), the table ARN
        or the one index ARN a pattern reads, and ``ForAllValues:StringLike dynamodb:LeadingKeys``
        limited to the partition-key shapes of the declared entities (``USER#*``,
        ``TENANT#acme#DOC#*``) plus a ``Null`` check that the key is present; transaction-only writes
        also require ``dynamodb:EnclosingOperation = TransactWriteItems``; a ``principal_tag``
        tenant requires the tag. Raises ``ConstructPropsError`` for a scope the model cannot
        confine (e.g. a partition key that starts with a field)."""
        from ..model.exceptions import AccessScopeError
        from .scope_policy import TRANSACT_WRITE, derive_statements

        self.check_scope(self.what, scope)
        try:
            statements = derive_statements(self.model, scope)
        except AccessScopeError as exc:
            raise ConstructPropsError(f"{self.what}: {exc}") from exc
        grants = []
        # The key's permissions once (with the first statement): decrypt, and encrypt too if any write.
        kms = perms.KMS_ENCRYPT_DECRYPT if any(s.writes for s in statements) else perms.KMS_DECRYPT
        for n, statement in enumerate(statements):
            conditions = leading_keys_condition(statement.leading_keys, principal_tag=scope.tenant_tag)
            if statement.transaction_only:
                conditions["StringEquals"] = {"dynamodb:EnclosingOperation": TRANSACT_WRITE}
            arn = (self.table_arn if region is None else self.replica_arn(region)) if statement.index is None \
                else self.index_arn(statement.index, region=region)
            grants.append(self._grant(grantee, statement.actions, resources=[arn], conditions=conditions,
                                      kms=kms if n == 0 else (), region=region))
        return grants

    def grant_stream_read(self, grantee: iam.IGrantable, *, region: str | None = None) -> iam.Grant:
        """Read the table's stream: DescribeStream, GetRecords, GetShardIterator and ListStreams,
        all on the stream ARN (the scoping AWS's own example policy for stream-triggered Lambda
        functions uses; no ``*`` resource). With another ``region``: the streams of the replica
        there, ``<replica ARN>/stream/*`` (its stream label is not known at synth)."""
        if self.table_stream_arn is None:
            raise ConstructPropsError(f"{self.what} has no stream; {self.stream_hint}")
        arn = self.table_stream_arn if region is None or region == self.home_region \
            else f"{self.replica_arn(region)}/stream/*"
        return self._grant(grantee, perms.STREAM_READ + perms.LIST_STREAMS, resources=[arn], kms=perms.KMS_DECRYPT,
                           region=region)

    def grant_items(
        self, grantee: iam.IGrantable, actions: Sequence[str], *, leading_key_prefix: str, write: bool
    ) -> iam.Grant:
        """Item actions on the table ARN, limited to partition keys starting with
        ``leading_key_prefix`` (an IAM ``dynamodb:LeadingKeys`` condition). Used by pattern
        constructs (e.g. a counter family's keys); ``write`` selects the KMS permissions. A ``Null``
        condition requires the key to be present (``ForAllValues`` alone passes a request without
        it)."""
        if not leading_key_prefix or any(c in leading_key_prefix for c in "*?"):
            raise ConstructPropsError(f"leading_key_prefix {leading_key_prefix!r} must be a non-empty literal prefix")
        return self._grant(
            grantee, actions, kms=perms.KMS_ENCRYPT_DECRYPT if write else perms.KMS_DECRYPT,
            conditions=leading_keys_condition([f"{leading_key_prefix}*"]),
        )

    def _grant(
        self,
        grantee: iam.IGrantable,
        actions: Sequence[str],
        *,
        indexes: bool = False,
        resources: Sequence[str] | None = None,
        kms: Sequence[str] = (),
        conditions: dict[str, Any] | None = None,
        region: str | None = None,
    ) -> iam.Grant:
        """The one place grants are made: table (and index) ARNs, never ``*`` actions, plus
        the customer-managed key's permissions when the table uses one (in another ``region``:
        that replica's ARNs and its key)."""
        if region is not None and region == self.home_region:
            region = None
        if resources is None:
            resources = [self.table_arn if region is None else self.replica_arn(region)]
            if indexes and self.model.indexes:
                resources += [self.index_arn(name, region=region) for name in self.model.indexes]
        if region is None or self.encryption_key is None:
            return combined_grant(grantee, actions, resources, key=self.encryption_key, key_actions=kms,
                                  conditions=conditions)
        grant = combined_grant(grantee, actions, resources, conditions=conditions)
        if kms:
            if region not in self._replica_key_arns:
                raise ConstructPropsError(f"{self.what}: no customer-managed key ARN is known for Region {region!r} "
                                          "(TableEncryptionV2.customer_managed_key(..., replica_key_arns=...))")
            iam.Grant.add_to_principal(grantee=grantee, actions=sorted(set(kms)),
                                       resource_arns=[self._replica_key_arns[region]])
        return grant


__all__ = ["ModelBoundTable"]


def require_bound_table(
    what: str, arg: str, value: object,
    *, importers: str = "SingleTable.from_table_name, from_table_attributes, from_parameters",
) -> ModelBoundTable:
    """``value`` when it is a :class:`ModelBoundTable`; else :class:`ConstructPropsError` naming
    ``arg``, the value and the ``importers`` that give one."""
    if not isinstance(value, ModelBoundTable):
        raise ConstructPropsError(f"{what}: {arg} must be a SingleTable or an imported one ({importers}), got {value!r}")
    return value

