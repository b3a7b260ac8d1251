"""flower._cost, rule by rule: each price, each field of a breakdown, each boundary of the simulated cache.

Built from blocks of exact token counts (`send_blocks`) where a boundary is at stake, so that every
expected number is written out by hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from flower._cost import (
    BILLING_PREFIX,
    DEFAULT_MODEL,
    LOOKBACK,
    PRICES,
    TTL_1H,
    TTL_5M,
    Block,
    CostBreakdown,
    Price,
    PromptCache,
    TokenUsage,
    blocks_of,
    estimate,
    price,
    price_for,
    simulate,
    tokens_of,
    without_marks,
)

SONNET = "claude-sonnet-4-6"  # min_cacheable 1,024
HAIKU = "claude-haiku-4-5"  # min_cacheable 4,096


def chain(*tokens: int, marks: dict[int, float] | None = None, salt: str = "") -> list[Block]:
    """Blocks of these token counts; `marks` puts a cache mark (its TTL) on the blocks at those indexes."""
    marks = marks or {}
    return [Block(hash((salt, i, t)), t, marks.get(i), "user", i) for i, t in enumerate(tokens)]


# prices and breakdowns


def test_each_kind_of_usage_is_priced_at_its_own_rate() -> None:
    sonnet = price_for(SONNET)[0]
    assert (sonnet.input, sonnet.output, sonnet.cache_read) == pytest.approx((3.0, 15.0, 0.3))
    assert (sonnet.cache_creation, sonnet.cache_creation_1h) == pytest.approx((3.75, 6.0))
    assert (sonnet.min_cacheable, sonnet.measured) == (1_024, True)
    assert sonnet.cost(
        input=1, output=10, cache_read=100, cache_creation=1_000, cache_creation_1h=10_000
    ) == (pytest.approx((3.0 + 150.0 + 30.0 + 3_750.0 + 60_000.0) / 1e6, rel=1e-12))
    assert sonnet.cost(input=0, output=0, cache_read=0, cache_creation=1_000_000) == pytest.approx(3.75)
    opus = PRICES["claude-opus-5"]
    assert (opus.input, opus.output, opus.cache_read, opus.cache_creation, opus.cache_creation_1h) == (
        pytest.approx((4.0, 20.0, 0.2, 5.0, 8.0))
    )
    assert (opus.min_cacheable, opus.measured, PRICES["claude-opus-4-8"].measured) == (512, True, False)
    haiku = price_for(HAIKU)[0]
    assert (haiku.input, haiku.cache_read, haiku.min_cacheable) == (
        pytest.approx(1.0),
        pytest.approx(0.1),
        4_096,
    )


def test_a_model_name_is_matched_by_its_longest_known_prefix_whatever_its_case_and_suffix() -> None:
    assert price_for("claude-opus-4-8-20260101") == (PRICES["claude-opus-4-8"], True)
    assert price_for("claude-opus-4-1") == (PRICES["claude-opus-4"], True)  # Opus 4.1: Opus 4's row
    assert price_for("  Claude-Sonnet-4-6[1m]") == (PRICES[SONNET], True)
    assert price_for("claude-sonnet-4-6 [1m]")[1] is True
    assert price_for("[claude-sonnet-4-6]") == (PRICES["claude-opus-5"], False)  # what precedes [ is the name
    assert price_for("gpt-5") == (PRICES["claude-opus-5"], False)
    assert DEFAULT_MODEL.startswith("claude-opus-5")


@dataclass(frozen=True)
class Record:
    """A usage record of the caller's own, without `cache_creation_1h`."""

    input: int
    cache_read: int
    cache_creation: int
    output: int


