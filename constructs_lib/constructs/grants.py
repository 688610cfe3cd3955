"""The one grants helper: actions on resources, plus the matching key actions when a
customer-managed KMS key encrypts them. Used by every table (owned, imported, the audit
table) and by the failure queues."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms


def combined_grant(
    grantee: iam.IGrantable,
    actions: Sequence[str],
    resources: Sequence[str],
    *,
    key: kms.IKey | None = None,
    key_actions: Sequence[str] = (),
    conditions: dict[str, Any] | None = None,
) -> iam.Grant:
    """Grant ``actions`` (sorted, deduplicated, never ``*``) on ``resources`` under ``conditions``,
    and ``key_actions`` on ``key`` when there is one; returns the grant on the resources."""
    grant = iam.Grant.add_to_principal(
        grantee=grantee, actions=sorted(set(actions)), resource_arns=list(resources), conditions=conditions
    )
    if key is not None and key_actions:
        iam.Grant.add_to_principal(grantee=grantee, actions=sorted(set(key_actions)), resource_arns=[key.key_arn])
    return grant


def leading_keys_condition(shapes: Sequence[str], *, principal_tag: str | None = None) -> dict[str, Any]:
    """Partition keys limited to ``shapes`` (``ForAllValues:StringLike dynamodb:LeadingKeys``) and
    required to be present (``ForAllValues`` alone passes a request without one); with
    ``principal_tag``, the principal must carry that tag too."""
    present = {"dynamodb:LeadingKeys": "false"}
    if principal_tag is not None:
        present[f"aws:PrincipalTag/{principal_tag}"] = "false"
    return {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": list(shapes)}, "Null": present}


__all__ = ["combined_grant", "leading_keys_condition"]
