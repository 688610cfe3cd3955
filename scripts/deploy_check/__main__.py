"""``make deploy-check``: every stack of app.py deployed to LocalStack with the pinned CDK CLI.

Installs LocalStack (cached), starts it on 127.0.0.1, bootstraps, evolves ``StoreStack`` from v1
through each rollout step, deploys every stack of app.py, runs the checks (checks.py, store.py)
against the deployed resources, then ``cdk diff`` (no differences), a second ``deploy --all``
(no changes) and ``destroy --all --force`` (only the retained resources left), stops
LocalStack, and prints the time of each phase. The known emulator gaps are asserted as they
are (``gaps``); each fails the run the day the emulator changes. Exit status 0 when everything
held, 1 when a check or command failed, 2 when a prerequisite is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from constructs_lib.testing.exceptions import LocalStackError, LocalStackSetupError
from constructs_lib.testing.localstack import install, start
from constructs_lib.testing.localstack.server import ACCOUNT, REGION
from scripts.deploy_check import checks, gaps
from scripts.deploy_check.aws import Aws, CheckFailed, expect
from scripts.deploy_check.cdk import QUIET, ROOT, Cdk, CdkFailed, deployed_stacks, unchanged_stacks
from scripts.deploy_check.store import backfill_and_read, evolve

#: The stacks of app.py (app.STACKS), in synthesis order.
STACKS = ["ShopStack", "SaasStack", "IotTelemetryStack", "ViralVideoStack", "ShopReportingStack", "StoreStack",
          "GlobalDocsStack"]
RETAINED = {"AWS::DynamoDB::GlobalTable", "AWS::Logs::LogGroup", "AWS::SecretsManager::Secret"}


class Run:
    def __init__(self) -> None:
        self.times: dict[str, float] = {}
        self.results: list[tuple[str, str, str]] = []

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        began = time.monotonic()
        print(f"== {name}", flush=True)
        try:
            yield
        finally:
            self.times[name] = self.times.get(name, 0.0) + time.monotonic() - began

    def check(self, name: str, function: Callable[[], str]) -> None:
        try:
            line = function()
        except CheckFailed as exc:
            self.results.append((name, "FAIL", str(exc)))
            print(f"  FAIL {name}: {exc}", flush=True)
            return
        self.results.append((name, "ok", line))
        print(f"  ok   {name}: {line}", flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def resource_counts(aws: Aws, assembly: Path) -> list[str]:
    lines = []
    for stack in STACKS:
        template = json.loads((assembly / f"{stack}.template.json").read_text(encoding="utf-8"))
        deployed = aws.resources(stack)
        incomplete = [r["LogicalResourceId"] for r in deployed if not r["ResourceStatus"].endswith("COMPLETE")]
        expect(len(deployed) == len(template["Resources"]) and not incomplete,
               f"{stack}: {len(deployed)} resources deployed of {len(template['Resources'])}, incomplete {incomplete}")
        lines.append(f"{stack}: {len(deployed)} resources")
    return lines


def destroyed(aws: Aws, before: dict[str, list[dict[str, Any]]]) -> str:
    """No stack of the app left; the retained resources are there, the others gone."""
    live = {s["StackName"] for s in aws.client("cloudformation").list_stacks()["StackSummaries"]
            if s["StackStatus"] != "DELETE_COMPLETE"}
    expect(not live & set(STACKS), f"stacks left after destroy: {sorted(live & set(STACKS))}")
    tables = set(aws.client("dynamodb").list_tables()["TableNames"])
    functions = {f["FunctionName"] for f in aws.client("lambda").list_functions()["Functions"]}
    queues = set(aws.client("sqs").list_queues().get("QueueUrls", []))
    retained = gone = 0
    for resources in before.values():
        for r in resources:
            kind, physical = r["ResourceType"], r["PhysicalResourceId"]
            if kind == "AWS::DynamoDB::GlobalTable":
                expect(physical in tables, f"retained table {physical} was deleted")
                retained += 1
            elif kind == "AWS::Lambda::Function":
                expect(physical not in functions, f"function {physical} left after destroy")
                gone += 1
            elif kind == "AWS::SQS::Queue":
                expect(physical not in queues, f"queue {physical} left after destroy")
                gone += 1
    return f"no stack left; {retained} tables retained (DeletionPolicy Retain), {gone} functions and queues deleted"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.deploy_check", description=__doc__)
    parser.add_argument("--port", type=int, help="LocalStack's port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--work", type=Path, help="directory for assemblies and cdk logs (default: a temp dir)")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="deploy-check-"))
    work.mkdir(parents=True, exist_ok=True)
    run = Run()
    started = time.monotonic()
    assembly = work / "app.out"
    # The app is synthesized while LocalStack starts and StoreStack evolves (2 cores: it overlaps).
    with (work / "synth.log").open("w") as synth_log:
        synth = subprocess.Popen([str(ROOT / "node_modules/.bin/cdk"), "synth", "--quiet", "--no-notices", "-o",
                                  str(assembly)], cwd=ROOT, env={**os.environ, **QUIET}, stdout=subprocess.DEVNULL,
                                 stderr=synth_log, stdin=subprocess.DEVNULL)
    server = None
    try:
        with run.phase("install"):
            installation = install()
        with run.phase("start"):
            server = start(installation, port=args.port or free_port())
        env = server.client_environment()
        aws, cdk = Aws(env), Cdk(env, work / "logs")
        with run.phase("bootstrap"):
            empty = work / "bootstrap"
            empty.mkdir(exist_ok=True)
            cdk("bootstrap", f"aws://{ACCOUNT}/{REGION}", cwd=empty)
        with run.phase("store v1 and rollout steps"):
            table, steps, seeded = evolve(aws, cdk, work)
            for line in steps:
                print(f"  {line}")
        with run.phase("synth (overlapping)"):
            expect(synth.wait() == 0, f"cdk synth failed: {(work / 'synth.log').read_text()[-2000:]}")
        with run.phase("deploy"):
            output = cdk.deploy(["--all"], "--app", str(assembly))
            expect(deployed_stacks(output) == set(STACKS), f"deployed: {sorted(deployed_stacks(output))}")
            for line in resource_counts(aws, assembly):
                print(f"  {line}")
        state: dict[str, Any] = {}
        with run.phase("checks"):
            run.check("shop: orders API places orders", lambda: checks.shop_orders(aws, state))
            run.check("shop: counter through the event source mapping", lambda: checks.shop_counter(aws, state))
            run.check("shop: audit", lambda: checks.shop_audit(aws, state))
            run.check("reporting: SSM contract and cold-start refusal", lambda: checks.reporting(aws, state))
            run.check("global: two Regions", lambda: checks.global_docs(aws, state))
            run.check("store: v2 patterns after the backfill", lambda: backfill_and_read(aws, table, seeded))
            run.check("failure queues empty", lambda: checks.failure_queues_empty(aws, STACKS))
            for name, gap in gaps.GAPS:
                run.check(f"gap asserted: {name}", lambda gap=gap: gap(aws))
        with run.phase("diff"):
            output = cdk("diff", "--all", "--fail", log="diff")
            expect(output.count("There were no differences") == len(STACKS), f"cdk diff:\n{output[-3000:]}")
            print(f"  cdk diff (app synthesized again): no differences in {len(STACKS)} stacks")
        with run.phase("second deploy"):
            output = cdk.deploy(["--all"], "--app", str(ROOT / "cdk.out"), log="deploy-again")
            expect(unchanged_stacks(output) == set(STACKS), f"changed on the second deploy: "
                                                             f"{sorted(set(STACKS) - unchanged_stacks(output))}")
            print(f"  second deploy --all: {len(STACKS)} stacks, no changes")
        with run.phase("destroy"):
            before = {stack: aws.resources(stack) for stack in STACKS}
            cdk("destroy", "--all", "--force", "--app", str(ROOT / "cdk.out"), log="destroy")
            run.check("destroy --all --force", lambda: destroyed(aws, before))
    except LocalStackSetupError as exc:
        print(f"deploy-check: {exc}", file=sys.stderr)
        return 2
    except (LocalStackError, CdkFailed, CheckFailed) as exc:
        print(f"deploy-check failed: {exc}", file=sys.stderr)
        run.results.append(("run", "FAIL", str(exc)))
    finally:
        if synth.poll() is None:
            synth.kill()
            synth.wait()
        if server is not None:
            with run.phase("stop"):
                server.stop()
            shutil.copyfile(server.log, work / "localstack.log")
            shutil.rmtree(server.log.parent, ignore_errors=True)
    failed = [r for r in run.results if r[1] == "FAIL"]
    total = time.monotonic() - started
    print("deploy-check times: " + ", ".join(f"{k} {v:.1f} s" for k, v in run.times.items()) + f"; total {total:.1f} s")
    print(f"deploy-check: LocalStack's log, the cdk logs and the assemblies are in {work}")
    print(f"deploy: {len(run.results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