def test_price_adds_every_record_and_every_field() -> None:
    records = [
        TokenUsage(input=1, cache_read=20, cache_creation=300, cache_creation_1h=4_000, output=50_000),
        Record(input=600_000, cache_read=7_000_000, cache_creation=80, output=9),
    ]
    cost = price(records, model=SONNET)
    assert cost.requests == 2 and cost.unpriced == ()
    assert (cost.input_tokens, cost.cache_read_tokens, cost.cache_write_tokens, cost.output_tokens) == (
        600_001,
        7_000_020,
        4_380,
        50_009,
    )
    assert cost.input == pytest.approx(600_001 * 3.0 / 1e6)
    assert cost.cache_read == pytest.approx(7_000_020 * 0.3 / 1e6)
    assert cost.cache_write == pytest.approx((380 * 3.75 + 4_000 * 6.0) / 1e6)
    assert cost.output == pytest.approx(50_009 * 15.0 / 1e6)
    assert cost.total == pytest.approx(cost.input + cost.cache_read + cost.cache_write + cost.output)
    assert cost.input_total == pytest.approx(cost.input + cost.cache_read + cost.cache_write)
    assert price([], model=SONNET) == CostBreakdown()
    assert price([], model="mystery") == CostBreakdown(unpriced=("mystery",))


def test_breakdowns_add_field_by_field_and_name_each_unknown_model_once() -> None:
    a = CostBreakdown(
        requests=1,
        input_tokens=2,
        cache_read_tokens=3,
        cache_write_tokens=4,
        output_tokens=5,
        input=0.5,
        cache_read=0.25,
        cache_write=0.125,
        output=1.0,
        unpriced=("x", "y"),
    )
    b = CostBreakdown(
        requests=10,
        input_tokens=20,
        cache_read_tokens=30,
        cache_write_tokens=40,
        output_tokens=50,
        input=5.0,
        cache_read=2.5,
        cache_write=1.25,
        output=10.0,
        unpriced=("y", "z"),
    )
    assert a + b == CostBreakdown(
        requests=11,
        input_tokens=22,
        cache_read_tokens=33,
        cache_write_tokens=44,
        output_tokens=55,
        input=5.5,
        cache_read=2.75,
        cache_write=1.375,
        output=11.0,
        unpriced=("x", "y", "z"),
    )
    assert (b + a).unpriced == ("y", "z", "x")


def test_estimate_applies_its_model_lifetime_and_billing_to_every_request() -> None:
    body = {
        "model": SONNET,
        "system": [
            {"type": "text", "text": f"{BILLING_PREFIX} cc_version=1"},
            {"type": "text", "text": "s" * 8_000, "cache_control": {"type": "ephemeral"}},
        ],
        "messages": [{"role": "user", "content": "hi"}],
    }
    other = {
        **body,
        "system": [{"type": "text", "text": f"{BILLING_PREFIX} cc_version=2"}, body["system"][1]],
    }
    run = [(body, 0.0, 7), (other, 400.0, 8)]
    as_sent = estimate(run)
    assert as_sent == price(simulate(run), model=SONNET) and as_sent.output_tokens == 15
    ignored = estimate(run, billing="ignored", ttl=TTL_1H)
    assert ignored == price(simulate(run, billing="ignored", ttl=TTL_1H), model=SONNET)
    assert ignored.cache_read_tokens == tokens_of(len('{"text": "' + "s" * 8_000 + '", "type": "text"}'))
    assert as_sent.cache_read_tokens == 0  # the second conversation's billing block differs
    assert ignored.cache_write == pytest.approx(ignored.cache_write_tokens * 6.0 / 1e6)  # all 1-hour
    on_haiku = estimate(run, model=HAIKU)
    assert on_haiku.cache_write_tokens == 0 and on_haiku == price(simulate(run, model=HAIKU), model=HAIKU)
    unknown = estimate([({**body, "model": "mystery"}, 0.0, 0)])
    assert unknown.unpriced == ("mystery",)


# the blocks of a request


