"""``SaasStack``: the multi-tenant documents table, its tenant-scoped and back-office roles,
and an audit trail of every change.

Construct ids (and so logical ids) are part of the contract: ``Docs``, ``TenantRole``,
``BackOfficeRole``, ``Audit``; outputs ``DocsTableName`` and ``TenantRoleArn``.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from constructs import Construct

from constructs_lib import SingleTable, StreamAudit
from examples.saas.model import saas_model

#: The session tag that carries the caller's tenant (``sts:TagSession`` when assuming the role).
TENANT_TAG = "tenant"
#: How long the audit trail keeps each change.
AUDIT_RETENTION_DAYS = 730


class SaasStack(cdk.Stack):
    """Multi-tenant documents: tenant-prefixed keys, a role confined to its caller's tenant, a
    per-index query grant for the back office, and an audit trail of every change.

    Parameters
    ----------
    scope, id
        As for any ``cdk.Stack``.
    **kwargs
        ``cdk.Stack`` properties (``description``, ``env``, ...).

    Attributes
    ----------
    docs : SingleTable
        The documents table (stream ``NEW_AND_OLD_IMAGES``, feeding the audit trail).
    tenant_role : iam.Role
        Read-write item access confined by ``dynamodb:LeadingKeys`` to ``TENANT#<session tag>``
        keys; every read of the tenant-mixing ``ByStatus`` index explicitly denied.
    back_office_role : iam.Role
        ``Query`` on the ``ByStatus`` index only (documents by status across tenants).
    audit : StreamAudit
        The audit table and its writer function, records kept 730 days.
    """

    def __init__(self, scope: Construct, id: str, **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)
        self.docs = SingleTable(self, "Docs", model=saas_model, stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
        # Assumed with a session tag "tenant" (sts:TagSession); IAM then confines every item
        # access to TENANT#<tag> keys and denies the tenant-mixing ByStatus index.
        self.tenant_role = iam.Role(
            self, "TenantRole", assumed_by=iam.AccountPrincipal(self.account).with_session_tags(),
            description="Tenant-facing access to the documents table, confined to the caller's tenant tag",
        )
        self.docs.grant_tenant_access(self.tenant_role, actions="read_write", tenant_tag=TENANT_TAG)
        # The back office lists documents by status across tenants: Query on that one index.
        self.back_office_role = iam.Role(
            self, "BackOfficeRole", assumed_by=iam.AccountPrincipal(self.account),
            description="Operators: documents by status across tenants (Query on ByStatus only)",
        )
        self.docs.grant_query(self.back_office_role, index="ByStatus")
        self.audit = StreamAudit(self, "Audit", source=self.docs, retention=cdk.Duration.days(AUDIT_RETENTION_DAYS))
        cdk.CfnOutput(self, "DocsTableName", value=self.docs.table_name)
        cdk.CfnOutput(self, "TenantRoleArn", value=self.tenant_role.role_arn)
