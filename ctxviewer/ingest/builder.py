"""Assemble parser items into a ``Session``.

Rules that hold for every format live here, not in the readers:

- streamed duplicates of one API call (same message id and request id) count
  once, keeping the context of the first record and the largest usage;
- events attach to the next request (a compaction boundary shows on the first
  request after it); events after the last request stay on the session;
- indices are assigned in order of first appearance;
- side calls are marked auxiliary: requests that declare no tools while the
  session's main conversation does (Claude Code's title and topic calls), and
  ``max_tokens: 1`` probes (Claude Code's ``/context`` counts with them when
  count_tokens is unavailable);
- count_tokens calls are kept apart (``Session.token_counts``): never requests;
- in full-body sources, tool-using requests whose system prompt differs from
  the main agent's are sub-agents (a Task / Agent tool's own conversation);
- in full-body sources, a compaction shows as a compaction summary appearing
  in the messages: a ``compact_boundary`` event is inferred there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from ctxviewer.ingest.base import Item, request_with, well_typed
from ctxviewer.model import (
    AUXILIARY,
    COMPACT_BOUNDARY,
    COMPACTION_SUMMARY,
    MAIN,
    MEMORY,
    SUBAGENT,
    Event,
    Message,
    Request,
    Session,
    Skipped,
    TokenCount,
)

PROBE_MAX_TOKENS = 1  # a request that asks for at most this many output tokens is a count


class SessionBuilder:
    def __init__(self, session: Session) -> None:
        self.session = session
        self._by_key: dict[tuple[str, str], int] = {}
        self._pending_events: list[Event] = []
        # What the reader said of each request before the session-wide rules
        # (roles, inferred compactions) changed it: ``classify`` starts from it.
        self._base: list[tuple[str, bool, str | None, tuple[Event, ...]]] = []

    def add(self, item: Item) -> Request | None:
        """Add one item; returns the request that was added or updated."""
        if isinstance(item, Request):
            return self._add_request(item)
        if isinstance(item, Skipped):
            self.session.skipped.append(item)
        elif isinstance(item, Event):
            self._pending_events.append(well_typed(item))  # a timestamp may be odd JSON
        elif isinstance(item, TokenCount):
            self.session.token_counts.append(item)
        return None

    def _add_request(self, req: Request) -> Request:
        req = well_typed(req)  # odd JSON's lists and numbers where text belongs
        requests = self.session.requests
        key = req.key
        if key is not None and key in self._by_key:
            pos = self._by_key[key]
            old = requests[pos]
            if _usage_size(req) > _usage_size(old):
                old = replace(old, usage=req.usage, response=req.response or old.response)
                requests[pos] = old
            return old
        if self._pending_events or req.index != len(requests):  # a reader that numbers its
            events = tuple(self._pending_events) + req.events  # requests saves a copy
            self._pending_events.clear()
            req = request_with(req, index=len(requests), events=events)
        if key is not None:
            self._by_key[key] = len(requests)
        requests.append(req)
        self._base.append((req.role, req.sidechain, req.agent, req.events))
        return req

    def build(self) -> Session:
        """Finish: park trailing events, classify the requests."""
        self.session.events.extend(self._pending_events)
        self._pending_events.clear()
        self.classify()
        return self.session

    def classify(self) -> None:
        """Apply the session-wide rules (side calls, sub-agents, inferred compactions)
        to the requests so far, from what their readers said: the same bytes get
        the same roles whether they were loaded at once or followed as they grew."""
        reqs = self.session.requests
        for i, (role, sidechain, agent, events) in enumerate(self._base):
            r = reqs[i]
            if (r.role, r.sidechain, r.agent) != (role, sidechain, agent) or r.events != events:
                reqs[i] = request_with(
                    r, role=role, sidechain=sidechain, agent=agent, events=events
                )
        mark_auxiliary(self.session)
        mark_subagents(self.session)
        infer_compactions(self.session)


def _usage_size(req: Request) -> tuple[int, int]:
    if req.usage is None:
        return (-1, -1)
    return (req.usage.prompt_tokens, req.usage.output_tokens)


def is_probe(req: Request) -> bool:
    """A ``max_tokens: 1`` call: a token count in disguise, never a turn of the conversation."""
    return req.max_tokens is not None and req.max_tokens <= PROBE_MAX_TOKENS


def mark_auxiliary(session: Session) -> None:
    """Probes, and requests without tools beside a tool-using main conversation, are side calls."""
    reqs = session.requests
    tooled = any(r.tools for r in reqs if r.complete and not is_probe(r))
    for i, r in enumerate(reqs):
        if r.role != MAIN or r.sidechain:
            continue
        if is_probe(r) or (tooled and r.complete and not r.tools):
            reqs[i] = replace(r, role=AUXILIARY)


def _prompt_key(req: Request) -> str:
    """What identifies an agent: the start of its longest system block (its instructions)."""
    blocks = [b.text for b in req.system if b.tag != MEMORY]
    return max(blocks, key=len)[:400] if blocks else ""


def mark_subagents(session: Session) -> None:
    """Tool-using full-body requests with another agent's system prompt are sub-agents."""
    reqs = session.requests
    tooled = [r for r in reqs if r.complete and r.tools and r.role == MAIN and not r.sidechain]
    groups: dict[str | None, list[Request]] = {}
    for r in tooled:  # each agent (client) has its own main prompt
        groups.setdefault(_client_family(r.client), []).append(r)
    for group in groups.values():
        _mark_group_subagents(reqs, group)