def test_a_block_is_keyed_by_its_content_and_role_without_its_mark() -> None:
    assert without_marks({"a": [{"cache_control": 1, "b": {"cache_control": 2, "c": 3}}], "d": "e"}) == {
        "a": [{"b": {"c": 3}}],
        "d": "e",
    }
    one = {"role": "user", "content": [{"type": "text", "text": "é" * 40, "cache_control": {"type": "x"}}]}
    two = {"role": "user", "content": [{"text": "é" * 40, "type": "text"}]}  # same content, other key order
    (first,) = blocks_of({"messages": [one]})
    (second,) = blocks_of({"messages": [two]})
    assert first.key == second.key and first.tokens == second.tokens == tokens_of(
        len('{"text": "", "type": "text"}') + 40
    )
    assert (first.breakpoint, second.breakpoint) == (TTL_5M, None)
    as_system = blocks_of({"system": [{"text": "é" * 40, "type": "text"}]})[0]
    assert as_system.key != second.key and (as_system.role, as_system.message) == ("system", -1)
    hour = blocks_of({"tools": [{"name": "t", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]})[0]
    assert (hour.breakpoint, hour.role) == (TTL_1H, "tools")
    odd = blocks_of({"tools": [{"name": "t", "cache_control": "ephemeral"}]})[0]
    assert odd.breakpoint is None


def test_blocks_of_reads_every_shape_a_body_takes() -> None:
    body: dict[str, Any] = {
        "tools": [{"name": "a"}, "not a tool", {"name": "b"}],
        "system": "You are terse.",
        "messages": [
            {"role": "user", "content": "hello"},
            "not a message",
            {"role": "assistant", "content": [{"type": "text", "text": "hi"}, "not a block"]},
            {"role": "user", "content": None},
            {"role": "user", "content": [{"type": "text", "text": "bye"}]},
        ],
    }
    blocks = blocks_of(body)
    assert [(b.role, b.message) for b in blocks] == [
        ("tools", -1),
        ("tools", -1),
        ("system", -1),
        ("user", 0),
        ("assistant", 2),
        ("user", 4),
    ]
    text = '{"text": "You are terse.", "type": "text"}'
    assert blocks[2].tokens == tokens_of(len(text))
    assert blocks_of({}) == [] and blocks_of({"system": None, "messages": None, "tools": None}) == []
    billed = {"system": [{"type": "text", "text": f"{BILLING_PREFIX} x"}, {"type": "text", "text": "kept"}]}
    assert len(blocks_of(billed)) == 2 and len(blocks_of(billed, billing="ignored")) == 1
    assert blocks_of(billed, billing="ignored")[0].key == blocks_of(billed)[1].key
    late = {"system": [{"type": "text", "text": f"see {BILLING_PREFIX}"}]}  # only a block that starts so
    assert len(blocks_of(late, billing="ignored")) == 1
    assert [tokens_of(n) for n in (0, 1, 4, 5, 8, 9)] == [0, 1, 1, 2, 2, 3]


# the simulated cache, on blocks of exact sizes


def test_a_prefix_of_exactly_the_minimum_is_cached_one_token_less_is_not() -> None:
    cache = PromptCache()
    assert cache.send_blocks(chain(1_000, 24, marks={1: TTL_5M}), at=0.0, model=SONNET) == TokenUsage(
        cache_creation=1_024
    )
    assert cache.send_blocks(chain(1_000, 24, 6, marks={1: TTL_5M}), at=1.0, model=SONNET, output=3) == (
        TokenUsage(cache_read=1_024, input=6, output=3)
    )
    small = PromptCache()
    assert small.send_blocks(chain(1_000, 23, marks={1: TTL_5M}), at=0.0, model=SONNET) == TokenUsage(
        input=1_023
    )
    assert small.send_blocks(chain(1_000, 23, marks={1: TTL_5M}), at=1.0, model=SONNET) == TokenUsage(
        input=1_023
    )


def test_an_entry_is_alive_up_to_its_expiry_inclusive_and_a_read_extends_it_by_its_own_lifetime() -> None:
    blocks = chain(2_000, marks={0: TTL_5M})
    cache = PromptCache()
    cache.send_blocks(blocks, at=0.0, model=SONNET)
    assert cache.send_blocks(blocks, at=300.0, model=SONNET).cache_read == 2_000  # expiry 300: still alive
    assert cache.send_blocks(blocks, at=600.0, model=SONNET).cache_read == 2_000  # the read renewed it
    assert cache.send_blocks(blocks, at=900.5, model=SONNET).cache_read == 0
    hour = PromptCache()
    marked = chain(2_000, marks={0: TTL_1H})
    assert hour.send_blocks(marked, at=0.0, model=SONNET) == TokenUsage(cache_creation_1h=2_000)
    assert hour.send_blocks(marked, at=3_600.0, model=SONNET).cache_read == 2_000
    assert hour.send_blocks(chain(2_000), at=3_601.0, model=SONNET).input == 2_000  # no mark: no read


def test_a_read_renews_an_entry_by_the_lifetime_it_was_written_with() -> None:
    cache = PromptCache()
    cache.send_blocks(chain(2_000, marks={0: TTL_1H}), at=0.0, model=SONNET)
    # read through a 5-minute mark: the entry keeps its hour
    assert (
        cache.send_blocks(chain(2_000, 10, marks={1: TTL_5M}), at=3_000.0, model=SONNET).cache_read == 2_000
    )
    assert (
        cache.send_blocks(chain(2_000, 20, marks={1: TTL_5M}), at=6_500.0, model=SONNET).cache_read == 2_000
    )


def test_rewriting_an_entry_with_a_shorter_lifetime_never_shortens_it() -> None:
    cache = PromptCache()
    cache.send_blocks(chain(2_000, marks={0: TTL_1H}), at=0.0, model=SONNET)
    cache.send_blocks(chain(2_000, marks={0: TTL_5M}), at=10.0, model=SONNET)
    assert cache.send_blocks(chain(2_000, marks={0: TTL_5M}), at=1_000.0, model=SONNET).cache_read == 2_000


def test_the_lookback_reaches_exactly_its_number_of_blocks_back() -> None:
    head = [3_000] + [1] * (LOOKBACK + 5)
    for back, found in ((LOOKBACK - 1, True), (LOOKBACK, False)):
        cache = PromptCache()
        cache.send_blocks(chain(*head[:1], marks={0: TTL_5M}), at=0.0, model=SONNET)
        later = chain(*head[: back + 1], marks={back: TTL_5M})  # the mark `back` blocks after the entry
        usage = cache.send_blocks(later, at=1.0, model=SONNET)
        assert usage.cache_read == (3_000 if found else 0), back
    narrow = PromptCache(lookback=2)
    narrow.send_blocks(chain(3_000, marks={0: TTL_5M}), at=0.0, model=SONNET)
    assert narrow.send_blocks(chain(3_000, 1, marks={1: TTL_5M}), at=1.0, model=SONNET).cache_read == 3_000
    farther = PromptCache(lookback=2)
    farther.send_blocks(chain(3_000, marks={0: TTL_5M}), at=0.0, model=SONNET)
    assert farther.send_blocks(chain(3_000, 1, 1, marks={2: TTL_5M}), at=1.0, model=SONNET).cache_read == 0


def test_the_longest_live_prefix_of_any_mark_is_read_and_the_rest_written_once() -> None:
    cache = PromptCache()
    cache.send_blocks(chain(1_500, 500, marks={0: TTL_5M, 1: TTL_5M}), at=0.0, model=SONNET)
    # marks at 0, 1 and 3: each reads what it can; the longest read (2,000) wins
    usage = cache.send_blocks(
        chain(1_500, 500, 70, 30, 9, marks={0: TTL_5M, 1: TTL_5M, 3: TTL_5M}), at=1.0, model=SONNET
    )
    assert usage == TokenUsage(cache_read=2_000, cache_creation=100, input=9)
    # nearest first: the mark at 3 finds 2,100 alive (written just now) before looking further back
    again = cache.send_blocks(chain(1_500, 500, 70, 30, marks={3: TTL_5M}), at=2.0, model=SONNET)
    assert again == TokenUsage(cache_read=2_100)


def test_each_segment_is_written_at_its_own_marks_lifetime() -> None:
    cache = PromptCache()
    usage = cache.send_blocks(
        chain(1_100, 200, 300, 5, marks={0: TTL_1H, 1: TTL_5M, 2: TTL_1H}), at=0.0, model=SONNET
    )
    assert usage == TokenUsage(cache_creation_1h=1_100 + 300, cache_creation=200, input=5)
    forced = PromptCache(ttl=TTL_5M)
    again = forced.send_blocks(
        chain(1_100, 200, 300, 5, marks={0: TTL_1H, 1: TTL_5M, 2: TTL_1H}), at=0.0, model=SONNET
    )
    assert again == TokenUsage(cache_creation=1_600, input=5)
    assert forced.send_blocks(chain(1_100, marks={0: TTL_1H}), at=400.0, model=SONNET) == TokenUsage(
        cache_creation=1_100
    )  # the override's 5 minutes, not the mark's hour


def test_a_mark_below_a_read_writes_nothing_more() -> None:
    cache = PromptCache()
    cache.send_blocks(chain(1_100, 400, marks={1: TTL_5M}), at=0.0, model=SONNET)
    usage = cache.send_blocks(chain(1_100, 400, 8, marks={0: TTL_5M, 1: TTL_5M}), at=1.0, model=SONNET)
    assert usage == TokenUsage(cache_read=1_500, input=8)


def test_the_model_is_part_of_the_key_and_sets_the_minimum() -> None:
    body = {
        "model": SONNET,
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "x" * 8_000, "cache_control": {"type": "ephemeral"}}],
            }
        ],
    }
    size = blocks_of(body)[0].tokens
    assert 1_024 < size < 4_096
    cache = PromptCache()
    assert cache.send(body, at=0.0).cache_creation == size
    assert cache.send({**body, "model": "claude-sonnet-4-5"}, at=1.0).cache_read == 0  # another model's entry
    assert cache.send(body, at=2.0, output=4) == TokenUsage(cache_read=size, output=4)
    assert PromptCache(model=HAIKU).send(body, at=0.0) == TokenUsage(input=size)  # the override's minimum
    one = PromptCache(model=SONNET)
    one.send({**body, "model": HAIKU}, at=0.0)
    assert (
        one.send({**body, "model": "claude-opus-4-8"}, at=1.0).cache_read == size
    )  # one key: the override's
    assert simulate([(body, 0.0, 1), (body, 1.0, 2)], model=HAIKU) == [
        TokenUsage(input=size, output=1),
        TokenUsage(input=size, output=2),
    ]


