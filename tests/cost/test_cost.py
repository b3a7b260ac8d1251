"""flower._cost: prices, the simulated prompt cache and the dollar breakdown (pure; bodies built by hand)."""

from __future__ import annotations

from typing import Any

import pytest

import flower
from flower._cost import (
    BILLING_PREFIX,
    TTL_1H,
    PromptCache,
    TokenUsage,
    blocks_of,
    estimate,
    price,
    price_for,
    simulate,
    tokens_of,
)
from flower.report._metrics import usage_of

MARK = {"type": "ephemeral"}


def use(n: int, name: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"t{n}", "name": name, "input": {}}


def result(n: int, text: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": f"t{n}", "content": text}


def body(
    turns: int,
    *,
    size: int = 4_000,
    billing: str = "cc_version=1.aaa",
    model: str = "claude-sonnet-4-6",
    changed: int | None = None,
) -> dict[str, Any]:
    """A CLI-shaped request: tools, the billing block, a marked system block, then `turns` tool rounds
    whose last block is marked (the CLI's breakpoints). `changed` rewrites one earlier result."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "Go."}]}]
    for n in range(turns):
        text = ("x" if n != changed else "y") * size
        messages += [
            {"role": "assistant", "content": [use(n, "Bash")]},
            {"role": "user", "content": [result(n, text)]},
        ]
    messages[-1]["content"][-1] = {**messages[-1]["content"][-1], "cache_control": MARK}
    return {
        "model": model,
        "tools": [{"name": "Bash", "description": "d" * 8_000}],
        "system": [
            {"type": "text", "text": f"{BILLING_PREFIX} {billing};"},
            {"type": "text", "text": "s" * 4_000, "cache_control": MARK},
        ],
        "messages": messages,
    }


def total(b: dict[str, Any]) -> int:
    return sum(block.tokens for block in blocks_of(b))


def test_blocks_follow_the_apis_order_tools_system_messages_and_carry_the_marks() -> None:
    blocks = blocks_of(body(1))
    assert [b.role for b in blocks] == ["tools", "system", "system", "user", "assistant", "user"]
    assert [b.breakpoint for b in blocks] == [None, None, 300.0, None, None, 300.0]
    assert tokens_of(5) == 2 and tokens_of(4) == 1


def test_each_turn_reads_the_previous_request_and_writes_only_what_it_adds() -> None:
    cache = PromptCache()
    first, second = cache.send(body(1), at=0.0), cache.send(body(2), at=20.0)
    assert first == TokenUsage(cache_creation=total(body(1)))
    assert second.cache_read == total(body(1)) and second.input == 0
    assert second.cache_creation == total(body(2)) - total(body(1))
    assert second.context == total(body(2))


def test_a_rewrite_far_back_reads_only_tools_and_system_a_near_one_reads_up_to_it() -> None:
    cache = PromptCache()
    for n in range(1, 13):
        cache.send(body(n, size=400), at=20.0 * n)
    head = sum(b.tokens for b in blocks_of(body(0))[:3])  # tools + system, up to the system mark
    far = cache.send(body(12, size=400, changed=0), at=300.0)  # 23 blocks before the last mark
    assert far.cache_read == head
    near = cache.send(body(12, size=400, changed=10), at=320.0)  # within the 20-block lookback
    assert near.cache_read == total(body(10, size=400))


def test_entries_expire_after_their_ttl_and_a_read_refreshes_them() -> None:
    cache = PromptCache()
    b = body(1)
    reads = [cache.send(b, at=t).cache_read for t in (0.0, 250.0, 500.0, 900.0)]
    assert reads == [0, total(b), total(b), 0]  # 500 s after the first write, 250 after a read
    hour = PromptCache(ttl=TTL_1H)
    hour.send(b, at=0.0)
    later = hour.send(b, at=900.0)
    assert later.cache_read == total(b)
    assert hour.send(body(2), at=1_000.0).cache_creation_1h > 0


def test_an_entry_is_read_only_once_the_response_that_wrote_it_has_begun() -> None:
    head = sum(b.tokens for b in blocks_of(body(0))[:3])  # tools + system: what two workers share
    one, two, three = body(1, size=4_000), body(1, size=5_000), body(1, size=6_000)
    cache = PromptCache()
    cache.send(one, at=0.0, ready_at=2.0)  # its response begins 2 s after it was sent
    together = cache.send(two, at=0.5)  # sent meanwhile: reads nothing, writes the prefix again
    assert together == TokenUsage(cache_creation=total(two))
    after = cache.send(three, at=2.5)
    assert after.cache_read == head and after.cache_creation == total(three) - head
    at_once = PromptCache()  # the default: readable as soon as it is sent
    at_once.send(one, at=0.0)
    assert at_once.send(two, at=0.5).cache_read == head


def test_a_prefix_below_the_models_minimum_is_never_cached() -> None:
    small = body(1, size=40)
    small["tools"] = []
    small["system"][1]["text"] = "s"
    assert total(small) < 1_024
    usage = simulate([(small, 0.0, 0), (small, 20.0, 0)])
    assert usage[1] == TokenUsage(input=total(small))
    haiku = body(1, size=1_000, model="claude-haiku-4-5")  # 4,096 tokens for Haiku 4.5
    assert 1_024 < total(haiku) < 4_096
    assert simulate([(haiku, 0.0, 0)])[0].input == total(haiku)
    assert price_for("claude-haiku-4-5")[0].min_cacheable == 4_096


def test_the_billing_block_splits_conversations_unless_ignored() -> None:
    one, two = body(1, billing="cc_version=1.aaa"), body(1, billing="cc_version=1.bbb", size=5_000)
    sent = simulate([(one, 0.0, 0), (two, 20.0, 0)])
    ignored = simulate([(one, 0.0, 0), (two, 20.0, 0)], billing="ignored")
    assert sent[1].cache_read == 0
    shared = sum(b.tokens for b in blocks_of(two, billing="ignored")[:2])  # tools + system
    assert ignored[1].cache_read == shared


def test_prices_turn_usage_into_dollars_for_any_usage_record() -> None:
    usage = TokenUsage(input=1_000_000, cache_read=1_000_000, cache_creation=1_000_000, output=1_000_000)
    cost = price([usage], model="claude-sonnet-4-6")
    assert (cost.input, cost.cache_read, cost.cache_write, cost.output) == pytest.approx((3, 0.3, 3.75, 15))
    assert cost.total == pytest.approx(22.05) and cost.requests == 1 and not cost.unpriced
    report = TokenUsage(input=10, cache_read=20, cache_creation=30, output=40)  # the report's own record
    assert price([report], model="claude-sonnet-4-6").output_tokens == 40
    unknown = price([usage], model="fake-model-x")
    assert unknown.unpriced == ("fake-model-x",) and unknown.input == pytest.approx(4)
    assert price_for("claude-opus-5-5")[0].cache_creation == pytest.approx(5)


def test_estimate_prices_a_run_from_its_requests_with_output() -> None:
    requests = [(body(n), 20.0 * n, 100) for n in range(1, 4)]
    cost = estimate(requests)
    usages = simulate(requests)
    assert cost == price(usages, model="claude-sonnet-4-6")
    assert cost.output_tokens == 300 and cost.requests == 3
    assert cost.cache_read_tokens == total(body(1)) + total(body(2))


def test_one_usage_record_for_the_run_the_report_and_the_cost_model() -> None:
    assert flower.TokenUsage is TokenUsage
    assert type(usage_of({"input_tokens": 3, "output_tokens": 4})) is TokenUsage
    assert type(PromptCache().send(body(1), at=0.0)) is TokenUsage
    usage = TokenUsage(input=1, cache_read=2, cache_creation=3, cache_creation_1h=4, output=5)
    assert (usage.context, usage.total) == (10, 15)
    double = TokenUsage(input=2, cache_read=4, cache_creation=6, cache_creation_1h=8, output=10)
    assert usage + usage == double
    assert usage.minus(double) == TokenUsage() and double.minus(usage) == usage


def test_a_request_whose_marks_ask_for_two_lifetimes_pays_each_segment_at_its_own() -> None:
    """The CLI's 1-hour system marks with 5-minute messages (`CLAUDE_CODE_MESSAGES_PROMPT_CACHE_TTL=5m`):
    the API bills the prefix up to the system mark at the 1-hour rate and the rest at the 5-minute one."""
    mixed = body(1)
    mixed["system"][1] = {**mixed["system"][1], "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    head = sum(b.tokens for b in blocks_of(mixed)[:3])  # tools + system, up to the 1-hour mark
    first = PromptCache().send(mixed, at=0.0)
    assert (first.cache_creation_1h, first.cache_creation) == (head, total(mixed) - head)
    cost = price([first], model="claude-sonnet-4-6")
    assert cost.cache_write == pytest.approx((head * 6.0 + (total(mixed) - head) * 3.75) / 1e6)
    cache = PromptCache()
    cache.send(mixed, at=0.0)
    later = cache.send(mixed, at=900.0)  # the 5-minute segment lapsed, the 1-hour one did not
    assert (later.cache_read, later.cache_creation, later.cache_creation_1h) == (head, total(mixed) - head, 0)


def test_the_apis_usage_splits_its_writes_by_lifetime() -> None:
    api = {
        "input_tokens": 5,
        "cache_read_input_tokens": 10,
        "cache_creation_input_tokens": 100,
        "cache_creation": {"ephemeral_5m_input_tokens": 30, "ephemeral_1h_input_tokens": 70},
        "output_tokens": 7,
    }
    assert TokenUsage.from_api(api) == TokenUsage(
        input=5, cache_read=10, cache_creation=30, cache_creation_1h=70, output=7
    )
    assert usage_of(api) == TokenUsage.from_api(api)
    assert TokenUsage.from_api({"cache_creation_input_tokens": 9}).cache_creation == 9  # no split: 5 minutes
    broken = {"cache_creation_input_tokens": 9, "cache_creation": {"ephemeral_1h_input_tokens": 50}}
    assert TokenUsage.from_api(broken) == TokenUsage(cache_creation_1h=9)  # never more than the total


def test_a_steps_one_hour_writes_are_the_main_threads_and_priced_at_the_one_hour_rate() -> None:
    from flower._usage import UsageMeter

    meter = UsageMeter()
    meter.main_model = "claude-sonnet-4-6"
    main = {"cache_creation_input_tokens": 1_000, "cache_creation": {"ephemeral_1h_input_tokens": 800}}
    models = {  # cumulative, one count of writes per model (the main thread's and the workers')
        "claude-sonnet-4-6": {"cacheCreationInputTokens": 1_500},
        "claude-haiku-4-5": {"cacheCreationInputTokens": 4_000},
    }
    meter.add_result("s1", main, models)
    used = meter.usage()
    assert used.main == TokenUsage(cache_creation=200, cache_creation_1h=800)
    assert used.by_model["claude-sonnet-4-6"] == TokenUsage(cache_creation=700, cache_creation_1h=800)
    assert used.by_model["claude-haiku-4-5"] == TokenUsage(cache_creation=4_000)
    assert used.subagents == TokenUsage(cache_creation=4_500)
    sonnet = price([used.by_model["claude-sonnet-4-6"]], model="claude-sonnet-4-6")
    assert sonnet.cache_write == pytest.approx((700 * 3.75 + 800 * 6.0) / 1e6)
