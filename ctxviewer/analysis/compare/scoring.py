"""How close each estimator comes to the API's prompt size (docs/estimators.md; JSON: docs/json.md).

``compare(session, names)`` puts every estimator's count of the whole prompt
next to the API usage of each request, with the error in tokens and percent
(``error = estimate - api``, ``pct = error / api``) and, per estimator, MAPE,
bias (mean signed pct) and the worst case. Requests with a full request body
are scored on their whole prompt. A transcript records the messages but not
the system prompt and tools, so its requests are scored on their exact growth
instead: the API's prompt delta from the previous call of the conversation
against each estimator's count of what was added (``kind: "delta"``). A step
with thinking is scored without its response, which the API counted as output:
the delta less that count against the count of the rest. Steps whose API count
the log cannot explain (ToolSearch results, thinking of unknown size) and small
steps are left out (``analysis.attribution``).

The per-category table of one request shows where the error hides: agents
derive Messages by subtracting the estimated overhead from the API total.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TextIO

from ctxviewer.analysis.attribution import clean_steps
from ctxviewer.analysis.branch import is_compacted
from ctxviewer.analysis.compare.table import CategoryTable, LocalCounter, request_table
from ctxviewer.analysis.tokens import calibrate
from ctxviewer.analysis.tokens.counter import PromptCounter
from ctxviewer.analysis.tokens.estimators import for_session, names
from ctxviewer.analysis.tokens.registry import default_names
from ctxviewer.fmt import plural
from ctxviewer.model import Message, Request, Session


@dataclass(frozen=True)
class Row:
    """One request scored: the API's count and each estimator's estimate."""

    index: int
    model: str | None
    role: str
    api_prompt_tokens: int  # the API's count: the whole prompt, or the growth ("delta")
    estimates: dict[str, int | None]
    kind: str = "prompt"  # "prompt" | "delta"

    def error(self, name: str) -> int | None:
        e = self.estimates.get(name)
        return None if e is None else e - self.api_prompt_tokens

    def pct(self, name: str) -> float | None:
        err = self.error(name)
        return None if err is None else err / self.api_prompt_tokens


@dataclass(frozen=True)
class Stats:
    """One estimator's error over the scored rows."""

    n: int
    mape: float | None
    bias: float | None
    max_abs_pct: float | None
    missing: int = 0  # rows without an estimate (API failures, first request for calibrated)


@dataclass(frozen=True)
class Comparison:
    """Estimators scored against the API's counts over a session."""

    estimators: tuple[str, ...]
    rows: tuple[Row, ...]
    summary: dict[str, Stats]
    excluded: dict[str, int]
    table: CategoryTable | None = None
    calibration: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def stats(rows: Sequence[Row], name: str) -> Stats:
    pcts = [p for r in rows if (p := r.pct(name)) is not None]
    failed = len(rows) - len(pcts)
    if not pcts:
        return Stats(0, None, None, None, failed)
    return Stats(
        len(pcts),
        sum(abs(p) for p in pcts) / len(pcts),
        sum(pcts) / len(pcts),
        max(abs(p) for p in pcts),
        failed,
    )


def _counter(session: Session, name: str, extra: Mapping[str, PromptCounter]) -> PromptCounter:
    if name in extra:
        return extra[name]
    return LocalCounter(for_session(session, name))  # KeyError names the known ones


