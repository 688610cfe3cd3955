"""A model that uses every declared form the model accepts (list fields, ``(pk, sk)`` index
tuples, ``when_equals`` as a set or a string, ``shard_by`` as a string, list projections, an LSI,
a GSI without sort key, a multi-entity pattern): its JSON is compared byte for byte with the
JSON the model wrote before declared and resolved types were split."""

from __future__ import annotations

from constructs_lib.model import AccessPattern, Entity, Field, Index, IndexKey, Model


def kitchen_sink() -> Model:
    return Model(
        "sink",
        entities=[
            Entity(
                "Account",
                pk="TENANT#{tenant}#ACCOUNT#{account_id}",
                sk="META",
                fields=["tenant", "account_id", "email", "plan"],
                indexes={
                    "ByEmail": ("TENANT#{tenant}#EMAIL#{email}", None),
                    "ByPlan": IndexKey(pk="TENANT#{tenant}#PLAN#{plan}", sk="{account_id}",
                                       when_equals={"plan": {"pro", "free"}}),
                    "Local": IndexKey(sk="ACCOUNT#{email}", when_present="email"),
                },
                required=["email"],
                version_attribute="rev",
                attributes={"name": "string", "tags": "list"},
                description="An account.",
            ),
            Entity(
                "Invoice",
                pk="TENANT#{tenant}#ACCOUNT#{account_id}",
                sk="INVOICE#{issued_at}#{invoice_id}",
                fields={"tenant": "string", "account_id": "string", "invoice_id": "string",
                        "issued_at": Field.timestamp(), "status": Field.enum("OPEN", "PAID"),
                        "amount": Field.number(width=10)},
                indexes={
                    "ByPlan": IndexKey(pk="TENANT#{tenant}#STATUS#{status}#{shard}", sk="{issued_at}",
                                       when_equals={"status": "OPEN"}, shards=3, shard_by="invoice_id"),
                    "Local": IndexKey(sk="INVOICE#{amount}", when_equals={"status": ["PAID", "OPEN"]}),
                },
                required=("status",),
            ),
        ],
        indexes=[
            Index("ByEmail", sort_key=False, projection="KEYS_ONLY"),
            Index("ByPlan", projection=["name", "status"]),
            Index("Local", kind="LSI", sk_attribute="LSI1SK"),
        ],
        access_patterns=[
            AccessPattern("account", entity="Account", sk="="),
            AccessPattern("account history", entity=("Account", "Invoice"), descending=True),
            AccessPattern("by email", entity="Account", index="ByEmail"),
            AccessPattern("pro accounts", entity="Account", index="ByPlan", sk="begins_with", sk_fields=("account_id",)),
            AccessPattern("open invoices", entity="Invoice", index="ByPlan", sk=">=", sk_fields=["issued_at"]),
            AccessPattern("invoices by amount", entity="Invoice", index="Local", sk="between"),
            AccessPattern("accounts by local email", entity="Account", index="Local", sk="="),
        ],
        ttl_attribute="expires_at",
        tenant_field="tenant",
    )
