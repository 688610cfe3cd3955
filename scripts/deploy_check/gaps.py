"""What the emulator does not do, asserted as it is: each check passes while the gap is there and
fails (so the skip is revisited) the day the emulator closes it. The gaps LocalStack is patched
for at install are in constructs_lib/testing/localstack/patches.py; all of them are listed in
docs/deploy-to-localstack.md.
"""

from __future__ import annotations

from collections.abc import Callable

from scripts.deploy_check.aws import Aws, expect, wait_for


def dashboard_not_created(aws: Aws) -> str:
    """``AWS::CloudWatch::Dashboard`` has no provider: reported complete, nothing created."""
    dashboards = [r for r in aws.resources("ShopStack") if r["ResourceType"] == "AWS::CloudWatch::Dashboard"]
    expect(len(dashboards) == 1 and dashboards[0]["ResourceStatus"] == "CREATE_COMPLETE",
           f"ShopStack's dashboard resource: {dashboards}")
    listed = aws.client("cloudwatch").list_dashboards()["DashboardEntries"]
    expect(not listed, f"the emulator now creates dashboards ({listed}): check the dashboard instead of this skip")
    return "ShopStack's dashboard: CREATE_COMPLETE in CloudFormation, no dashboard in CloudWatch (not checked)"


def logging_config_mocked(aws: Aws) -> str:
    """Lambda ``LoggingConfig`` is accepted and ignored: logs go to ``/aws/lambda/<name>``."""
    function = aws.outputs("ShopStack")["OrdersApiFunction"]
    configured = aws.client("lambda").get_function_configuration(FunctionName=function)["LoggingConfig"]["LogGroup"]
    default = f"/aws/lambda/{function}"
    expect(configured != default, f"{function} logs to {configured}")
    logs = aws.client("logs")

    def events(group: str) -> list[object]:
        try:
            return list(logs.filter_log_events(logGroupName=group, limit=5)["events"])
        except logs.exceptions.ResourceNotFoundException:
            return []

    wait_for(f"log events of {function} in {default}", lambda: events(default) or None, timeout=30)
    expect(not events(configured), f"the emulator now honours LoggingConfig ({configured} has events): "
                                   "check the log group instead of this skip")
    return f"{function} logs to {default}, not to its configured {configured} (not checked)"


#: (name, assertion) of each gap asserted at run time.
GAPS: list[tuple[str, Callable[[Aws], str]]] = [
    ("AWS::CloudWatch::Dashboard is not created", dashboard_not_created),
    ("Lambda LoggingConfig is mocked", logging_config_mocked),
]
