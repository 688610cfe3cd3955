"""``python -m constructs_lib cost app.py --rates ...``: the showcase app priced with the shop's
traffic mix, as Markdown and JSON, and the exit status and message of a bad rates or price file.

All cases run as the command line in one subprocess (one jsii start); the unit test process
never imports the AWS CDK.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import Run, run_in_one_process

REPO = Path(__file__).resolve().parents[3]
RATES = "examples/shop/rates.json"
VIRAL_RATES = "examples/viral/rates.json"

@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    scratch = tmp_path_factory.mktemp("cost-cli")
    text = (REPO / RATES).read_text(encoding="utf-8")
    bad_rates = scratch / "bad_rates.json"
    bad_rates.write_text(text.replace('"order by id": 15', '"order by ID": 15'), encoding="utf-8")
    bad_prices = scratch / "bad_prices.json"
    shipped = REPO / "constructs_lib" / "capacity" / "prices" / "us-east-1.json"
    bad_prices.write_text(shipped.read_text(encoding="utf-8").replace('"version": 1', '"version": 2'), encoding="utf-8")
    cases = {
        "markdown": ["cost", "app.py", "--rates", RATES],
        "json": ["cost", "app.py", "--rates", RATES, "--format", "json"],
        "bad rates": ["cost", "app.py", "--rates", str(bad_rates)],
        "bad prices": ["cost", "examples/shop/model.py", "--rates", RATES, "--prices", str(bad_prices)],
        "model only": ["cost", "examples/shop/model.py", "--rates", str(scratch / "model_rates.json")],
        "shop recompute": ["cost", "app.py", "--rates", RATES, "--format", "json", "--counter-layout", "recompute"],
        "viral": ["cost", "examples/viral/app.py", "--rates", VIRAL_RATES, "--format", "json"],
        "viral recompute": ["cost", "examples/viral/app.py", "--rates", VIRAL_RATES, "--format", "json",
                            "--counter-layout", "recompute"],
    }
    (scratch / "model_rates.json").write_text(json.dumps({
        "format": "constructs_lib.rates", "version": 1,
        "tables": {"shop": {"reads": {"product by sku": 100}, "writes": {"Order": {"update": 2}}}},
    }), encoding="utf-8")
    return run_in_one_process(cases, cwd=REPO)


def test_cost_of_the_showcase_app_in_markdown(runs: dict[str, Run]) -> None:
    # GIVEN app.py and the shop's mix / WHEN priced / THEN a table per priced table, both modes
    run = runs["markdown"]
    assert run.code == 0, run.err
    assert "## ShopStack/Data" in run.out and "## audit of ShopStack/Data" in run.out
    assert "| **total $/month** |" in run.out and "Cheaper: **" in run.out
    for row in ("| table |", "| GSI1 |", "| GSI2 |", "| GSI3 |", "counter product_views: increments",
                "counter product_views: aggregator Lambda", "audit writer Lambda", "stream reads (GetRecords)"):
        assert row in run.out
    # AND what was found around the table: the counter's stream layout, the audit's 365 days
    assert "counter product_views: stream layout, no reads when aggregating" in run.out
    assert "365 days' retention" in run.out
    # AND the tables without rates are named, and the assumptions close the page
    assert "not priced (no rates given): SaasStack/Docs" in run.out
    assert "## Assumptions" in run.out and "730 hours" in run.out


def test_the_readme_and_the_cost_page_show_the_figures_the_command_prints(runs: dict[str, Run]) -> None:
    # GIVEN the shop's totals as the command prints them
    run = runs["markdown"]
    section = run.out.split("## ShopStack/Data", 1)[1]
    total = next(line for line in section.splitlines() if line.startswith("| **total $/month** |"))
    on_demand, provisioned = [c.strip(" *") for c in total.strip("|").split("|")[1:3]]
    aggregator = next(line for line in section.splitlines() if "aggregator writes totals" in line).split("|")[-2].strip()
    # WHEN the README's excerpt is read THEN it quotes the same figures (a changed price, rate or
    # formula makes this fail until the excerpt is refreshed)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"| total $/month | {on_demand} | {provisioned} |" in readme
    assert f"${aggregator} on demand" in readme
    # AND the cost page's full output carries them too
    page = (REPO / "docs" / "cost.md").read_text(encoding="utf-8")
    assert f"**{on_demand}**" in page and f"**{provisioned}**" in page


def test_cost_as_json_adds_up(runs: dict[str, Run]) -> None:
    run = runs["json"]
    assert run.code == 0, run.err
    data = json.loads(run.out)
    assert data["hours_per_month"] == 730 and data["prices"]["region"] == "us-east-1"
    shop = data["tables"][0]
    assert shop["name"] == "ShopStack/Data"
    parts = sum(r["on_demand_usd"] for r in shop["capacity"]) + shop["storage_usd"] + sum(c["usd"] for c in shop["charges"])
    assert shop["on_demand_usd"] == pytest.approx(parts, rel=1e-6)
    assert shop["cheaper"] == ("provisioned" if shop["provisioned_usd"] < shop["on_demand_usd"] else "on-demand")


def test_bad_rates_exit_1_naming_the_line(runs: dict[str, Run]) -> None:
    run = runs["bad rates"]
    line = next(n for n, text in enumerate((REPO / RATES).read_text().splitlines(), 1) if '"order by id"' in text)
    assert run.code == 1 and run.out == ""
    assert f"bad_rates.json, line {line}: table 'ShopStack/Data': unknown access pattern 'order by ID'" in run.err
    assert run.err.startswith("python -m constructs_lib cost: ")


def test_bad_price_file_exits_1_naming_the_line(runs: dict[str, Run]) -> None:
    run = runs["bad prices"]
    assert run.code == 1
    assert "bad_prices.json, line 3: price file version 2 is not supported" in run.err


def test_a_model_module_is_priced_by_its_model_name(runs: dict[str, Run]) -> None:
    run = runs["model only"]
    assert run.code == 0, run.err
    assert "## shop" in run.out and "audit" not in run.out.split("## Assumptions")[0]


def _components(run: Run, table: str) -> dict[str, float]:
    assert run.code == 0, run.err
    (cost,) = [t for t in json.loads(run.out)["tables"] if t["name"] == table]
    return {c["component"]: c["wcu_per_second"] * 0.625e-6 + c["rcu_per_second"] * 0.125e-6 for c in cost["components"]}


def _total(run: Run, table: str) -> float:
    (cost,) = [t for t in json.loads(run.out)["tables"] if t["name"] == table]
    return float(cost["on_demand_usd"])


def test_the_shop_aggregation_costs_at_most_its_increments(runs: dict[str, Run]) -> None:
    # GIVEN the shop priced as deployed (stream layout) and in the recompute layout
    after, before = _components(runs["json"], "ShopStack/Data"), _components(runs["shop recompute"], "ShopStack/Data")
    # THEN product_views' aggregation costs at most its increments, where it cost about 6 times them
    name = "counter product_views"
    assert after[f"{name}: aggregator writes totals"] <= after[f"{name}: increments"]
    assert f"{name}: aggregator reads shards" not in after
    aggregation = before[f"{name}: aggregator reads shards"] + before[f"{name}: aggregator writes totals"]
    assert aggregation > 6 * before[f"{name}: shard increments"]


def test_the_viral_peak_costs_at_most_30_percent_of_the_recompute_layout(runs: dict[str, Run]) -> None:
    # GIVEN examples/viral priced with its committed rates, as deployed and in the recompute layout
    after, before = _total(runs["viral"], "ViralVideoStack/Data"), _total(runs["viral recompute"], "ViralVideoStack/Data")
    # THEN the stream layout costs at most 30 % of the recompute layout
    assert after <= 0.30 * before, (after, before)
    # AND its aggregation reads nothing
    assert not any("reads shards" in name for name in _components(runs["viral"], "ViralVideoStack/Data"))


def test_the_viral_hot_counter_aggregation_costs_at_most_5_percent(runs: dict[str, Run]) -> None:
    # GIVEN examples/viral priced as deployed THEN the hot counter's aggregation costs at most 5 %
    # of its increments
    lines = _components(runs["viral"], "ViralVideoStack/Data")
    assert lines["counter video_views: aggregator writes totals"] <= 0.05 * lines["counter video_views: increments"]
