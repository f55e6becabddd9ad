"""One analysis of a session, shared by the commands and the window.

``Analysis`` fixes the estimator, policy and window of a loaded session and
derives thresholds, the timeline and per-request breakdowns on demand.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

from ctxviewer.analysis.agents.claude_counts import LocalEstimate, agent_counts, local_estimate
from ctxviewer.analysis.agents.counting import CountingView, Difference
from ctxviewer.analysis.agents.fired import Fired, fired
from ctxviewer.analysis.agents.identify import Identity, identify
from ctxviewer.analysis.agents.policy import AGENT, rule_thresholds
from ctxviewer.analysis.agents.window import Window, agent_window
from ctxviewer.analysis.attribution import (
    UNRECORDED_CAUSE,
    Attribution,
    attribute,
    with_attribution,
)
from ctxviewer.analysis.balance import balanced
from ctxviewer.analysis.breakdown import (
    Breakdown,
    Item,
    MessageMemo,
    breakdown,
    infer_overhead,
)
from ctxviewer.analysis.predicted_compactions import Compactions, compactions
from ctxviewer.analysis.thresholds import POLICY_LABELS, Thresholds, thresholds
from ctxviewer.analysis.timeline import Point, timeline
from ctxviewer.analysis.tokens.estimators import DEFAULT, Estimator, for_session
from ctxviewer.ingest.claude.subagents import is_compaction
from ctxviewer.model import AUXILIARY, MAIN, Request, Session

if TYPE_CHECKING:
    from ctxviewer.analysis.disk_overhead import DiskItem

BREAKDOWNS_KEPT = 32  # per Analysis: stepping through requests recomputes no recent one


def overhead_key(req: Request) -> tuple[str, str | None]:
    """Whose inferred system prompt + tools a transcript request shares: its own
    conversation's, except Claude Code's compaction call, which is the main agent's."""
    if is_compaction(req.agent):
        return (MAIN, None)
    return (req.role, req.agent)


def env_pct_override(environ: Mapping[str, str]) -> float | None:
    """``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` as a percentage, or None when unset or not 1-99."""
    try:
        pct = float(environ.get("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", ""))
    except ValueError:
        return None
    return pct if 0 < pct < 100 else None


def _local_counts(
    rules: Mapping[str, object], model: str | None, overhead: int
) -> LocalEstimate | None:
    """How the agent counts when its count_tokens calls fail, where it estimates itself
    (``count_fallback = "local"``): characters a token, by model."""
    if rules.get("count_fallback") != "local":
        return None
    name = (model or "").lower()
    per_model = rules.get("local_chars_per_token_by_model")
    cpt = next(
        (
            float(v)
            for prefix, v in (per_model.items() if isinstance(per_model, dict) else ())
            if name.startswith(prefix)
        ),
        None,
    )
    return local_estimate(cpt or float(str(rules.get("local_chars_per_token", 4))), overhead)


