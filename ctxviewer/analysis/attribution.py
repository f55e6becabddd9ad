"""Exact attribution from the API's own numbers.

Between two consecutive calls of one conversation, the prompt grows by exactly
what was added: the assistant turn, tool results, reminders. The API's counts
make that growth exact (``delta``); the added items get their share of it by
their estimate, with the estimator's ratio to the API calibrated on this
session's own clean steps, per model. So each request's prompt splits into:

- ``attributed_exact``: the growth since the start of the chain that the added
  items explain (their calibrated estimate, summed over the chain, is within
  ``TOLERANCE`` of it), counting remainders that have a cause named on
  evidence in their step, in this order:
  the previous response's own output count beyond the estimate of what the
  transcript keeps of it (thinking, named so where a thinking block is there,
  and the calls' framing: Claude Code 2.1 sub-agent transcripts leave Opus
  4.7's thinking out altogether; never more than that count);
  a ToolSearch result (``tool_reference`` blocks: the API expands each into
  the tool's schema, which the log never holds); a thinking block whose
  response has no count (the log does not hold its full length: "thinking:
  counted by the API beyond its visible text"); a TodoWrite call (Claude Code
  repeats the todo list in a reminder the transcript leaves out: at most the
  list's own size); what the agent sent that another file of the session recorded
  (``Request.unrecorded``: a Claude Code sub-agent's skill listing and deferred
  tools, at most their estimate).
  A clean step whose response's count matches its text (``Step.own_ratio``) is
  explained by its own items at its own ratio, within ``RATIO_BOUNDS``: all it
  added is recorded, and content the session's median does not fit (paths, CJK)
  is the tokenizer's, shown as estimation error, not as text the log lacks;
- ``estimated``: the start of the chain (the first request, or the first after
  a break: a compaction, a prompt that shrank, a history that is not the
  previous one's plus more), whose split rests on estimates;
- ``unattributed``: growth no recorded text explains, shown as such. Recorded
  text is never stretched past the calibrated ratio to make it vanish, but for
  a clean step's own items.

Steps without thinking and with some size are "clean": they calibrate the
ratio, and ``compare`` scores estimators against their exact deltas. A step
with thinking whose response was counted calibrates and is scored without the
response: its growth less that output count against the estimate of the rest
(``Step.sample``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ctxviewer.analysis.breakdown import Breakdown, Item
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.model import (
    COMPACT_BOUNDARY,
    COMPACT_SUMMARY,
    THINKING,
    TOOL_RESULT,
    TOOL_USE,
    Message,
    Request,
    Session,
)

TOLERANCE = 0.15  # of the delta: an estimate this close explains the whole growth
MIN_TOKENS = 40  # remainders below this are within the noise of one message
CLEAN_MIN = 50  # a step must add this many estimated tokens to calibrate or be scored
# A step's ratio outside is a broken step, not a tokenizer's. The upper bound holds the
# interquartile range of every model's steps on real transcripts (with the framing of
# small steps, medians 1.3-2.0, third quartiles up to 2.2: Opus 4.7's tokenizer counts
# about 1.6x chars/4, path-heavy results 2x); 1.6 cut off 40% of them.
RATIO_BOUNDS = (0.6, 2.5)
THINKING_CAUSE = "thinking: counted by the API beyond its visible text"
RESPONSE_CAUSE = (
    "the previous response beyond its recorded text (thinking the transcript leaves out, "
    "call framing): counted by the API as its output"
)
TOOL_SEARCH_CAUSE = "tools loaded by ToolSearch: their schemas, counted by the API"
TODO_CAUSE = "todo list reminder: Claude Code repeats the list, the transcript does not"
TODO_TOOLS = frozenset({"TodoWrite", "todo_write"})
UNRECORDED_CAUSE = (
    "skill listing and deferred tools sent to the sub-agent: recorded in its session, "
    "not in its transcript"
)
UNATTRIBUTED = "unattributed: growth no recorded text explains"


@dataclass(frozen=True)
class Step:
    """What one request added to the previous one of its conversation."""

    index: int
    previous: int
    delta: int  # exact: the API's prompt growth
    added: tuple[Message, ...]
    estimate: int  # the estimator's count of ``added`` (uncalibrated)
    thinking: bool  # a thinking block among the added messages
    tool_search: bool = False  # a ToolSearch result (tool_reference) among them
    todo: int = 0  # the estimate of TodoWrite inputs among them (the list it repeats)
    unrecorded: int = 0  # the estimate of what the request sent beyond its log's messages
    # The previous response as the API counted it (its output tokens), where the log
    # holds a count of the whole response (0: unknown), and the estimate of what the
    # transcript keeps of it (its visible blocks).
    output: int = 0
    visible: int = 0

    @property
    def unseen(self) -> bool:
        """The response held more than the transcript keeps of it (thinking the file
        leaves out): its output count exceeds the estimate of its visible blocks."""
        return self.output - self.visible > MIN_TOKENS

    @property
    def clean(self) -> bool:
        return (
            not (self.thinking or self.unseen or self.tool_search or self.todo or self.unrecorded)
            and self.estimate >= CLEAN_MIN
            and self.delta > 0
        )

    @property
    def own_ratio(self) -> bool:
        """A clean step whose response's whole count is known (so nothing unseen came
        with it) and whose growth is within the ratios a tokenizer has to its estimate:
        everything it added is recorded, and its tokens are those items' own (a Grep
        result of paths, CJK text count more than the session's median ratio)."""
        return (
            self.clean
            and self.output > 0
            and RATIO_BOUNDS[0] * self.estimate <= self.delta <= RATIO_BOUNDS[1] * self.estimate
        )

    @property
    def results(self) -> tuple[int, int] | None:
        """A step whose response holds what the transcript lacks (thinking), scored
        without it: the growth less the response's own output count (the API's, both)
        against the estimate of the rest (the tool results and what came with them).
        None where the output count is unknown or the step has other unknowns."""
        if not (self.thinking or self.unseen) or not self.output:
            return None
        if self.tool_search or self.todo or self.unrecorded:
            return None
        api, estimate = self.delta - self.output, self.estimate - self.visible
        return (api, estimate) if estimate >= CLEAN_MIN and api > 0 else None

    def sample(self) -> tuple[int, int] | None:
        """(API tokens, estimate) this step calibrates and scores on, if any."""
        return (self.delta, self.estimate) if self.clean else self.results


