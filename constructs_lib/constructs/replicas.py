"""Global-table replicas of a ``SingleTable``: the replica spec, the checks against DynamoDB's
documented limits, and what multi-Region consistency cannot promise.

``SingleTable(replicas=[...], multi_region_consistency="EVENTUAL" | "STRONG")`` builds a
``TableV2`` with replicas (``AWS::DynamoDB::GlobalTable``). Under MREC (eventual) a write is
replicated asynchronously, the last writer wins per item and conditions see only the local
replica: what the model or a construct declares that relies on cross-Region agreement is refused
unless acknowledged by key (:data:`HAZARDS`). Under MRSC (strong) what DynamoDB does not support
is refused outright. The AWS facts and their sources: docs/adr/0054-global-tables.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb

from .exceptions import ConstructPropsError

if TYPE_CHECKING:
    from ..model import Model

EVENTUAL = "EVENTUAL"
STRONG = "STRONG"
CONSISTENCY_MODES = (EVENTUAL, STRONG)
#: The Region sets MRSC global tables are available in; a table cannot span two sets.
MRSC_REGION_SETS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "US": ("us-east-1", "us-east-2", "us-west-2"),
    "EU": ("eu-west-1", "eu-west-2", "eu-west-3", "eu-central-1"),
    "AP": ("ap-northeast-1", "ap-northeast-2", "ap-northeast-3"),
})
#: MRSC global tables are deployed in exactly this many Regions (replicas plus witness).
MRSC_REGION_COUNT = 3
#: What an MREC acknowledgement may name: ``<kind>:<subject>`` → what MREC does not promise.
HAZARDS: Mapping[str, str] = MappingProxyType({
    "version": "optimistic locking: the version condition is evaluated against the local replica only, so two "
               "Regions can both accept a write of the same version and the last writer wins",
    "transaction": "transactions: TransactWriteItems is atomic only in the Region that runs it and is not "
                   "replicated as a unit (other Regions may read part of it); its conditions see the local replica",
    "counter": "idempotent increments: the key's increment item (or dedup marker) is written and checked in the "
               "local Region only, so the same idempotency key retried in another Region within the replication "
               "delay counts twice",
})
_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-\d{1,2}")
_ACK_KEY = re.compile(r"(version|transaction|counter):([A-Za-z0-9_.-]+)")


@dataclass(frozen=True)
class Replica:
    """One replica of a global table, in another Region than the stack's.

    Parameters
    ----------
    region
        The replica's Region, a literal like ``"us-west-2"``. Required.
    contributor_insights, deletion_protection, point_in_time_recovery
        Per-replica settings DynamoDB never synchronizes between replicas. Default None: the
        table's own setting (``SingleTable``'s ``contributor_insights`` for the table,
        ``deletion_protection``, ``point_in_time_recovery``).
    tags
        Tags of the replica (tags are not synchronized either). Default none.
    """

    region: str
    contributor_insights: bool | None = None
    deletion_protection: bool | None = None
    point_in_time_recovery: bool | None = None
    tags: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.region, str) or cdk.Token.is_unresolved(self.region) or not _REGION.fullmatch(self.region):
            raise ConstructPropsError(f"Replica region {self.region!r} must be a literal AWS Region like 'us-west-2'")
        for name in ("contributor_insights", "deletion_protection", "point_in_time_recovery"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, bool):
                raise ConstructPropsError(f"Replica {self.region!r}: {name} {value!r} must be True, False or None")
        if not isinstance(self.tags, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) and k and len(k) <= 128 and len(v) <= 256
            for k, v in self.tags.items()
        ):
            raise ConstructPropsError(
                f"Replica {self.region!r}: tags {self.tags!r} must map tag keys (1-128 characters) to values (≤ 256)"
            )


@dataclass(frozen=True)
class Replication:
    """A table's replication as validated (``SingleTable.replication``).

    Attributes
    ----------
    region
        The Region of the stack that owns the table.
    replicas
        The :class:`Replica` specs, in the order given.
    consistency
        ``"EVENTUAL"`` (MREC) or ``"STRONG"`` (MRSC).
    witness_region
        MRSC's witness Region, or None.
    acknowledged
        MREC acknowledgements: ``"<kind>:<subject>"`` → the reason it is safe here (read-only).
    """

    region: str
    replicas: tuple[Replica, ...]
    consistency: str
    witness_region: str | None = None
    acknowledged: Mapping[str, str] = field(default_factory=dict)

    @property
    def replica_regions(self) -> tuple[str, ...]:
        """The replicas' Regions (not the stack's own)."""
        return tuple(r.region for r in self.replicas)

    @property
    def regions(self) -> tuple[str, ...]:
        """Every Region holding a readable replica: the stack's first, then the replicas'."""
        return (self.region, *self.replica_regions)

    def to_contract(self) -> dict[str, Any]:
        """The contract file's ``table.replication`` object (docs/contract-format.md)."""
        return {
            "consistency": self.consistency, "region": self.region, "replica_regions": list(self.replica_regions),
            "witness_region": self.witness_region, "acknowledged": dict(sorted(self.acknowledged.items())),
        }

    def require(self, what: str, key: str, subject: str) -> None:
        """Refuse under MREC what ``key`` (``"<kind>:<subject>"``) relies on, unless acknowledged."""
        if self.consistency != EVENTUAL or key in self.acknowledged:
            return
        kind = key.split(":", 1)[0]
        raise ConstructPropsError(
            f"{what}: {subject} relies on {HAZARDS[kind]} — the table is replicated to "
            f"{', '.join(self.replica_regions)} with multi-Region eventual consistency (MREC). Route every write "
            f"of it to one Region and acknowledge that with acknowledge_mrec={{{key!r}: '<why this is safe>'}} on "
            "the SingleTable, or use multi_region_consistency='STRONG' (docs/adr/0054-global-tables.md)"
        )

    def refuse_strong(self, what: str, feature: str, limit: str) -> None:
        """Refuse ``feature`` on an MRSC table: ``limit`` is the AWS limit, quoted in the message."""
        if self.consistency == STRONG:
            raise ConstructPropsError(
                f"{what}: {feature} cannot run on a table with multi-Region strong consistency (MRSC): "
                f"{limit} (docs/adr/0054-global-tables.md)"
            )


