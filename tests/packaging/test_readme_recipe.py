"""The two-repository recipe (docs/patterns/two-repositories.md) run as written: its files in two directories
side by side (``shop-data/``, the producer; ``shop-reports/``, the consumer), and its command
blocks run line by line — ``cd``, the contract export, the pinned CDK CLI installed with npm,
``cdk synth``, the copy of the contract file (the consumer's pin), the typed module generated
with ``codegen``, the consumer's ``contract verify``, ``pytest`` (``local_producer``: the
producer's table and SSM parameters from the committed file), ``describe`` and ``contract
slice``, and the producer's ``diff`` with that slice registered — with DynamoDB Local from this
checkout (``DYNAMODB_LOCAL_DIR``). Then day two, the refresh the page describes: the producer
adds an access pattern and exports its contract again; the consumer copies it over its pin, and
``contract verify`` exits 1 naming the stale typed module and the command regenerating it, which
makes it pass again.

Offline like tests/packaging/test_tutorial.py: ``python3 -m venv .venv`` makes a virtualenv
with the pinned uv (no pip in it) holding the session's wheel (``--no-deps``) and a ``.pth`` line
naming this environment's site-packages for the third-party packages, which stands in for the
``pip install`` line; ``. .venv/bin/activate`` selects it for the lines that follow
(``_apps.clean_env``: with its own ``TMPDIR`` and the dev extra's pytest plugins off).
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from _apps import REPO, Clock, clean_env, make_venv

from constructs_lib.model import Model
from constructs_lib.testing import find_dynamodb_local_dir

pytestmark = pytest.mark.e2e

PAGE = REPO / "docs" / "patterns" / "two-repositories.md"
TITLE = "# The two-repository recipe, file first"
PIP_LINE = 'pip install "/path/to/dist/constructs_lib-0.2.0-py3-none-any.whl[cdk,testing]"'
CLOCK_TITLE = "docs recipe check"
VERIFY = "python -m constructs_lib contract verify app.py --against contracts/shop.contract.json"
CODEGEN = "python -m constructs_lib codegen app.py -o pending/shop_typed.py"
SLICE = "python -m constructs_lib contract slice app.py -o shop-reports.json"
DIFF = "python -m constructs_lib diff app.py"


def section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    assert text.startswith(TITLE), f"{PAGE} no longer starts with {TITLE!r}"
    return text


def recipe_files() -> dict[str, str]:
    """Path (``shop-data/...`` or ``shop-reports/...``) -> content of every file the section shows."""
    return dict(re.findall(r"`([\w./-]+)`[^\n]*\n```(?:json|python)\n(.*?)```", section(), flags=re.DOTALL))


def recipe_blocks() -> list[list[str]]:
    """The commands of each bash block, comments and blank lines dropped."""
    blocks = re.findall(r"```bash\n(.*?)```", section(), flags=re.DOTALL)
    return [[line.split("#")[0].strip() for line in block.splitlines() if line.split("#")[0].strip()]
            for block in blocks]


def test_the_section_shows_both_repositories_files_and_commands() -> None:
    # GIVEN the recipe page
    files, blocks = recipe_files(), recipe_blocks()
    # THEN it shows the producer's two files and the consumer's four
    assert sorted(files) == ["shop-data/app.py", "shop-data/cdk.json", "shop-reports/app.py", "shop-reports/cdk.json",
                             "shop-reports/pending/index.py", "shop-reports/test_pending.py"]
    # AND blocks for the producer (export, synth), the consumer (setup, then its CI) and the producer
    # registering the consumer's slice
    assert [block[0] for block in blocks] == ["cd shop-data", "cd ../shop-reports", CODEGEN, "npx cdk synth --quiet",
                                              "cd ../shop-data"]
    commands = [c for block in blocks for c in block]
    assert commands.count(PIP_LINE) == 2 and commands.count("npm install --save-dev --save-exact aws-cdk@2.1148.1") == 2
    assert "cp ../shop-data/shop.contract.json contracts/shop.contract.json" in commands
    assert {"python -m pytest", "python -m constructs_lib describe app.py", VERIFY, SLICE, DIFF} <= set(commands)
    # AND the consumer's test stands in for the producer with local_producer, and its handler uses
    # the typed module
    assert "local_producer(" in files["shop-reports/test_pending.py"]
    assert "from shop_typed import ShopTable" in files["shop-reports/pending/index.py"]
    # AND the refresh step and the consumer's CI row say that verify catches a stale typed module
    text = section()
    refresh = text[text.index("Refreshing is one reviewed step"):]
    assert "regenerate the typed modules" in refresh and CODEGEN in refresh and "ModelMismatchError" in refresh
    (consumer_row,) = [line for line in text.splitlines() if line.startswith("| `shop-reports` (consumer)")]
    assert "typed module it ships is stale" in consumer_row and "`codegen` command" in consumer_row
    # AND the consumer's pin is the committed contract file, not a whole-model fingerprint
    assert json.loads(files["shop-reports/cdk.json"]) == {"app": "python app.py"}
    assert 'contract="contracts/shop.contract.json"' in files["shop-reports/app.py"]
    assert "expected_fingerprint" not in files["shop-reports/app.py"]


@dataclass(frozen=True)
class Recipe:
    """The two repositories after the recipe ran: the directory holding both, each command's
    result (``"<repository>: <command>"``) and the environment of each repository's virtualenv."""

    root: Path
    outputs: dict[str, subprocess.CompletedProcess[str]]
    envs: dict[str, dict[str, str]]