def test_a_cache_starts_empty_with_the_documented_defaults() -> None:
    cache = PromptCache()
    assert (cache.model, cache.ttl, cache.billing, cache.lookback) == (None, None, "as_sent", LOOKBACK)
    assert LOOKBACK == 20 and (TTL_5M, TTL_1H) == (300.0, 3_600.0)
    assert PRICES["claude-opus-4-7"] == Price(
        input=5.0,
        output=25.0,
        cache_read=0.5,
        cache_creation=6.25,
        cache_creation_1h=10.0,
        min_cacheable=2_048,
        measured=True,
    )


def test_dollars_are_exact_per_million_tokens() -> None:
    million = TokenUsage(
        input=1_000_000,
        cache_read=1_000_000,
        cache_creation=1_000_000,
        cache_creation_1h=1_000_000,
        output=1_000_000,
    )
    cost = price([million], model=SONNET)
    exact = pytest.approx  # to 12 digits: a divisor off by one part in a million shows
    assert cost.input == exact(3.0, rel=1e-12) and cost.output == exact(15.0, rel=1e-12)
    assert cost.cache_read == exact(0.3, rel=1e-12) and cost.cache_write == exact(9.75, rel=1e-12)
    assert estimate([({"messages": [{"role": "user", "content": "hi"}]}, 0.0, 1)]).unpriced == ("",)