@dataclass
class Analysis:
    """A loaded session with the user's choices, and everything derived from them."""

    session: Session
    estimator_name: str = DEFAULT
    policy: str = AGENT
    window_override: int | None = None
    custom: dict[str, int] | None = None
    # Claude Code's CLAUDE_AUTOCOMPACT_PCT_OVERRIDE, read where ctxviewer runs (where the
    # user runs the agent too); pass None to ignore the environment.
    pct_override: float | None = field(default_factory=lambda: env_pct_override(os.environ))
    counts: str = "agent"  # "agent": as the agent's /context counts; "wire": as sent
    estimates: bool = True  # False: a session read without its messages (``timeline``)
    _inferred: dict[tuple[str, str | None], int | None] = field(default_factory=dict, repr=False)
    _breakdowns: dict[int, Breakdown] = field(default_factory=dict, repr=False)
    _message_rows: MessageMemo = field(default_factory=dict, repr=False)
    _windows: dict[str | None, Window] = field(default_factory=dict, repr=False)
    _profile_auto: int | None = field(default=None, repr=False)

    @cached_property
    def estimator(self) -> Estimator:
        return for_session(self.session, self.estimator_name)

    @cached_property
    def identity(self) -> Identity:
        """The agent that wrote the session, its version and its rules."""
        return identify(self.session)

    def window_of(self, model: str | None) -> Window:
        """The window the agent works with for ``model`` (and where the number came from)."""
        done = self._windows.get(model)
        if done is None:
            reqs = [r for r in self.session.requests if r.model == model] or self.session.requests
            done = self._windows[model] = agent_window(
                self.identity, reqs, model, self.window_override
            )
        return done

    @cached_property
    def window_info(self) -> Window:
        return self.window_of(self.session.model)

    @property
    def window(self) -> int:
        return self.window_info.tokens

    @property
    def window_source(self) -> str:
        return self.window_info.source

    @property
    def policy_label(self) -> str:
        if self.policy == AGENT:
            return self.identity.era.policy.label
        return POLICY_LABELS.get(self.policy, self.policy)

    @property
    def policy_source(self) -> str:
        if self.policy != AGENT:
            return "user"
        return "log" if self.threshold_evidence else "agent profile"

    @cached_property
    def fired(self) -> Fired | None:
        """The bounds the log's own auto compactions put on the threshold (agent policy)."""
        if self.policy != AGENT:
            return None
        return fired(self.session, bool(self.identity.era.policy.constant("counts_output")))

    @property
    def threshold_evidence(self) -> str:
        """Why the log's compaction replaced the profile's auto threshold, or ''."""
        f, t = self.fired, self.thresholds
        if f is None or t.auto != f.at or self._profile_auto == f.at:
            return ""
        return (
            f"an auto compaction before request {f.request} at {f.at:,} tokens, after a "
            f"request of {f.above:,}: the profile's {self._profile_auto:,} would not have "
            "fired there"
        )

    def thresholds_for(self, window: Window, model: str | None) -> Thresholds:
        if self.policy != AGENT:
            return thresholds(window.tokens, self.policy, self.custom)
        caps = [
            r.max_tokens
            for r in self.session.requests
            if r.model == model and r.role == MAIN and r.max_tokens
        ]
        t = rule_thresholds(
            self.identity.era.policy,
            window.tokens,
            model=model,
            max_output=max(caps) if caps else None,
            raw_window=window.raw,
            pct_override=self.pct_override,
        )
        f = self.fired
        if model != self.session.model or f is None or f.allows(t.auto):
            return t
        self._profile_auto = t.auto  # what the log's evidence replaced (threshold_evidence)
        auto = min(f.at, t.window)
        return replace(
            t,
            warn=max(0, min(auto, auto - (t.auto - t.warn))),
            auto=auto,
            hard=min(t.window, max(t.hard, auto)),
        )

    @cached_property
    def thresholds(self) -> Thresholds:
        return self.thresholds_for(self.window_info, self.session.model)

    @cached_property
    def attribution(self) -> list[Attribution]:
        """Each request's prompt as exact growth, estimate and unattributed tokens."""
        return attribute(self.session, self.estimator)

    @cached_property
    def compactions(self) -> Compactions:
        """Observed compactions and those the policy predicts along the real curve."""
        counts_output = self.policy == AGENT and bool(
            self.identity.era.policy.constant("counts_output")
        )
        return compactions(self.session, self.timeline, self.thresholds, counts_output)

    @cached_property
    def timeline(self) -> list[Point]:
        return timeline(self.session, self.estimator, self.thresholds, self.estimates)

    def resolve_index(self, which: int | str | None) -> int:
        """See ``Session.resolve_index``."""
        return self.session.resolve_index(which)

    def breakdown(self, index: int) -> Breakdown:
        """The breakdown of request ``index`` (the last ``BREAKDOWNS_KEPT`` are kept:
        a worker prepares the one a window shows first)."""
        index = range(len(self.session.requests))[index]  # IndexError as a list would
        done = self._breakdowns.get(index)
        if done is None:
            done = self._breakdowns[index] = self._breakdown(index)
            if len(self._breakdowns) > BREAKDOWNS_KEPT:
                del self._breakdowns[next(iter(self._breakdowns))]
        return done

    def category_tokens(self, index: int) -> tuple[tuple[str, int], ...]:
        """Request ``index``'s categories as (name, tokens), as ``breakdown(index)`` has
        them, computed without what changes no category's tokens (the rows of Messages,
        the attribution, the parts read from disk): what a one-line summary needs."""
        index = range(len(self.session.requests))[index]
        b = self._breakdowns.get(index) or self._breakdown(index, rows=False)
        return tuple((c.name, c.tokens) for c in b.categories)

    def _breakdown(self, index: int, rows: bool = True) -> Breakdown:
        req = self.session.requests[index]
        key = overhead_key(req)
        if not req.complete and key not in self._inferred:
            self._inferred[key] = infer_overhead(
                self.session.requests, replace(req, role=key[0], agent=key[1]), self.estimator
            )
        w = self.window_of(req.model) if req.model and req.role != AUXILIARY else self.window_info
        t = self.thresholds if w == self.window_info else self.thresholds_for(w, req.model)
        agent = self.agent_view
        if agent.rules.get("shows_buffer") == "native-window":
            era = self.identity.era
            own = era.window_for(req.model or self.session.model) or 0
            agent = replace(agent, native_window=own >= (era.extended_window or own + 1))
        overhead = agent.rules.get("tool_overhead")
        if overhead is not None and req.complete:
            answers = agent_counts(
                self.session,
                index,
                int(overhead),
                _local_counts(agent.rules, req.model, int(overhead)),
            )
            if answers is not None:
                agent = replace(agent, answers=answers)
        inferred = self._inferred.get(key)
        size = self._size_without_usage(index)
        b = breakdown(
            req,
            self.estimator,
            w.tokens,
            t,
            inferred,
            agent if self.counts == "agent" else None,
            self._message_rows,
            rows,
            size,
        )
        if not rows:  # what follows adds rows, notes and numbers beside the categories
            return b
        diffs = (
            b.differences
            if self.counts == "agent"
            else breakdown(
                req, self.estimator, w.tokens, t, inferred, agent, self._message_rows, size=size
            ).differences
        )
        if w.wire and w.wire != w.tokens:
            diffs = (
                Difference(
                    "window",
                    w.tokens,
                    w.wire,
                    f"the requests carry the context-1m beta; {w.detail}",
                ),
                *diffs,
            )
        b = replace(b, differences=tuple(diffs))
        if not req.complete:
            b = self._with_disk(b)
        if req.usage is not None:
            a = self.attribution[index]
            sent = (
                tuple(
                    m
                    for r in self.session.requests[: index + 1]
                    if r.unrecorded and (r.role, r.agent) == (req.role, req.agent)
                    for m in r.unrecorded
                )
                if UNRECORDED_CAUSE in a.causes
                else ()
            )
            b = with_attribution(b, a, rows=not req.complete, sent=sent)
        return balanced(b)  # last: every category is the sum of its rows

    def _size_without_usage(self, index: int) -> tuple[int, str] | None:
        """A request without usage: the size its overflow error states, or the last API
        count of its conversation carried forward (``timeline.carried_estimate``)."""
        if self.session.requests[index].usage is not None:
            return None
        p = self.timeline[index]
        if p.api_prompt_tokens is not None:
            return p.api_prompt_tokens, "overflow"
        if p.carried_prompt_tokens is not None:
            return p.carried_prompt_tokens, "estimate"
        return None

    @cached_property
    def disk_items(self) -> list[DiskItem]:
        """What the agent loads from disk for the session's project, read now."""
        if not self.session.cwd or not os.path.isdir(self.session.cwd):
            return []  # the project is not on this machine (the usual case)
        from ctxviewer.analysis.disk_overhead import disk_overhead

        return disk_overhead(self.identity.profile.id, self.session.cwd, self.estimator)

    def _with_disk(self, b: Breakdown) -> Breakdown:
        """The inferred system prompt + tools with the parts read from disk as its items."""
        cat = b.category("unrecorded_overhead")
        if cat is None or not self.disk_items:
            return b
        from ctxviewer.analysis.disk_overhead import NOTE as DISK_NOTE
        from ctxviewer.analysis.disk_overhead import capped

        listed = b.category("skills")
        found = [
            d
            for d in self.disk_items  # skills the transcript lists are not overhead
            if not (d.kind == "skill" and listed is not None and listed.items)
        ]
        rows = tuple(
            Item(f"{d.kind}: {d.name} ({DISK_NOTE})", d.tokens, "disk", ref=d.text)
            for d in capped(found, cat.tokens)
        )
        note = (
            f"{cat.note}; the project is on this machine: its memory files, skills and "
            f"MCP servers as they are now ({DISK_NOTE}) are listed inside it"
        )
        return replace(
            b,
            categories=tuple(
                replace(c, items=rows, note=note) if c is cat else c for c in b.categories
            ),
        )

    @cached_property
    def agent_view(self) -> CountingView:
        """The agent's own counting rules (its ``/context``)."""
        return CountingView(self.identity.profile.label, self.identity.era.counting)
