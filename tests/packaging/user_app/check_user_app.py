"""The separate app's own tests (copied next to app.py as ``test_user_app.py``): the
constructs_lib pytest plugin as installed from the wheel, with no conftest.py.

``USER_APP_CDK_OUT`` names the cloud assembly ``python app.py`` wrote.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from constructs_lib.runtime import AuditClient, CounterClient, TableClient
from constructs_lib.testing import read_stack_template

STACK = "LibraryStack"
LOAN = {"isbn": "978-0-13-468599-1", "member_id": "m-1", "loaned_at": "2026-03-01T10:00:00Z"}


def test_the_package_and_its_plugin_come_from_the_installed_wheel(pytestconfig: Any) -> None:
    # GIVEN this interpreter's environment (a virtualenv the wheel was installed into)
    import constructs_lib

    prefix = Path(sys.prefix).resolve()
    plugin = pytestconfig.pluginmanager.get_plugin("constructs_lib")
    # THEN the package, and the plugin registered under the entry point's name, are the wheel's
    assert Path(constructs_lib.__file__).resolve().is_relative_to(prefix), constructs_lib.__file__
    assert plugin is sys.modules["constructs_lib.testing.plugin"]
    assert Path(plugin.__file__).resolve().is_relative_to(prefix), plugin.__file__


def test_tables_of_the_synthesized_app_deploy_locally(local_deploy: Any, dynamodb_client: Any) -> None:
    # GIVEN the template `python app.py` synthesized
    from app import library_model

    template = read_stack_template(os.environ["USER_APP_CDK_OUT"], STACK)
    # WHEN its tables are deployed to DynamoDB Local
    deployment = local_deploy(template)
    # THEN the data table and the audit table exist, and items round-trip through the model
    assert sorted(lid.rstrip("0123456789ABCDEF") for lid in deployment.tables) == ["AuditTable", "DataTable"]
    books = TableClient(library_model, deployment.table_name("DataTable"), client=dynamodb_client)
    books.put("Book", {"isbn": "978-0", "title": "Dune"})
    assert books.get("Book", isbn="978-0")["title"] == "Dune"


def test_synthesize_deploy_and_feed_the_stream_to_the_bundled_handlers(
    cdk_synth: Any, local_deploy: Any, local_function: Any, stream_consumer: Any, dynamodb_client: Any
) -> None:
    # GIVEN the stack synthesized by the plugin and its tables deployed from the template
    from app import LibraryStack, library_model

    result = cdk_synth(lambda app: LibraryStack(app, STACK))
    deployment = local_deploy(result.template(STACK))
    # WHEN the bundled loans API records two loans of one book
    api = local_function(result.asset_dir("LoansApi"), "loans_api.handler",
                         environment=deployment.function_environment("LoansApi"))
    api(LOAN)
    api({**LOAN, "member_id": "m-2"})
    # AND the table's stream is fed to the bundled aggregator and audit handlers
    aggregated = stream_consumer(result, deployment, "BookLoansFunction").run()
    audited = stream_consumer(result, deployment, "AuditFunction").run()
    # THEN the counter total is aggregated, and both loans (not the counter items) are audited
    counter = CounterClient.from_environment(
        "book_loans", environ=deployment.function_environment("LoansApi"), client=dynamodb_client)
    assert counter.get(LOAN["isbn"]).total == 2
    audit = AuditClient.from_environment(environ=deployment.function_environment("AuditFunction"),
                                         client=dynamodb_client)
    loans = TableClient(library_model, deployment.table_name("DataTable"), client=dynamodb_client)
    keys = [loans.keys("Loan", **{**LOAN, "member_id": m}) for m in ("m-1", "m-2")]
    assert [[r.event for r in audit.history(key=k)] for k in keys] == [["INSERT"], ["INSERT"]]
    assert aggregated.errors == [] and audited.errors == [] and audited.filtered_out > 0
    assert api.last_invocation.cdk_modules == []
