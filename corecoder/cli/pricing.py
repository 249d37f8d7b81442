"""What the tokens cost, and a ledger that never crashes over a model it can't price.

Prices are USD per million tokens. A model missing from the table is normal (a local
model, a new release, a custom name on a compatible server), so the ledger keeps
counting tokens and says the cost is unknown instead of raising. Users add or correct
prices in `~/.corecoder/pricing.json` without touching the code.

The built-in table is data too, `prices.json` beside this file, read and checked by the
same code as the user's file. It holds published list prices as of 2026-11, from the
providers' pricing pages. Where a price depends on prompt length, it is the short-prompt
tier; DeepSeek's is the weekday peak rate (off-peak is half), so its costs are an upper
bound (deepseek-v4-flash is the legacy name, billed as deepseek-flash); Anthropic's
models are listed by their OpenRouter names (OpenRouter passes the price through). A
model whose price could not be confirmed is left out: it reports "cost unknown", never
a guess.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from math import inf
from pathlib import Path
from types import MappingProxyType

from ..messages import Usage
from .config import ConfigError

BUILT_IN = Path(__file__).with_name("prices.json")
# The model a script plays (ScriptedLLM's name, and the loopback server's, corecoder.testing): no
# one bills it, so it costs nothing unless a price table says otherwise.
SCRIPTED = "scripted"  # a script plays the model: nothing to pay, nothing to price


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cached_input: float | None = None  # None: cached tokens cost the full input price


_FIELDS = tuple(f.name for f in fields(Price))


def load_prices(home: Path) -> Mapping[str, Price]:
    """The built-in table with `home/pricing.json` laid over it, entry by entry:
    {"my-model": {"input": 0.5, "output": 1.5, "cached_input": 0.05}}."""
    user = Path(home) / "pricing.json"
    return MappingProxyType({**read_prices(BUILT_IN),
                             **(read_prices(user) if user.exists() else {})})


def read_prices(path: Path) -> dict[str, Price]:
    """One price file, every entry checked; ConfigError names the file and the entry."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read {path}: {e}") from e
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path} is not valid JSON: {e.msg} at line {e.lineno}, "
                          f"column {e.colno}") from e
    except RecursionError:
        raise ConfigError(f"{path} is nested too deeply to read") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must be a JSON object mapping model names to prices")
    return {model: _price(path, model, entry) for model, entry in data.items()}


def _price(path: Path, model: str, entry: object) -> Price:
    where = f"{path}: price for {model!r}"
    if not isinstance(entry, dict):
        raise ConfigError(f'{where} must be an object like {{"input": 0.5, "output": 1.5}}')
    unknown = sorted(set(entry) - set(_FIELDS))
    if unknown:
        raise ConfigError(f"{where} has unknown field {unknown[0]!r}; "
                          f"fields are {', '.join(_FIELDS)}")
    for name in ("input", "output"):
        if name not in entry:
            raise ConfigError(f"{where} is missing {name!r} (USD per million tokens)")
    for name, value in entry.items():
        if name == "cached_input" and value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < inf:
            raise ConfigError(f"{where}: {name!r} must be a finite, non-negative number, "
                              f"got {value!r}")
    return Price(**entry)


def price_for(model: str, prices: Mapping[str, Price]) -> Price | None:
    """The price of `model`, or None. Tries the exact name, then the name without each
    provider prefix ("openrouter/openai/gpt-4o" -> "openai/gpt-4o" -> "gpt-4o"), then
    the longest known name it extends ("gpt-4o-2024-08-06" -> "gpt-4o")."""
    names = [model]
    while "/" in names[-1]:
        names.append(names[-1].split("/", 1)[1])
    for name in names:
        if name in prices:
            return prices[name]
    for name in names:
        if key := _longest_prefix(name, prices):
            return prices[key]
    return None


def _longest_prefix(name: str, prices: Mapping[str, Price]) -> str | None:
    # The next character must be a separator such as "-" or ":", so "gpt-5" prices
    # "gpt-5-2025-08-07" but not "gpt-5.5", and "o3" does not price "o30".
    keys = [k for k in prices
            if name.startswith(k) and len(name) > len(k) and not _word_char(name[len(k)])]
    return max(keys, key=len, default=None)


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "."


def cost_of(usage: Usage, price: Price) -> float:
    """USD for one call. Cached tokens are part of prompt_tokens, at the cached rate."""
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    cached_rate = price.input if price.cached_input is None else price.cached_input
    fresh = usage.prompt_tokens - cached
    return (fresh * price.input + cached * cached_rate
            + usage.completion_tokens * price.output) / 1_000_000


class Ledger:
    """Usage and cost across calls; each call priced at its own model's rate."""

    def __init__(self, prices: Mapping[str, Price]):
        self.prices = prices
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cached_tokens = 0
        self.known_cost = 0.0  # the calls we could price
        self.unknown_models: list[str] = []  # models we could not, in first-seen order
        self.scripted_calls = 0  # calls a script answered, at no price: they cost nothing

    def add(self, model: str, usage: Usage) -> None:
        self.calls += 1
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.cached_tokens += usage.cached_tokens
        price = price_for(model, self.prices)
        if price is not None:
            self.known_cost += cost_of(usage, price)
        elif model == SCRIPTED:
            self.scripted_calls += 1
        elif model not in self.unknown_models:
            self.unknown_models.append(model)

    @property
    def cost(self) -> float | None:
        """Total USD, or None if any call's model has no price (see `known_cost`); the scripted
        model, with none, costs nothing."""
        return None if self.unknown_models else self.known_cost

    def summary(self) -> str:
        tokens = f"{self.prompt_tokens:,} tokens in, {self.completion_tokens:,} out"
        if self.cached_tokens:
            tokens += f" ({self.cached_tokens:,} cached)"
        if self.cost is not None and self.calls and self.scripted_calls == self.calls:
            return f"{tokens} · no cost: a script plays the model"
        if self.cost is not None:
            return f"{tokens} · ${self.cost:.4f}"
        missing = ", ".join(repr(m) for m in self.unknown_models)
        return f"{tokens} · cost unknown (no price for {missing}; add it to pricing.json)"
