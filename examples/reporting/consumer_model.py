"""The reporting team's model of the shop's table, file first: the shop's contract file, committed
here as ``contracts/shop.contract.json``, plus the one access pattern only this team reads.

No import of the shop's code: ``Model.from_contract`` reads the file, and a view adds
"pending orders since" (open-ended, on the shop's sparse ``GSI2``). Refresh the file when the shop's
model changes — tests/examples/test_reporting.py fails while it is stale, printing :data:`REFRESH`.
"""

from __future__ import annotations

from pathlib import Path

from constructs_lib.model import AccessPattern, Model

HERE = Path(__file__).resolve().parent
#: The shop's contract, committed in this (consumer) example.
CONTRACT = HERE / "contracts" / "shop.contract.json"
#: The command that writes :data:`CONTRACT` again from the shop's app (from the repository root).
REFRESH = ("python -m constructs_lib contract export examples/shop/app.py --table ShopStack/Data "
           "-o examples/reporting/contracts/shop.contract.json")
#: The pattern only the reporting team reads.
SINCE = "pending orders since"

shop_view = Model.from_contract(CONTRACT).view(extra_patterns=[
    AccessPattern(SINCE, entity="Order", index="GSI2", sk=">=",
                  description="Pending orders from a date on, oldest first (the reporting team's own pattern)."),
])