#: The MRSC limits as AWS states them (docs/adr/0054-global-tables.md has the sources).
MRSC_NO_TRANSACTIONS = ("global tables configured for MRSC do not support transaction operations, and will return "
                        "an error if those operations are invoked on an MRSC replica")
MRSC_NO_TTL = "Time to Live (TTL) is not supported for MRSC global tables"
MRSC_NO_LSI = "local secondary indexes (LSIs) are not supported for MRSC global tables"


def _replica(what: str, value: object) -> Replica:
    if isinstance(value, Replica):
        return value
    if isinstance(value, str):
        try:
            return Replica(value)
        except ConstructPropsError as exc:
            raise ConstructPropsError(f"{what}: {exc}") from None
    raise ConstructPropsError(f"{what}: replicas entry {value!r} must be a Region name or a constructs_lib.Replica")


def plan_replication(
    what: str,
    stack: cdk.Stack,
    model: Model,
    *,
    replicas: Sequence[Replica | str] | None,
    consistency: str | None,
    witness_region: str | None,
    acknowledge_mrec: Mapping[str, str] | None,
) -> Replication | None:
    """The validated replication of a ``SingleTable``, or None for a single-Region table."""
    if not replicas:
        for name, value in (("multi_region_consistency", consistency), ("witness_region", witness_region),
                            ("acknowledge_mrec", acknowledge_mrec)):
            if value:
                raise ConstructPropsError(f"{what}: {name}={value!r} applies to a global table only; pass replicas=[...]")
        return None
    if isinstance(replicas, str) or not isinstance(replicas, Sequence):
        raise ConstructPropsError(f"{what}: replicas {replicas!r} must be a list of Regions or Replica specs")
    specs = tuple(_replica(what, r) for r in replicas)
    region = stack.region
    if cdk.Token.is_unresolved(region):
        raise ConstructPropsError(
            f"{what}: replicas {[r.region for r in specs]} need the stack's own Region to be concrete (a global "
            "table names every Region it is in, and a replica must not be in the stack's); give the stack "
            "env=cdk.Environment(region=...)"
        )
    seen: set[str] = set()
    for spec in specs:
        if spec.region == region:
            raise ConstructPropsError(
                f"{what}: replica Region {spec.region!r} is the stack's own Region; the table itself is there — "
                "list only the other Regions (a global table has one replica per Region)"
            )
        if spec.region in seen:
            raise ConstructPropsError(f"{what}: replica Region {spec.region!r} is listed twice; a global table has "
                                      "one replica per Region")
        seen.add(spec.region)
    mode = EVENTUAL if consistency is None else consistency
    if mode not in CONSISTENCY_MODES:
        raise ConstructPropsError(
            f"{what}: multi_region_consistency {consistency!r} must be 'EVENTUAL' (MREC, the default) or 'STRONG' (MRSC)"
        )
    if mode == STRONG:
        _check_mrsc(what, model, region, [s.region for s in specs], witness_region)
    elif witness_region is not None:
        raise ConstructPropsError(f"{what}: witness_region={witness_region!r} applies to multi_region_consistency="
                                  "'STRONG' only (an MREC table has no witness)")
    acknowledged = _acknowledgements(what, model, mode, acknowledge_mrec)
    return Replication(region, specs, mode, witness_region, MappingProxyType(acknowledged))