@pytest.fixture(scope="module")
def recipe(wheel_file: Path, tmp_path_factory: pytest.TempPathFactory, clock: Clock) -> Recipe:
    """The section's files in two empty directories side by side, and its blocks run line by line
    as in one shell started in the directory holding both."""
    root = tmp_path_factory.mktemp("recipe")
    for name, content in recipe_files().items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    base = clean_env(CONSTRUCTS_LIB_CACHE_DIR=str(root / "user-cache"), DYNAMODB_LOCAL_DIR=str(find_dynamodb_local_dir()))
    outputs: dict[str, subprocess.CompletedProcess[str]] = {}
    envs: dict[str, dict[str, str]] = {}
    cwd, env = root, base
    for block in recipe_blocks():
        for command in block:
            if command.startswith("cd "):
                cwd = (cwd / command[3:]).resolve()  # the active virtualenv stays, as in a shell
            elif command == "python3 -m venv .venv":
                make_venv(cwd / ".venv", wheel_file, clock, step="venvs (offline uv install)")
            elif command == ". .venv/bin/activate":
                env = envs[cwd.name] = clean_env(cwd / ".venv", **{k: base[k] for k in ("CONSTRUCTS_LIB_CACHE_DIR",
                                                                                        "DYNAMODB_LOCAL_DIR")})
            elif command == PIP_LINE:
                assert (cwd / ".venv").is_dir(), "the pip line comes after the virtualenv is made"
            else:
                step = " ".join(command.split()[:4 if command.startswith("python") else 3])
                outputs[f"{cwd.name}: {command}"] = clock.run(step, ["bash", "-c", command], cwd=cwd, env=env,
                                                              timeout=600)
    return Recipe(root, outputs, envs)


