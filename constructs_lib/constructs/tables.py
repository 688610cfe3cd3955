"""The one place a ``TableV2`` is made, with the library's safe defaults (point-in-time
recovery on, deletion protection on, retained on stack deletion). Used by ``SingleTable`` and by
the audit table of ``StreamAudit``."""

from __future__ import annotations

from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct


def string_attribute(name: str) -> dynamodb.Attribute:
    """A string key attribute (every key the library designs is a string)."""
    return dynamodb.Attribute(name=name, type=dynamodb.AttributeType.STRING)


def table_v2(
    scope: Construct,
    id: str,
    *,
    partition_key: str,
    sort_key: str | None,
    global_secondary_indexes: Sequence[dynamodb.GlobalSecondaryIndexPropsV2] = (),
    local_secondary_indexes: Sequence[dynamodb.LocalSecondaryIndexProps] = (),
    time_to_live_attribute: str | None = None,
    point_in_time_recovery: bool = True,
    deletion_protection: bool = True,
    removal_policy: cdk.RemovalPolicy = cdk.RemovalPolicy.RETAIN,
    encryption: dynamodb.TableEncryptionV2 | None = None,
    table_name: str | None = None,
    dynamo_stream: dynamodb.StreamViewType | None = None,
    billing: dynamodb.Billing | None = None,
    table_class: dynamodb.TableClass | None = None,
    contributor_insights: bool = False,
    replicas: Sequence[dynamodb.ReplicaTableProps] = (),
    multi_region_consistency: dynamodb.MultiRegionConsistency | None = None,
    witness_region: str | None = None,
) -> dynamodb.TableV2:
    """A ``TableV2`` with string keys and the safe defaults above (None: CDK's default)."""
    return dynamodb.TableV2(
        scope,
        id,
        partition_key=string_attribute(partition_key),
        sort_key=string_attribute(sort_key) if sort_key is not None else None,
        global_secondary_indexes=list(global_secondary_indexes) or None,
        local_secondary_indexes=list(local_secondary_indexes) or None,
        time_to_live_attribute=time_to_live_attribute,
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=point_in_time_recovery
        ),
        deletion_protection=deletion_protection,
        removal_policy=removal_policy,
        encryption=encryption,
        table_name=table_name,
        dynamo_stream=dynamo_stream,
        billing=billing,
        table_class=table_class,
        contributor_insights_specification=dynamodb.ContributorInsightsSpecification(enabled=True)
        if contributor_insights else None,
        replicas=list(replicas) or None,
        multi_region_consistency=multi_region_consistency,
        witness_region=witness_region,
    )


__all__ = ["string_attribute", "table_v2"]