@dataclass(frozen=True)
class Attribution:
    """One request's prompt split into exact growth, estimate and unattributed tokens."""

    index: int
    exact: int = 0
    estimated: int = 0
    unattributed: int = 0
    causes: dict[str, int] = field(default_factory=dict)  # named cause -> tokens
    ratio: float = 1.0  # the calibrated estimator/API ratio used
    step: Step | None = None  # None: the start of a chain
    growth: int = 0  # the exact growth since the start of the chain
    explained: int = 0  # the calibrated estimate of what was added since

    def as_dict(self) -> dict[str, int]:
        return {
            "attributed_exact": self.exact,
            "estimated": self.estimated,
            "unattributed": self.unattributed,
        }


def _median(values: list[float]) -> float:
    """``statistics.median`` without importing ``statistics`` (and ``fractions``) at start-up."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _conversation(r: Request) -> tuple[str, str | None]:
    return (r.role, r.agent)


def _breaks(r: Request) -> bool:
    return any(e.kind in (COMPACT_BOUNDARY, COMPACT_SUMMARY) for e in r.events)


def steps(session: Session, est: Estimator) -> dict[int, Step]:
    """Each request's step from the previous one of its conversation, where the chain holds."""
    last: dict[tuple[str, str | None], Request] = {}
    out: dict[int, Step] = {}
    for r in session.requests:
        if r.usage is None:
            continue
        key = _conversation(r)
        prev = last.get(key)
        last[key] = r
        if prev is None or _breaks(r) or prev.usage is None:
            continue
        n = len(prev.messages)
        if len(r.messages) < n or r.messages[:n] != prev.messages:
            continue  # not the previous history plus more: a rewind, an edit, a new chain
        delta = r.usage.prompt_tokens - prev.usage.prompt_tokens
        if delta < 0:
            continue  # the prompt shrank: cleared thinking, context edits, a cache rebuild
        added = r.messages[n:]
        blocks = [b for m in added for b in m.blocks]
        output, visible = _response(prev, added, est)
        out[r.index] = Step(
            r.index,
            prev.index,
            delta,
            added,
            est.messages(added),
            any(b.kind == THINKING for b in blocks),
            any(b.kind == TOOL_RESULT and '"tool_reference"' in b.text for b in blocks),
            sum(est.block(b) for b in blocks if b.kind == TOOL_USE and b.name in TODO_TOOLS),
            output=output,
            visible=visible,
            unrecorded=est.messages(r.unrecorded) if r.unrecorded else 0,
        )
    return out


def _response(prev: Request, added: tuple[Message, ...], est: Estimator) -> tuple[int, int]:
    """The previous request's output count and the estimate of its response as the
    step added it: (0, 0) unless the step adds exactly one assistant message, and when
    the count is below that estimate at the lowest ratio a tokenizer has (the count of
    a response still streaming: Claude Code writes a record per content block, the
    early ones with the count so far)."""
    answers = [m for m in added if m.role == "assistant"]
    if len(answers) != 1 or prev.usage is None:
        return 0, 0
    visible = est.messages(answers)
    output = prev.usage.output_tokens
    return (output, visible) if output >= RATIO_BOUNDS[0] * visible else (0, 0)


def ratios(found: dict[int, Step], session: Session) -> dict[str | None, float]:
    """The estimator's ratio to the API per model, from the clean steps (median)."""
    by_model: dict[str | None, list[float]] = {}
    for s in found.values():
        if (sample := s.sample()) is not None:
            q = sample[0] / sample[1]
            if RATIO_BOUNDS[0] <= q <= RATIO_BOUNDS[1]:
                by_model.setdefault(session.requests[s.index].model, []).append(q)
    every = [q for qs in by_model.values() for q in qs]
    overall = _median(every) if len(every) >= 3 else 1.0
    return {m: _median(qs) if len(qs) >= 3 else overall for m, qs in by_model.items()} | {
        "*": overall
    }