def test_the_recipe_runs_in_two_fresh_repositories(recipe: Recipe) -> None:
    # GIVEN the recipe run in two empty directories side by side
    outputs = recipe.outputs
    # THEN the producer exported the contract its synth writes, and the consumer committed it
    producer, consumer = recipe.root / "shop-data", recipe.root / "shop-reports"
    assert (producer / "cdk.out" / "shop.contract.json").read_bytes() == (producer / "shop.contract.json").read_bytes()
    assert (consumer / "contracts" / "shop.contract.json").read_bytes() == (producer / "shop.contract.json").read_bytes()
    # AND its CI's verify found the function's slice compatible with the committed contract, and the
    # typed module its function ships up to date
    verified = outputs[f"shop-reports: {VERIFY}"].stdout
    assert verified.startswith("ShopReports/Pending: compatible (1 entities, 1 indexes)\n"), verified
    assert "pending/shop_typed.py: typed module of model 'shop' is up to date" in verified
    assert not [p for p in consumer.rglob("*.py") if ".venv" not in p.parts and "shop_model" in p.read_text("utf-8")]
    # AND the CDK CLI is pinned exactly on both sides
    for repo in (producer, consumer):
        assert json.loads((repo / "package.json").read_text(encoding="utf-8"))["devDependencies"] == {"aws-cdk": "2.1148.1"}
    # AND the consumer synthesized its function with the view and the typed module bundled, and its
    # test passed: the handler ran with its deployed environment, reading the contract at cold start
    (asset,) = [p for p in (consumer / "cdk.out").glob("asset.*") if (p / "index.py").is_file()]
    bundled = Model.from_json((asset / "model.json").read_text(encoding="utf-8"))
    assert bundled.consumer_patterns == ("orders by status since",)
    assert (asset / "shop_typed.py").read_bytes() == (consumer / "pending" / "shop_typed.py").read_bytes()
    assert "1 passed" in outputs["shop-reports: python -m pytest"].stdout
    # AND describe listed the imported table and the function's scope and slice
    described = outputs["shop-reports: python -m constructs_lib describe app.py"].stdout
    assert described.startswith("# ShopReports/Shop — data model `shop` (imported)"), described[:200]
    assert ("| `ShopReports/Pending` | `orders by status since` | none | GSI1 | reads `Order`; writes nothing "
            "| Query on GSI1 for STATUS#* |") in described
    # AND the producer committed the consumer's slice, and its diff checked it and breaks no consumer
    registered = json.loads((producer / "contracts" / "consumers" / "shop-reports.json").read_text(encoding="utf-8"))
    assert registered == json.loads((consumer / "shop-reports.json").read_text(encoding="utf-8"))
    diffed = outputs[f"shop-data: {DIFF}"].stdout
    assert "consumer:" not in diffed
    assert "registered consumers checked, unaffected: 'shop-reports' (contracts/consumers/shop-reports.json)" in diffed


def test_day_two_verify_catches_the_typed_module_a_refreshed_pin_leaves_stale(recipe: Recipe, clock: Clock) -> None:
    producer, consumer = recipe.root / "shop-data", recipe.root / "shop-reports"

    def run(repo: Path, command: str) -> subprocess.CompletedProcess[str]:
        step = "day two: " + " ".join(command.split()[:4 if command.startswith("python") else 3])
        return clock.run(step, ["bash", "-c", command], cwd=repo, env=recipe.envs[repo.name], check=False)

    # GIVEN the producer adds an access pattern (additive: no fingerprint moves) and exports its contract
    app = producer / "app.py"
    anchor = 'AccessPattern("orders by status", entity="Order", index="GSI1", sk="between")'
    assert app.read_text(encoding="utf-8").count(anchor) == 1
    app.write_text(app.read_text(encoding="utf-8").replace(
        anchor, anchor + ',\n                     AccessPattern("paid orders", entity="Order", index="GSI1")'), encoding="utf-8")
    assert run(producer, "python -m constructs_lib contract export app.py --table ShopData/Data -o shop.contract.json"
               ).returncode == 0
    # WHEN the consumer refreshes its pin as the page says: copy the new file, verify
    assert run(consumer, "cp ../shop-data/shop.contract.json contracts/shop.contract.json").returncode == 0
    stale = run(consumer, VERIFY)
    # THEN verify exits 1: the slice holds, but the typed module the function ships is stale, and it
    # names the module and the command that regenerates it
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert stale.stdout.startswith("ShopReports/Pending: compatible (1 entities, 1 indexes)\n"), stale.stdout
    assert "pending/shop_typed.py: STALE typed module of model 'shop'" in stale.stdout
    assert f"regenerate it:\n    {CODEGEN}\n" in stale.stdout
    # AND after running that command it passes, the module now holding the new pattern
    assert run(consumer, CODEGEN).returncode == 0
    again = run(consumer, VERIFY)
    assert again.returncode == 0 and "pending/shop_typed.py: typed module of model 'shop' is up to date" in again.stdout
    assert "def paid_orders(" in (consumer / "pending" / "shop_typed.py").read_text(encoding="utf-8")
