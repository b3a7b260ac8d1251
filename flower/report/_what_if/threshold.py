"""Where flower's own handoff policy fires in a replayed main thread, and what the thread then sends.

flower hands off when the main thread's context, as its last reply reported it, reaches
`HandoffPolicy.threshold(window)` (window - 33k - `reserve`: 147k on a 200k window), and turns the CLI's
auto-compact off. So a session flower runs never compacts on its own: it hands off a `reserve` below the
point where the CLI would have compacted, or later, or never, depending on its own (replayed) context, not
on where the recorded session compacted. A replay therefore walks the thread's replayed contexts
(`handed_off`) and, after the first reply at or over the threshold, puts a handoff: a request asking for the
document (the context read from the cache; the results of that reply's calls, which ran before flower's
interrupt took, and `HANDOFF_PROMPT` written; the document as output: flower's measured runs show that
request one tool result above the reply that crossed), and a successor that starts from the session's
fixed start, the takeover prompt and the document, and carries on with what each later request added.

A recorded compaction changes meaning: one the CLI made on its own (`compactMetadata.trigger` "auto", or
not recorded) does not happen under flower, which carries its context on past it (the restart request
reads what the thread held, and adds what came in since its previous reply: the tool results and prompts
between them); one the user asked for (`/compact`, "manual") is a handoff at that point, as before.

A coordinator started with `inline_until` under a `Runtime` hands its inline session off to the
coordinator after a given reply (`handed_off(switch=...)`), whatever the policy's line: the request for the
document is asked `HandoffPolicy.inline_prompt`, and the coordinator's first request writes its whole
context (its fixed prefix, not the inline session's, was never sent before); its own handoffs follow the
policy.

The document is as long as the summary the CLI wrote at the compaction the handoff comes before (else the
last one before it); a session that never compacted takes the median real summary
(`measured.SUMMARY_CHARS`). The window is `HandoffPolicy.window`, else the one the CLI reports for the
thread's model (`pricing.window_for`), or 1,000,000 where the recorded context went past it (a `[1m]` model,
which the transcript names without its suffix).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from ..._handoff.document import HANDOFF_PROMPT, TAKEOVER_PROMPT, HandoffPolicy
from ..._usage import TokenUsage
from ..._util.content import text_of, tool_results
from ...stores._rewrite import is_prompt
from .._measured import SUMMARY_CHARS
from .._pricing import window_for
from .handoff import main_model, summary_chars
from .replay import Thread
from .spill import boundaries

__all__ = ["LARGE_WINDOW", "Handed", "handed_off", "window_of"]

LARGE_WINDOW = 1_000_000
"""The window of a model run with the `[1m]` suffix (and of the newest models)."""


@dataclass(frozen=True)
class Handed:
    """A thread's requests with flower's handoffs in place."""

    used: list[TokenUsage]
    """Each request's usage (the requests listed as skipped unchanged)."""
    asks: list[TokenUsage]
    """The requests asking for a handoff document, one per handoff."""
    after: tuple[int, ...]
    """The request after whose reply each handoff fired."""


def window_of(thread: Thread, policy: HandoffPolicy) -> int:
    """The window flower's policy would use for `thread` (see the module's docstring)."""
    if policy.window is not None:
        return policy.window
    window = window_for(main_model(thread)) if thread.requests else LARGE_WINDOW
    peak = max((r.usage.context for r in thread.requests), default=0)
    return window if peak <= window else max(window, LARGE_WINDOW)


def _manual(entry: Mapping[str, object]) -> bool:
    meta = entry.get("compactMetadata")
    return isinstance(meta, Mapping) and meta.get("trigger") == "manual"


def _added(thread: Thread, before: int, number: int, rate: float) -> int:
    """Tokens of the tool results and prompts between request `before`'s reply and request `number`: what
    request `number` adds to its thread's context when no compaction lies between them."""
    start, end = thread.requests[before].entry + 1, thread.requests[number].entry
    chars = 0
    for entry in thread.entries[start:end]:
        chars += sum(len(text_of(b.get("content"))) for b in tool_results(entry))
        if is_prompt(dict(entry)):
            message = entry.get("message")
            chars += len(text_of(message.get("content") if isinstance(message, Mapping) else ""))
    return round(chars * rate)


def _rebuilt(usage: TokenUsage, read: int, written: int) -> TokenUsage:
    """`usage`'s reply with a context of `read` tokens read from the cache and `written` written (5-minute
    and 1-hour in its recorded proportion)."""
    writes = usage.cache_creation + usage.cache_creation_1h
    five = round(written * usage.cache_creation / writes) if writes else written
    return TokenUsage(
        cache_read=max(0, read),
        cache_creation=max(0, five),
        cache_creation_1h=max(0, written - five),
        output=usage.output,
    )