def _client_family(client: str | None) -> str | None:
    """'claude-cli/2.1.197 (external, cli)' -> 'claude-cli': the program, not its version."""
    return client.split("/", 1)[0].strip().lower() if client else None


def _mark_group_subagents(reqs: list[Request], tooled: list[Request]) -> None:
    keys = Counter(_prompt_key(r) for r in tooled)
    if len(keys) < 2:
        return
    main_key = keys.most_common(1)[0][0]
    tooled_ids = {id(r) for r in tooled}
    for i, r in enumerate(reqs):
        if id(r) in tooled_ids and (key := _prompt_key(r)) != main_key:
            import hashlib  # rare: a sub-agent without an id

            agent = "agent-" + hashlib.sha1(key.encode()).hexdigest()[:8]
            reqs[i] = replace(r, role=SUBAGENT, sidechain=True, agent=agent)


SUMMARY_REACH = 64  # messages of a request's opening looked at for a compaction summary


def _has_summary(req: Request) -> bool:
    return opens_with_summary(req.messages)


def opens_with_summary(messages: Sequence[Message]) -> bool:
    """A compaction summary opens the context it starts: look at its opening, the messages
    before the first answer (Codex keeps the user's messages before its summary)."""
    for m in messages[:SUMMARY_REACH]:
        if m.role == "assistant":
            return False
        if any(b.tag == COMPACTION_SUMMARY for b in m.blocks):
            return True
    return False


def infer_compactions(session: Session) -> None:
    """Mark where a compaction summary first appears in a full-body main conversation."""
    reqs = session.requests
    prev: Request | None = None
    for i, r in enumerate(reqs):
        if r.role != MAIN or not r.complete:
            continue
        known = any(e.kind == COMPACT_BOUNDARY for e in r.events)
        if (
            prev is not None
            and not known
            and _has_summary(r)
            and (not _has_summary(prev) or len(r.messages) < len(prev.messages))
        ):
            event = Event(
                COMPACT_BOUNDARY,
                r.timestamp,
                pre_tokens=prev.api_prompt_tokens,
                post_tokens=r.api_prompt_tokens,
                trigger="inferred",
                detail="a compaction summary replaced the earlier messages",
            )
            reqs[i] = r = replace(r, events=r.events + (event,))
        prev = r
