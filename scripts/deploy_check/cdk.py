"""The pinned CDK CLI (``node_modules/.bin/cdk``) pointed at the emulator."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CDK = ROOT / "node_modules" / ".bin" / "cdk"
QUIET = {"CDK_DISABLE_CLI_TELEMETRY": "true", "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
         "AWS_EC2_METADATA_DISABLED": "true"}


class CdkFailed(RuntimeError):
    """A cdk command exited non-zero (the message ends with its output's tail)."""


class Cdk:
    """Runs ``cdk`` with the emulator's environment; each command's output goes to ``logs``."""

    def __init__(self, environment: Mapping[str, str], logs: Path) -> None:
        self.env = {**{k: v for k, v in os.environ.items() if not k.startswith("AWS_")}, **QUIET, **environment}
        self.logs = logs
        logs.mkdir(parents=True, exist_ok=True)
        self.count = 0

    def __call__(self, *args: str, cwd: Path = ROOT, check: bool = True, log: str = "") -> str:
        self.count += 1
        name = f"{self.count:02d}-{log or args[0]}.log"
        command = [str(CDK), *args, "--no-notices"]
        done = subprocess.run(command, cwd=cwd, env=self.env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, check=False)
        output = done.stdout + done.stderr
        (self.logs / name).write_text(" ".join(command) + "\n\n" + output, encoding="utf-8")
        if check and done.returncode != 0:
            tail = "\n".join(output.strip().splitlines()[-25:])
            raise CdkFailed(f"`cdk {' '.join(args)}` exited {done.returncode} (log {self.logs / name}):\n{tail}")
        return output

    def deploy(self, stacks: Sequence[str], *options: str, log: str = "deploy") -> str:
        return self(
            "deploy", *stacks, "--require-approval", "never", "--concurrency", "4", "--progress", "events", *options,
            log=log,
        )


def unchanged_stacks(output: str) -> set[str]:
    """Stacks a ``cdk deploy`` reported as "(no changes)"."""
    return set(re.findall(r"✅\s+(\S+) \(no changes\)", output))


def deployed_stacks(output: str) -> set[str]:
    """Stacks a ``cdk deploy`` reported as deployed (changed or not)."""
    return set(re.findall(r"✅\s+(\S+)", output))