def compare(
    session: Session,
    estimator_names: Sequence[str] | None = None,
    *,
    request: int | None = None,
    calibrate_base: str | None = None,
    calibrate_fit: str = "affine",
    counters: Mapping[str, PromptCounter] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Comparison:
    """Compare estimators with the API usage of every scorable request of ``session``.

    ``counters`` supplies estimators that are not local (``anthropic``).
    ``request`` picks the request of the per-category table (None: none).
    """
    extra = dict(counters or {})
    wanted = list(estimator_names or default_names())
    local = [n for n in wanted if n != calibrate.NAME]
    cal = calibrate.NAME in wanted
    bases = [calibrate_base] if calibrate_base else names()
    plain = list(dict.fromkeys(local + (bases if cal else [])))
    by_name = {n: _counter(session, n, extra) for n in plain}

    excluded = {"no_usage": 0, "transcript_only": 0}
    scored: list[Request] = []
    deltas = {}
    if not session.complete:
        est = next(
            (c.estimator for c in by_name.values() if isinstance(c, LocalCounter)),
            for_session(session, "qwen"),
        )
        deltas = {st.index: st for st in clean_steps(session, est)}
    for r in session.requests:
        if not r.api_prompt_tokens:
            excluded["no_usage"] += 1
        elif not r.complete and r.index not in deltas:
            excluded["transcript_only"] += 1
        else:
            scored.append(r)

    rows: list[Row] = []
    for r in scored:
        if cancelled is not None and cancelled():
            from ctxviewer.ingest.base import Cancelled

            raise Cancelled()
        step = deltas.get(r.index)
        if step is not None:
            # a step with thinking is scored without its response (counted by the API)
            added = step.added if step.clean else [m for m in step.added if m.role != "assistant"]
            api = step.delta if step.clean else step.delta - step.output
            ests = {n: _added(by_name[n], added) for n in plain}
            rows.append(Row(r.index, r.model, r.role, api, ests, "delta"))
            continue
        ests = {n: by_name[n].prompt(r) for n in plain}
        rows.append(Row(r.index, r.model, r.role, r.api_prompt_tokens or 0, ests))

    calibration: dict[str, Any] = {}
    notes: list[str] = []
    if cal:
        rows, calibration = _calibrate(rows, bases, calibrate_base, calibrate_fit)
    # drop helper bases that were not asked for
    shown = tuple(wanted)
    rows = [
        Row(
            r.index,
            r.model,
            r.role,
            r.api_prompt_tokens,
            {n: r.estimates.get(n) for n in shown},
            r.kind,
        )
        for r in rows
    ]
    summary = {n: stats(rows, n) for n in shown}
    if deltas:
        notes.append(
            f"{plural(len(deltas), 'transcript request')} scored on their exact growth: the "
            "API's prompt delta from the previous call against each estimator's count "
            "of what was added"
        )
    if excluded["transcript_only"]:
        notes.append(
            f"{plural(excluded['transcript_only'], 'transcript request')} without a clean step "
            "excluded (the first of a chain, thinking of unknown size, ToolSearch "
            "results, tiny steps): their system prompt and tools were not recorded"
        )
    table = (
        request_table(session, request, shown, by_name, calibration)
        if request is not None
        else None
    )
    return Comparison(shown, tuple(rows), summary, excluded, table, calibration, tuple(notes))


def _added(counter: PromptCounter, added: Sequence[Message]) -> int | None:
    """A counter's count of messages added to a conversation (local estimators only)."""
    return counter.estimator.messages(added) if isinstance(counter, LocalCounter) else None


def _group(row: Row) -> tuple[str | None, str]:
    return (row.model, row.role)


def _fit_json(f: calibrate.Fit | None) -> dict[str, float] | None:
    return None if f is None else {"ratio": round(f.ratio, 4), "offset": round(f.offset, 2)}


def _calibrate(
    rows: list[Row], bases: Sequence[str], base: str | None, how: str
) -> tuple[list[Row], dict[str, Any]]:
    points = [calibrate.Point(_group(r), r.api_prompt_tokens, r.estimates) for r in rows]
    preds = calibrate.held_out(points, bases, base, how)
    out = [
        Row(
            r.index,
            r.model,
            r.role,
            r.api_prompt_tokens,
            {**r.estimates, calibrate.NAME: p.estimate},
            r.kind,
        )
        for r, p in zip(rows, preds, strict=False)
    ]
    final_base, fits = calibrate.final_fit(points, bases, base, how)
    scored = [r for r, p in zip(out, preds, strict=False) if p.estimate is not None]
    info = {
        "group_by": "model+role",
        "fit": "api ~ offset + ratio * estimate" if how == "affine" else "api ~ ratio * estimate",
        "base": final_base,
        "base_rule": "fixed (--calibrate-base)"
        if base
        else "lowest MAPE on the earlier requests of the same group",
        "fits": [{"model": g[0], "role": g[1], **(_fit_json(f) or {})} for g, f in fits.items()],
        # every estimator scored on the same held-out requests as ``calibrated``
        "held_out_mape": {
            n: None if (m := stats(scored, n).mape) is None else round(m, 4)
            for n in [calibrate.NAME, *bases]
        },
        "not_predicted": sum(1 for p in preds if p.estimate is None),
        "unfitted": sum(1 for p in preds if p.estimate is not None and not p.fitted),
        "rows": [
            {"index": r.index, "base": p.base, "fit": p.fit}
            for r, p in zip(rows, preds, strict=False)
        ],
        "note": "request k is predicted from a fit on requests < k only (held out); "
        "the first request is not predicted; a group with no earlier request "
        "uses ratio 1.0",
    }
    return out, info


def comparison_json(c: Comparison) -> dict[str, Any]:
    def r4(x: float | None) -> float | None:
        return None if x is None else round(x, 4)

    out: dict[str, Any] = {
        "estimators": list(c.estimators),
        "rows": [
            {
                "index": r.index,
                "model": r.model,
                "role": r.role,
                "kind": r.kind,
                "api_prompt_tokens": r.api_prompt_tokens,
                "estimates": r.estimates,
                "errors": {n: r.error(n) for n in c.estimators},
                "pct": {n: r4(r.pct(n)) for n in c.estimators},
            }
            for r in c.rows
        ],
        "summary": {
            n: {
                "mape": r4(s.mape),
                "bias": r4(s.bias),
                "max_abs_pct": r4(s.max_abs_pct),
                "n": s.n,
                "missing": s.missing,
            }
            for n, s in c.summary.items()
        },
        "excluded": c.excluded,
        "notes": list(c.notes),
    }
    if c.calibration:
        cal = {k: v for k, v in c.calibration.items() if k != "rows"}
        cal["rows"] = [
            {"index": x["index"], "base": x["base"], "fit": _fit_json(x["fit"])}
            for x in c.calibration["rows"]
        ]
        out["calibration"] = cal
    if c.table is not None:
        t = c.table
        out["categories"] = {
            "request": t.request,
            "api_prompt_tokens": t.api_prompt_tokens,
            "estimates": t.estimates,
            "messages_by_subtraction": {n: t.by_subtraction(n) for n in t.estimates},
        }
    return out


def scorable(session: Session) -> Session:
    """``session`` without the estimated usage of a simulated branch's requests (their
    "API" counts are the simulator's estimates: scoring them would score an estimate)."""
    if not any(is_compacted(r) for r in session.requests):
        return session
    reqs = [replace(r, usage=None) if is_compacted(r) else r for r in session.requests]
    return Session(
        session.path,
        session.format,
        reqs,
        session.skipped,
        session.events,
        session.title,
        session.session_id,
    )


def write_csv(c: Comparison, out: TextIO) -> None:
    """One row per scored request: index, model, role, API prompt, each estimator's
    count, then each one's error over the API count (docs/json.md, ``compare --csv``)."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow(
        [
            "index",
            "model",
            "role",
            "api_prompt_tokens",
            *c.estimators,
            *(f"{n}_pct" for n in c.estimators),
        ]
    )
    for r in c.rows:
        w.writerow(
            [
                r.index,
                r.model or "",
                r.role,
                r.api_prompt_tokens,
                *("" if r.estimates[n] is None else r.estimates[n] for n in c.estimators),
                *("" if (p := r.pct(n)) is None else f"{p:.4f}" for n in c.estimators),
            ]
        )