def _moved(usage: TokenUsage, fixed: int, by: int) -> TokenUsage:
    """`usage` with `by` tokens more context (negative: fewer), lying in the history after the fixed start:
    they come off (or onto) its cache reads where it read past the fixed start, else its writes."""
    if by < 0:
        read = min(-by, max(0, usage.cache_read - fixed))
        rest = -by - read
        writes = usage.cache_creation + usage.cache_creation_1h
        taken = min(rest, writes)
        five = round(taken * usage.cache_creation / writes) if writes else 0
        return TokenUsage(
            input=max(0, usage.input - (rest - taken)),
            cache_read=usage.cache_read - read,
            cache_creation=usage.cache_creation - five,
            cache_creation_1h=usage.cache_creation_1h - (taken - five),
            output=usage.output,
        )
    if usage.cache_read > fixed:
        return TokenUsage(
            input=usage.input,
            cache_read=usage.cache_read + by,
            cache_creation=usage.cache_creation,
            cache_creation_1h=usage.cache_creation_1h,
            output=usage.output,
        )
    return _rebuilt(usage, usage.cache_read, usage.cache_creation + usage.cache_creation_1h + by)


def _fixed(used: Sequence[TokenUsage], restarts: Sequence[int]) -> int:
    """The session's fixed start, in tokens: its first request's context, or, for a session that began with
    a history (its first request larger than a restart), the smallest restart's cached prefix."""
    first = used[0].context
    smaller = [used[n].cache_read for n in restarts if n < len(used) and used[n].context < first]
    return min(smaller) if smaller and min(smaller) > 0 else first


def handed_off(
    thread: Thread,
    used: Sequence[TokenUsage],
    rate: float,
    policy: HandoffPolicy,
    skip: Collection[int] = (),
    switch: int | None = None,
    shift: int = 0,
) -> Handed:
    """`thread`'s requests at `used` (replayed), with flower's handoffs where its policy would fire and the
    CLI's own compactions taken out (see the module's docstring). Requests in `skip` are not the thread's
    own (a coordinator's requests moved into workers): left as they are, never checked.

    `switch`: the request after whose reply a coordinator's inline session hands off to the coordinator
    (`inline_until`), whatever its size, asked `policy.inline_prompt`; that successor's fixed start is
    `shift` tokens longer (negative: shorter) than the session's, the coordinator's own prefix, which no
    request before it wrote: its first request writes its whole context. `used` carries the inline
    session's prefix up to `switch` and the coordinator's after it. The policy's own handoffs go on
    before and after it."""
    out = list(used)
    if not policy.enabled or not used:
        return Handed(out, [], ())
    threshold = policy.threshold(window_of(thread, policy))
    cuts = boundaries(thread.entries)
    fixed = _fixed(used, [thread.first_after(cut) for cut in cuts])
    framed, asked = round(len(TAKEOVER_PROMPT) * rate), round(len(HANDOFF_PROMPT) * rate)
    inline_asked = round(len(policy.inline_prompt) * rate)

    def document(cut: int | None) -> int:  # as long as the summary at `cut`, else the real median
        chars = summary_chars(thread.entries, cut) if cut is not None else 0
        return round((chars or SUMMARY_CHARS) * rate)

    def document_after(number: int) -> int:  # the summary of the compaction ahead, else the last one
        entry = thread.requests[number].entry
        ahead = [c for c in cuts if c > entry] or [c for c in cuts if c < entry][-1:]
        return document(ahead[0] if ahead else None)

    asks: list[TokenUsage] = []
    after: list[int] = []
    previous: int | None = None
    context = 0  # the thread's context under flower at `previous`
    for number in (n for n in range(len(used)) if n not in skip):
        usage = used[number]
        if previous is None:
            previous, context = number, usage.context
            continue
        end = context + out[previous].output  # what the next request reads, under flower
        # a compaction between the two (one inside a stretch moved into a worker included)
        since = thread.requests[previous].entry
        cut = next((c for c in reversed(cuts) if since < c < thread.requests[number].entry), None)
        if cut is not None:
            grown = _added(thread, number - 1, number, rate)
        else:
            grown = usage.context - used[previous].context - used[previous].output
        doc = document_after(previous) if context >= threshold else None
        if previous == switch:  # the inline session hands off to the coordinator, its calls run as below
            doc = document_after(previous)
            grown -= shift  # `used` carries the coordinator's prefix from `number` on
            asks.append(TokenUsage(cache_read=end, cache_creation=inline_asked + max(grown, 0), output=doc))
            after.append(previous)
            fixed = max(0, fixed + shift)
            context = fixed + framed + doc
            out[number] = _rebuilt(usage, 0, context)
        elif doc is not None and fixed + framed + doc < context:  # flower's handoff, after `previous`'s reply
            # its calls ran before the interrupt took: their results are in the request for the document
            asks.append(TokenUsage(cache_read=end, cache_creation=asked + max(grown, 0), output=doc))
            after.append(previous)
            context = fixed + framed + doc
            out[number] = _rebuilt(usage, min(fixed, context), context - min(fixed, context))
        elif cut is not None and _manual(thread.entries[cut]):  # the user's /compact: a handoff
            doc = document(cut)
            successor = fixed + framed + doc
            asks.append(TokenUsage(cache_read=end, cache_creation=asked, output=doc))
            after.append(previous)
            context = min(usage.context, successor)
            read = min(usage.cache_read, context)
            out[number] = _rebuilt(usage, read, context - read)
        elif cut is not None:  # the CLI compacted on its own: flower carries its context on
            context = end + max(grown, 0)
            out[number] = _rebuilt(usage, end, context - end)
        else:
            context = end + grown
            out[number] = _moved(usage, fixed, context - usage.context)
        previous = number
    return Handed(out, asks, tuple(after))
