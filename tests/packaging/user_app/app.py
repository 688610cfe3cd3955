"""A CDK app of its own that uses constructs_lib as an installed package (not this repository).

``python app.py [OUTDIR]`` synthesizes into OUTDIR (default: ``$CDK_OUTDIR``, which ``cdk synth``
sets, else ``cdk.out`` beside this file).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from constructs_lib import ShardedCounter, SingleTable, StreamAudit, TableFunction
from constructs_lib.model import AccessPattern, Entity, Field, Model

HERE = Path(__file__).resolve().parent

library_model = Model(
    "library",
    entities=[
        Entity("Book", pk="BOOK#{isbn}", sk="BOOK", fields=["isbn", "title"]),
        Entity(
            "Loan",
            pk="BOOK#{isbn}",
            sk="LOAN#{loaned_at}#{member_id}",
            fields={"isbn": "string", "member_id": "string", "loaned_at": Field.timestamp()},
        ),
    ],
    access_patterns=[
        AccessPattern("book by isbn", entity="Book", sk="="),
        AccessPattern("loans of a book", entity="Loan", sk="begins_with"),
    ],
)


class LibraryStack(cdk.Stack):
    """Books and loans, a sharded loan counter per book, an audit trail and a loans API."""

    def __init__(self, scope: Construct, id: str, **kwargs: object) -> None:
        super().__init__(scope, id, **kwargs)
        self.data = SingleTable(self, "Data", model=library_model, stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES)
        self.loans_counter = ShardedCounter(self, "BookLoans", table=self.data, name="book_loans", shards=4)
        self.audit = StreamAudit(self, "Audit", source=self.data, exclude_entities=ShardedCounter.ENTITIES)
        self.api = TableFunction(
            self, "LoansApi", table=self.data, entry=HERE / "loans_api.py", counters=[self.loans_counter]
        )


def build_app(outdir: str) -> cdk.App:
    app = cdk.App(outdir=outdir)
    LibraryStack(app, "LibraryStack")
    return app


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CDK_OUTDIR") or str(HERE / "cdk.out")
    build_app(out).synth()
