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


__all__ = ["combined_grant"]