def test_a_string_is_the_same_block_as_the_text_block_it_stands_for() -> None:
    as_string = blocks_of({"system": "Be terse.", "messages": [{"role": "user", "content": "hello"}]})
    as_blocks = blocks_of(
        {
            "system": [{"type": "text", "text": "Be terse."}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}]}],
        }
    )
    assert as_string == as_blocks
    (plain,) = blocks_of({"system": ["a bare string in the system list"]})
    assert (plain.role, plain.breakpoint, plain.tokens) == ("system", None, tokens_of(34))


def test_the_lookback_never_wraps_around_to_the_end_of_the_request() -> None:
    cache = PromptCache()
    cache.send_blocks(chain(1_000, 100, marks={1: TTL_5M}), at=0.0, model=SONNET)  # only 1,100 is written
    # now marked at its first block (1,000: below the minimum), the whole prefix unmarked
    assert cache.send_blocks(chain(1_000, 100, marks={0: TTL_5M}), at=1.0, model=SONNET) == TokenUsage(
        input=1_100
    )


def test_an_entry_lives_exactly_its_lifetime_however_short() -> None:
    cache = PromptCache(ttl=0.5)
    cache.send_blocks(chain(2_000, marks={0: TTL_5M}), at=0.0, model=SONNET)
    assert cache.send_blocks(chain(2_000, marks={0: TTL_5M}), at=0.8, model=SONNET).cache_read == 0


