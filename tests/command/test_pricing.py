"""Pricing: lookup rules, the pricing.json overlay, and a ledger that never crashes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import corecoder.cli.pricing
from corecoder.cli.config import ConfigError
from corecoder.cli.pricing import SCRIPTED, Ledger, Price, cost_of, load_prices, price_for
from corecoder.messages import Usage
from corecoder.scripted import ScriptedLLM
from corecoder.testing import ScriptServer

PRICES = load_prices(Path(__file__).parent / "no-such-home")  # the built-in table alone

TABLE = {"cheap": Price(1.0, 2.0, 0.5), "dear": Price(10.0, 40.0), "gpt-4o": Price(2.5, 10.0, 1.25),
         "gpt-4o-mini": Price(0.15, 0.6, 0.075)}


# --- lookup --------------------------------------------------------------------------


def test_an_exact_name_is_found():
    assert price_for("gpt-4o", PRICES) == PRICES["gpt-4o"]


def test_provider_prefixes_are_stripped():
    assert price_for("openrouter/openai/gpt-4o", PRICES) == PRICES["gpt-4o"]
    assert price_for("deepseek/deepseek-flash", PRICES) == PRICES["deepseek-flash"]


def test_openrouter_names_are_found_with_or_without_the_openrouter_prefix():
    claude = PRICES["anthropic/claude-sonnet-4.5"]
    assert price_for("anthropic/claude-sonnet-4.5", PRICES) == claude
    assert price_for("openrouter/anthropic/claude-sonnet-4.5", PRICES) == claude


def test_a_dated_snapshot_gets_its_family_price():
    assert price_for("gpt-4o-2024-08-06", TABLE) == TABLE["gpt-4o"]
    assert price_for("openai/gpt-4o-2024-08-06", TABLE) == TABLE["gpt-4o"]


def test_the_longest_known_prefix_wins():
    assert price_for("gpt-4o-mini-2024-07-18", TABLE) == TABLE["gpt-4o-mini"]


def test_a_prefix_must_end_at_a_separator():
    table = {"gpt-5": Price(1.25, 10.0), "o3": Price(2.0, 8.0)}
    assert price_for("gpt-5.5", table) is None  # a different model, not a gpt-5 snapshot
    assert price_for("o30", table) is None
    assert price_for("gpt-5:latest", table) == table["gpt-5"]


def test_an_unknown_model_has_no_price():
    assert price_for("my-local-model", PRICES) is None
    assert price_for("ollama/llama3.1:8b", PRICES) is None


def test_the_built_in_table_is_read_only_and_sane():
    with pytest.raises(TypeError):
        PRICES["free"] = Price(0, 0)
    assert len(PRICES) >= 20
    for price in PRICES.values():
        assert price.input >= 0 and price.output >= 0
        assert price.cached_input is None or price.cached_input <= price.input


# --- pricing.json --------------------------------------------------------------------


def write(home, data):
    home.mkdir(exist_ok=True)
    (home / "pricing.json").write_text(data if isinstance(data, str) else json.dumps(data))


def test_without_pricing_json_the_built_in_table_is_used(tmp_path):
    assert load_prices(tmp_path / "no-such-home") == PRICES


def test_the_built_in_table_is_data_checked_by_the_same_loader(tmp_path, monkeypatch):
    assert corecoder.cli.pricing.BUILT_IN.name == "prices.json"
    broken = tmp_path / "prices.json"
    broken.write_text(json.dumps({"gpt-4o": {"input": 2.5, "ouptut": 10}}))
    monkeypatch.setattr(corecoder.cli.pricing, "BUILT_IN", broken)
    with pytest.raises(ConfigError, match=r"prices.json: price for 'gpt-4o' has unknown field 'ouptut'"):
        load_prices(tmp_path)


def test_pricing_json_adds_and_replaces_entries(tmp_path):
    write(tmp_path, {"my-local-model": {"input": 0, "output": 0},
                     "gpt-4o": {"input": 2, "output": 8, "cached_input": 0.5}})
    prices = load_prices(tmp_path)
    assert prices["my-local-model"] == Price(0, 0)
    assert prices["gpt-4o"] == Price(2, 8, 0.5)
    assert prices["gpt-4o-mini"] == PRICES["gpt-4o-mini"]
    assert PRICES["gpt-4o"] == Price(2.50, 10.00, 1.25)  # the built-in table is untouched
    with pytest.raises(TypeError):
        prices["x"] = Price(0, 0)


def test_cached_input_may_be_null(tmp_path):
    write(tmp_path, {"m": {"input": 1, "output": 2, "cached_input": None}})
    assert load_prices(tmp_path)["m"] == Price(1, 2, None)


def test_malformed_json_names_the_file_and_the_place(tmp_path):
    write(tmp_path, '{"m": {"input": 1,}}')
    with pytest.raises(ConfigError) as error:
        load_prices(tmp_path)
    assert str(tmp_path / "pricing.json") in str(error.value) and "line 1" in str(error.value)


@pytest.mark.parametrize("data, problem", [
    ([1, 2], "must be a JSON object"),
    ({"m": 3}, "must be an object"),
    ({"m": {"input": 1}}, "missing 'output'"),
    ({"m": {"input": -1, "output": 1}}, "'input' must be a finite, non-negative number"),
    ({"m": {"input": "1", "output": 1}}, "'input' must be a finite, non-negative number"),
    ({"m": {"input": 1, "output": True}}, "'output' must be a finite, non-negative number"),
    ({"m": {"input": 1, "output": 2, "cache_input": 0.1}}, "unknown field 'cache_input'"),
])
def test_a_bad_entry_names_the_file_the_model_and_the_problem(tmp_path, data, problem):
    write(tmp_path, data)
    with pytest.raises(ConfigError) as error:
        load_prices(tmp_path)
    assert str(tmp_path / "pricing.json") in str(error.value) and problem in str(error.value)
    if isinstance(data, dict):
        assert "'m'" in str(error.value)


# --- cost ----------------------------------------------------------------------------


def test_cached_tokens_are_part_of_the_prompt_and_cost_the_cached_rate():
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000, cached_tokens=400_000)
    assert cost_of(usage, Price(1.0, 2.0, 0.5)) == pytest.approx(0.6 * 1.0 + 0.4 * 0.5 + 2.0)


def test_without_a_cached_rate_cached_tokens_cost_the_input_rate():
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=0, cached_tokens=400_000)
    assert cost_of(usage, Price(10.0, 40.0)) == pytest.approx(10.0)


# --- the ledger ----------------------------------------------------------------------


def test_the_ledger_totals_tokens_and_prices_each_call_at_its_own_models_rate():
    ledger = Ledger(TABLE)
    ledger.add("cheap", Usage(1_000_000, 100_000, 200_000))
    ledger.add("dear", Usage(500_000, 100_000, 0))  # after a /model switch
    ledger.add("cheap", Usage(100_000, 0, 0))
    assert (ledger.calls, ledger.prompt_tokens, ledger.completion_tokens, ledger.cached_tokens) == (
        3, 1_600_000, 200_000, 200_000)
    cheap = 0.8 * 1.0 + 0.2 * 0.5 + 0.1 * 2.0 + 0.1 * 1.0
    dear = 0.5 * 10.0 + 0.1 * 40.0
    assert ledger.cost == pytest.approx(cheap + dear)
    assert ledger.known_cost == pytest.approx(cheap + dear)


def test_the_summary_shows_tokens_cached_tokens_and_dollars():
    ledger = Ledger({"m": Price(1.0, 1.0)})
    ledger.add("m", Usage(12_345, 678, 1_000))
    assert ledger.summary() == "12,345 tokens in, 678 out (1,000 cached) · $0.0130"


def test_the_summary_leaves_out_cached_tokens_when_there_are_none():
    ledger = Ledger({"m": Price(1.0, 1.0)})
    ledger.add("m", Usage(10, 5, 0))
    assert ledger.summary() == "10 tokens in, 5 out · $0.0000"


def test_an_unknown_model_makes_the_cost_unknown_without_crashing():
    ledger = Ledger(TABLE)
    ledger.add("cheap", Usage(1_000_000, 0, 0))
    ledger.add("my-local-model", Usage(2_000, 100, 0))
    ledger.add("my-local-model", Usage(2_000, 100, 0))
    assert ledger.cost is None
    assert ledger.known_cost == pytest.approx(1.0)
    assert ledger.prompt_tokens == 1_004_000
    assert ledger.summary() == (
        "1,004,000 tokens in, 200 out · cost unknown (no price for 'my-local-model'; add it to pricing.json)")


def test_the_scripted_model_costs_nothing_and_says_it_is_a_script():
    ledger = Ledger(PRICES)
    ledger.add(SCRIPTED, Usage(2_000, 100, 0))
    assert ledger.cost == 0.0 and ledger.unknown_models == []
    assert ledger.summary() == "2,000 tokens in, 100 out · no cost: a script plays the model"
    ledger.add("gpt-4o", Usage(1_000_000, 0, 0))  # then a real model: it is priced, the script not
    assert ledger.summary() == "1,002,000 tokens in, 100 out · $2.5000"


def test_a_price_table_can_still_price_the_scripted_model():
    ledger = Ledger({SCRIPTED: Price(1.0, 2.0)})  # as chapter 10's budget prices its script
    ledger.add(SCRIPTED, Usage(1_000_000, 0, 0))
    assert ledger.cost == 1.0 and ledger.summary().endswith("· $1.0000")


def test_the_scripted_models_answer_to_the_name_the_ledger_knows():
    assert ScriptedLLM([]).model == ScriptServer([]).model == SCRIPTED


def test_a_price_from_pricing_json_makes_a_local_model_known(tmp_path):
    write(tmp_path, {"my-local-model": {"input": 0, "output": 0}})
    ledger = Ledger(load_prices(tmp_path))
    ledger.add("ollama/my-local-model", Usage(5_000, 500, 0))
    assert ledger.cost == 0.0
    assert ledger.summary().endswith("· $0.0000")


def test_an_empty_ledger_costs_nothing():
    assert Ledger(PRICES).cost == 0.0
    assert Ledger(PRICES).summary() == "0 tokens in, 0 out · $0.0000"