def attribute(session: Session, est: Estimator) -> list[Attribution]:
    """Every request's prompt as exact, estimated and unattributed tokens (see module doc)."""
    found = steps(session, est)
    ratio_of = ratios(found, session)
    totals: dict[tuple[str, str | None], Attribution] = {}
    out: list[Attribution] = []
    for r in session.requests:
        if r.usage is None:
            out.append(Attribution(r.index))
            continue
        key = _conversation(r)
        step = found.get(r.index)
        ratio = ratio_of.get(r.model, ratio_of["*"])
        before = totals.get(key)
        if step is None or before is None:
            a = Attribution(r.index, estimated=r.usage.prompt_tokens, ratio=ratio)
        else:
            a = _grow(before, step, ratio)
        totals[key] = a
        out.append(a)
    return out


def _grow(before: Attribution, s: Step, ratio: float) -> Attribution:
    """Add step ``s``. Over the chain, the growth (exact) less the calibrated estimate of
    everything added and less the causes named on evidence is what stays unexplained:
    a step whose items were over-estimated offsets one whose items were under-estimated
    (a tool result written to the transcript one step late)."""
    explained = s.delta if s.own_ratio else round(s.estimate * ratio)
    rest = s.delta - explained
    causes = dict(before.causes)
    if rest > 0 and s.unrecorded:  # sent, recorded elsewhere: never more than its estimate
        part = min(rest, round(s.unrecorded * ratio))
        causes[UNRECORDED_CAUSE] = causes.get(UNRECORDED_CAUSE, 0) + part
        rest -= part
    if rest > 0 and s.todo:  # a reminder of known size: never more than the list itself
        part = min(rest, round(s.todo * ratio))
        causes[TODO_CAUSE] = causes.get(TODO_CAUSE, 0) + part
        rest -= part
    if rest > 0 and s.output:  # the response's own count: what it held beyond its text
        part = min(rest, s.output - round(s.visible * ratio))
        if part > 0:
            cause = THINKING_CAUSE if s.thinking else RESPONSE_CAUSE
            causes[cause] = causes.get(cause, 0) + part
            rest -= part
    # a thinking block of unknown size takes what is left; one whose response was
    # counted is never stretched past that count
    thinking = s.thinking and not s.output
    named = TOOL_SEARCH_CAUSE if s.tool_search else THINKING_CAUSE if thinking else None
    if rest > 0 and named is not None:
        causes[named] = causes.get(named, 0) + rest
    growth = before.growth + s.delta
    estimate = before.explained + explained
    left = growth - estimate - sum(causes.values())
    unattributed = left if left > max(TOLERANCE * growth, MIN_TOKENS) else 0
    return Attribution(
        s.index,
        growth - unattributed,
        before.estimated,
        unattributed,
        causes,
        ratio,
        s,
        growth,
        estimate,
    )


def clean_steps(session: Session, est: Estimator) -> Sequence[Step]:
    """Steps whose exact growth scores an estimator: clean ones (no thinking, some size)
    on their delta, and those with thinking on their growth less the response's output
    count (``Step.sample``)."""
    return [s for s in steps(session, est).values() if s.sample() is not None]


def with_attribution(
    b: Breakdown, a: Attribution, rows: bool = True, sent: Sequence[Message] = ()
) -> Breakdown:
    """``b`` with ``a``'s numbers and, with ``rows`` (transcripts, whose Messages total
    holds what the log does not), Messages rows for the causes and the unexplained
    growth (they are part of the Messages total, which is the API's). ``sent``: the
    conversation's ``Request.unrecorded`` messages so far, the text of their row."""
    if not rows:
        return replace(b, attribution=a.as_dict())
    extra = [
        Item(cause, tokens, "cause", ref=_cause_text(cause, tokens, sent))
        for cause, tokens in a.causes.items()
        if tokens
    ]
    if a.unattributed:
        extra.append(
            Item(
                UNATTRIBUTED,
                a.unattributed,
                "unattributed",
                ref=f"{UNATTRIBUTED}: {a.unattributed:,} tokens",
            )
        )
    cats = b.categories
    if extra:
        cats = tuple(
            replace(
                c, items=tuple(sorted(c.items + tuple(extra), key=lambda x: (-x.tokens, x.name)))
            )
            if c.name == "messages"
            else c
            for c in cats
        )
    return replace(b, categories=cats, attribution=a.as_dict())


def _cause_text(cause: str, tokens: int, sent: Sequence[Message]) -> str:
    """What a cause's row shows when selected: the text itself where the session
    recorded it, else what the cause is."""
    head = f"{cause}: {tokens:,} tokens of growth"
    if cause != UNRECORDED_CAUSE or not sent:
        return head
    texts = "\n\n".join(b.text for m in sent for b in m.blocks)
    return f"{head} (at most their estimate), as the session recorded them:\n\n{texts}"