def _check_mrsc(what: str, model: Model, region: str, replicas: list[str], witness: str | None) -> None:
    if witness is not None and (not isinstance(witness, str) or not _REGION.fullmatch(witness)):
        raise ConstructPropsError(f"{what}: witness_region {witness!r} must be a literal AWS Region like 'us-east-2'")
    regions = [region, *replicas, *([witness] if witness else [])]
    home_set = next((name for name, members in MRSC_REGION_SETS.items() if region in members), None)
    if home_set is None:
        raise ConstructPropsError(
            f"{what}: the stack's Region {region!r} is in no MRSC Region set; MRSC global tables are available in "
            + "; ".join(f"{name}: {', '.join(members)}" for name, members in MRSC_REGION_SETS.items())
        )
    outside = [r for r in regions if r not in MRSC_REGION_SETS[home_set]]
    if outside:
        raise ConstructPropsError(
            f"{what}: Region(s) {outside} are not in the {home_set} Region set of the stack's Region {region!r} "
            f"({', '.join(MRSC_REGION_SETS[home_set])}); MRSC global tables cannot span Region sets"
        )
    if witness in (region, *replicas):
        raise ConstructPropsError(f"{what}: witness_region {witness!r} must be another Region than the replicas'")
    if len(regions) != MRSC_REGION_COUNT:
        raise ConstructPropsError(
            f"{what}: an MRSC global table must be deployed in exactly {MRSC_REGION_COUNT} Regions (three replicas, "
            f"or two replicas and a witness); this one is in {len(regions)}: {regions}"
        )
    if model.ttl_attribute is not None:
        raise ConstructPropsError(f"{what}: model {model.name!r} has ttl_attribute {model.ttl_attribute!r}, but "
                                  f"{MRSC_NO_TTL}")
    if model.lsis:
        raise ConstructPropsError(f"{what}: model {model.name!r} has LSI(s) {[i.name for i in model.lsis]}, but "
                                  f"{MRSC_NO_LSI}")


def _acknowledgements(what: str, model: Model, mode: str, given: Mapping[str, str] | None) -> dict[str, str]:
    if not given:
        return {}
    if mode != EVENTUAL:
        raise ConstructPropsError(f"{what}: acknowledge_mrec applies to multi_region_consistency='EVENTUAL' only; "
                                  "an MRSC table refuses what it does not support instead")
    if not isinstance(given, Mapping):
        raise ConstructPropsError(f"{what}: acknowledge_mrec {given!r} must map '<kind>:<subject>' to a reason")
    out = {}
    for key, reason in given.items():
        match = _ACK_KEY.fullmatch(key) if isinstance(key, str) else None
        if match is None:
            raise ConstructPropsError(
                f"{what}: acknowledge_mrec key {key!r} must be '<kind>:<subject>' with kind one of "
                f"{', '.join(HAZARDS)} (e.g. 'version:Order', 'transaction:Order', 'counter:views')"
            )
        if not isinstance(reason, str) or len(reason.strip()) < 10:
            raise ConstructPropsError(f"{what}: acknowledge_mrec[{key!r}] needs a reason (at least 10 characters) "
                                      f"saying why it is safe here, got {reason!r}")
        kind, subject = match.groups()
        if kind in ("version", "transaction") and subject not in model.entities:
            raise ConstructPropsError(f"{what}: acknowledge_mrec key {key!r} names no entity of model "
                                      f"{model.name!r} (entities: {', '.join(model.entities)})")
        if kind == "version" and model.entity(subject).version_attribute is None:
            raise ConstructPropsError(f"{what}: acknowledge_mrec key {key!r}: entity {subject!r} has no "
                                      "version_attribute, so there is nothing to acknowledge")
        out[key] = reason.strip()
    return out