def test_a_later_shorter_write_keeps_the_entrys_expiry() -> None:
    cache = PromptCache()
    cache.send_blocks(chain(2_000, marks={0: TTL_1H}), at=100.0, model=SONNET)  # alive until 3,700
    cache.send_blocks(chain(2_000, marks={0: TTL_5M}), at=110.0, model=SONNET)
    assert cache.send_blocks(chain(2_000, 5), at=3_650.0, model=SONNET).input == 2_005  # no mark: no read
    assert cache.send_blocks(chain(2_000, marks={0: TTL_5M}), at=3_650.0, model=SONNET).cache_read == 2_000


def test_requests_sent_together_each_write_what_they_share() -> None:
    """An entry is readable once the response that wrote it has begun (`ready_at`), and stays readable
    from then on when another request writes it again."""
    cache = PromptCache()
    blocks = chain(2_000, 10, marks={0: TTL_5M})
    assert cache.send_blocks(blocks, at=0.0, model=SONNET, ready_at=2.0) == TokenUsage(
        cache_creation=2_000, input=10
    )
    # sent at 1.0, before the first response began: it cannot read the entry, so it writes it too
    assert cache.send_blocks(blocks, at=1.0, model=SONNET, ready_at=5.0).cache_creation == 2_000
    assert cache.send_blocks(blocks, at=2.0, model=SONNET).cache_read == 2_000  # the first writer's time
    assert cache.send_blocks(blocks, at=2.5, model=SONNET, ready_at=1.0).cache_read == 2_000
    late = PromptCache()
    late.send_blocks(blocks, at=0.0, model=SONNET, ready_at=0.5)
    late.send_blocks(blocks, at=400.0, model=SONNET, ready_at=900.0)  # the entry had expired: written anew
    assert late.send_blocks(blocks, at=500.0, model=SONNET).cache_read == 0  # readable from 900 only
    edge = PromptCache()
    edge.send_blocks(blocks, at=0.0, model=SONNET)  # alive until 300 inclusive
    assert edge.send_blocks(blocks, at=300.0, model=SONNET, ready_at=350.0).cache_read == 2_000
    assert edge.send_blocks(blocks, at=320.0, model=SONNET).cache_read == 2_000  # still the first writer's
    body = {
        "model": SONNET,
        "system": [{"type": "text", "text": "s" * 8_000, "cache_control": {"type": "x"}}],
    }
    together = PromptCache()
    assert together.send(body, at=0.0, ready_at=1.0).cache_creation > 0
    assert together.send(body, at=0.5).cache_read == 0 and together.send(body, at=1.0).cache_read > 0


def test_an_entry_rewritten_at_its_expiry_keeps_its_first_writers_time() -> None:
    cache = PromptCache()
    both = chain(1_100, 500, marks={0: TTL_5M, 1: TTL_1H})
    cache.send_blocks(both, at=0.0, model=SONNET)  # the head lives until 300, the whole until 3,600
    # at 300 the head's entry is still alive (inclusive): written again, it stays readable from 0
    assert cache.send_blocks(both, at=300.0, model=SONNET, ready_at=350.0).cache_read == 1_600
    assert cache.send_blocks(chain(1_100, marks={0: TTL_5M}), at=320.0, model=SONNET).cache_read == 1_100
