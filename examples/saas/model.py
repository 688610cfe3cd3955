"""A multi-tenant document model: every partition key starts with ``TENANT#{tenant_id}``.

``ByOwner`` is tenant-safe (its keys start with the tenant too); ``ByStatus`` is not — it
lists documents of every tenant by status, for the operator's back office — so tenant-scoped
principals are denied it (``SingleTable.grant_tenant_access``) and ``TableClient.for_tenant``
refuses its patterns.
"""

from __future__ import annotations

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model

saas_model = Model(
    "saas",
    entities=[
        Entity("Tenant", pk="TENANT#{tenant_id}", sk="META", fields={"tenant_id": "string"}, required=("name",)),
        Entity(
            "Doc",
            pk="TENANT#{tenant_id}#DOC#{doc_id}",
            sk="DOC",
            fields={"tenant_id": "string", "doc_id": "string", "owner": "string",
                    "status": Field.enum("DRAFT", "REVIEW", "PUBLISHED")},
            indexes={
                "ByOwner": IndexKey(pk="TENANT#{tenant_id}#OWNER#{owner}", sk="DOC#{doc_id}"),
                "ByStatus": IndexKey(pk="STATUS#{status}#{tenant_id}", sk="{doc_id}"),
            },
            required=("owner", "status"),
        ),
    ],
    indexes=[Index("ByOwner"), Index("ByStatus", projection="KEYS_ONLY")],
    access_patterns=[
        AccessPattern("tenant profile", entity="Tenant", sk="="),
        AccessPattern("doc by id", entity="Doc", sk="="),
        AccessPattern("docs of an owner", entity="Doc", index="ByOwner", sk="begins_with"),
        AccessPattern("docs by status", entity="Doc", index="ByStatus"),
    ],
    tenant_field="tenant_id",
)