def check_global_table(what: str, replication: Replication, encryption: dynamodb.TableEncryptionV2 | None,
                       index_write_capacity: dynamodb.Capacity | None) -> None:
    """What a global table needs of the table's other settings: a customer-managed key names a key
    for every replica Region; provisioned GSI write capacity is autoscaled (replication writes
    too, and write capacity is synchronized between replicas)."""
    if encryption is not None and encryption.table_key is not None:
        keys = dict(encryption.replica_key_arns or {})
        missing = [r for r in replication.replica_regions if r not in keys]
        if missing:
            raise ConstructPropsError(
                f"{what}: a customer-managed key is per Region: replica Region(s) {missing} have no key; pass "
                "TableEncryptionV2.customer_managed_key(key, replica_key_arns={'<region>': '<key ARN>', ...})"
            )
    if index_write_capacity is not None and index_write_capacity.mode == dynamodb.CapacityMode.FIXED:
        raise ConstructPropsError(
            f"{what}: index_write_capacity is fixed, but a global table's provisioned write capacity must be "
            "autoscaled (write capacity is synchronized between replicas); pass Capacity.autoscaled(max_capacity=...)"
        )


def global_table_props(replication: Replication | None, *, contributor_insights: bool, deletion_protection: bool,
                       point_in_time_recovery: bool) -> dict[str, Any]:
    """The ``table_v2`` keywords of ``replication`` (none for a single-Region table)."""
    if replication is None:
        return {}
    return {
        "replicas": replica_props(replication, contributor_insights=contributor_insights,
                                  deletion_protection=deletion_protection, point_in_time_recovery=point_in_time_recovery),
        "multi_region_consistency": dynamodb.MultiRegionConsistency.STRONG
        if replication.consistency == STRONG else None,
        "witness_region": replication.witness_region,
    }


def replica_props(replication: Replication, *, contributor_insights: bool, deletion_protection: bool,
                  point_in_time_recovery: bool) -> list[dynamodb.ReplicaTableProps]:
    """``TableV2`` replica props, each replica's settings defaulting to the table's."""
    return [
        dynamodb.ReplicaTableProps(
            region=r.region,
            contributor_insights_specification=dynamodb.ContributorInsightsSpecification(
                enabled=contributor_insights if r.contributor_insights is None else r.contributor_insights),
            deletion_protection=deletion_protection if r.deletion_protection is None else r.deletion_protection,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=point_in_time_recovery
                if r.point_in_time_recovery is None else r.point_in_time_recovery),
            tags=[cdk.CfnTag(key=k, value=v) for k, v in sorted(r.tags.items())] or None,
        )
        for r in replication.replicas
    ]


def replication_from_contract(data: Mapping[str, Any] | None) -> Replication | None:
    """The replication a contract file's ``table.replication`` describes (imported tables), or None."""
    if not data:
        return None
    return Replication(
        data["region"], tuple(Replica(r) for r in data["replica_regions"]), data["consistency"],
        data.get("witness_region"), MappingProxyType(dict(data.get("acknowledged") or {})),
    )


__all__ = [
    "CONSISTENCY_MODES", "EVENTUAL", "HAZARDS", "MRSC_REGION_COUNT", "MRSC_REGION_SETS", "STRONG", "Replica",
    "Replication", "check_global_table", "global_table_props", "plan_replication", "replica_props", "replication_from_contract",
]
