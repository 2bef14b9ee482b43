"""The plan's ``prices:`` section: typed, validated with messages naming the field and the fix."""

from __future__ import annotations

import pytest

from gpupoc.common.validation import parse_model
from gpupoc.costing.prices import Prices, SharedRule, model_key
from gpupoc.exceptions import ConfigError
from gpupoc.plan import DEFAULT_PLAN, load_plan

H100 = "NVIDIA H100 80GB HBM3"


def prices(**over) -> dict:
    return {"currency": "EUR", "gpu_hour": {H100: {"per_hour": 2.5, "source": "quote 42"}}, **over}


def errors(data: dict) -> str:
    with pytest.raises(ConfigError) as info:
        parse_model(Prices, data, "prices")
    return str(info.value)


def test_a_price_is_found_by_the_node_label_spelling_of_its_model():
    p = Prices.model_validate(prices())
    assert p.gpu_price("NVIDIA-H100-80GB-HBM3").per_hour == 2.5
    assert model_key("NVIDIA-L40S") == model_key("nvidia l40s")


def test_a_model_without_a_price_is_named_not_invented():
    p = Prices.model_validate(prices())
    assert p.gpu_price("NVIDIA L40S") is None
    assert p.unpriced([H100, "NVIDIA L40S", "NVIDIA-L40S"]) == ["NVIDIA L40S", "NVIDIA-L40S"]


def test_a_currency_that_is_not_an_iso_code_names_the_field_and_the_fix():
    msg = errors(prices(currency="euro"))
    assert "currency" in msg and "ISO 4217" in msg and "euro" in msg


def test_a_negative_price_and_a_missing_source_are_refused():
    msg = errors(prices(gpu_hour={H100: {"per_hour": -1}}))
    assert "gpu_hour" in msg and "per_hour" in msg and "source" in msg


def test_one_model_priced_twice_under_two_spellings_is_refused():
    msg = errors(prices(gpu_hour={H100: {"per_hour": 1, "source": "a"},
                                  "NVIDIA-H100-80GB-HBM3": {"per_hour": 2, "source": "b"}}))
    assert "name the same GPU model" in msg


def test_an_unknown_shared_rule_is_refused():
    assert "shared.rule" in errors(prices(shared={"rule": "by-headcount"}))


def test_the_default_plan_prices_every_pool_and_says_its_figures_are_examples():
    plan = load_plan(DEFAULT_PLAN)
    assert plan.prices is not None and plan.prices.examples
    assert plan.prices.unpriced([p.gpu_model for p in plan.pools]) == []
    assert plan.prices.shared.rule is SharedRule.PROPORTIONAL
