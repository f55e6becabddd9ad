"""Compacted branches: a session continued by a simulated compaction.

A branch is a new ``Session``: the original requests ``0..N`` followed by the
compacted request of ``N`` as request ``N+1``. That request was never sent,
so its usage is the local estimate of the compacted prompt, projected on the
API's scale of the request it compacts as the compaction dialog shows it
(noted on the request): every view can then show and compact it like a
recorded one.
``with_summary`` swaps an edited summary into a result before branching.
"""

from __future__ import annotations

from dataclasses import replace

from ctxviewer.analysis.compaction.base import CompactionResult, estimate_request
from ctxviewer.analysis.tokens.estimators import Estimator
from ctxviewer.model import COMPACTION_SUMMARY, MAIN, Block, Request, Session, Usage

NOTE_PREFIX = "compacted branch"


def is_compacted(req: Request) -> bool:
    """True for a request added by ``compacted_branch`` (usage is an estimate, not the API's)."""
    return any(n.startswith(NOTE_PREFIX) for n in req.notes)


def estimated_request(result: CompactionResult, tokens: int | None = None) -> Request:
    """The compacted request with ``usage`` = ``tokens`` (default: its local estimate,
    ``result.after``; ``result.projected_after`` to compare with an API count)."""
    return replace(
        result.request,
        usage=Usage(input_tokens=result.after if tokens is None else tokens),
        response=None,
        events=(),
        status=None,
        message_id=None,
        request_id=None,
    )


def with_summary(
    result: CompactionResult,
    summary: str,
    title: str,
    est: Estimator,
    inferred_overhead: int | None = None,
) -> CompactionResult:
    """``result`` with its summary text (and title) replaced; ``after`` recounted."""
    if summary == result.summary and title == result.title:
        return result
    old = result.summary

    def block(b: Block) -> Block:
        if b.tag != COMPACTION_SUMMARY:
            return b
        text = b.text.replace(old, summary, 1) if old and old in b.text else summary
        return replace(b, text=text)

    msgs = tuple(
        replace(m, blocks=tuple(block(b) for b in m.blocks)) for m in result.request.messages
    )
    req = replace(result.request, messages=msgs)
    return replace(
        result,
        request=req,
        summary=summary,
        title=title,
        summary_tokens=est.count(summary),
        after=estimate_request(req, est, inferred_overhead),
    )


def compacted_branch(session: Session, result: CompactionResult) -> Session:
    """Requests ``0..N`` of ``session`` plus the compacted request ``N`` as ``N+1``."""
    n = result.request.index
    # the size the dialog projected: the estimate after, on the API's scale of the request
    # it compacts (the raw estimate would show the estimator's error as a saving)
    new = replace(
        estimated_request(result, result.projected_after),
        index=n + 1,
        role=MAIN,
        sidechain=False,
        agent=None,
        simulated=True,
        notes=(
            *result.request.notes,
            (f"{NOTE_PREFIX} ({result.strategy}) of request {n}: usage is the local estimate"),
        ),
    )
    title = f"{session.title or 'session'} · {NOTE_PREFIX} ({result.strategy})"
    return Session(
        session.path,
        session.format,
        [*session.requests[: n + 1], new],
        list(session.skipped),
        [],
        title,
        session.session_id,
    )
