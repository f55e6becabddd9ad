"""``ctxviewer tail``: follow a session log that is still being written.

Prints the requests already in the file (unless ``--new-only``), then one
line per new request as it appears, flushed at once so pipes see it live.
A request re-read with a different prompt size (a streamed duplicate, a
call released by its reader) is printed again, marked ``updated``.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import orjson

from ctxviewer.analysis.analysis import Analysis
from ctxviewer.analysis.breakdown import infer_overhead
from ctxviewer.analysis.thresholds import Thresholds, tier
from ctxviewer.analysis.timeline import estimate_request
from ctxviewer.analysis.tokens.estimators import for_session, get_estimator
from ctxviewer.commands.common import (
    UsageError,
    add_estimator_argument,
    add_file_argument,
    add_json_argument,
    add_policy_argument,
    add_window_argument,
)
from ctxviewer.fmt import plural
from ctxviewer.ingest.follow.follower import Follower, Update
from ctxviewer.model import AUXILIARY, SUBAGENT, Request, Session

HELP = "follow a session log as it is written: one line per new request"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_file_argument(p, sessions=False)  # it follows the file as written, all of it
    p.add_argument(
        "--interval",
        type=float,
        default=0.25,
        help="seconds between checks of the file (default 0.25)",
    )
    add_estimator_argument(p, "how tokens are counted for requests without API usage")
    add_policy_argument(p)
    add_window_argument(p)
    p.add_argument("--new-only", action="store_true", help="skip the requests already in the file")
    p.add_argument("--once", action="store_true", help="print what the file holds now and exit")
    add_json_argument(p, "print JSON lines, one object per line")


def run(args: argparse.Namespace) -> int:
    if args.interval <= 0:
        raise UsageError("--interval must be a positive number of seconds")
    if args.window is not None and args.window <= 0:
        raise UsageError("--window must be a positive number of tokens")
    follower = Follower(args.file, format=args.format)
    printer = TailPrinter(args.estimator, args.policy, args.window, args.json)
    if args.once:
        printer.show(follower.finish(), skip_existing=args.new_only)
        return 0
    with _stop_on_interrupt() as stop:
        return _follow(follower, printer, args.interval, args.new_only, stop)


def _follow(
    follower: Follower, printer: TailPrinter, interval: float, new_only: bool, stop: threading.Event
) -> int:
    try:
        printer.show(follower.poll(), skip_existing=new_only)
        waiting: str | None = None
        while not stop.is_set():
            if follower.session is None and follower.error != waiting:
                waiting = follower.error
                if waiting:
                    print(f"ctxviewer tail: waiting: {waiting}", file=sys.stderr, flush=True)
            if stop.wait(interval):
                break
            printer.show(follower.poll())
    except KeyboardInterrupt:
        pass
    return 0


@contextlib.contextmanager
def _stop_on_interrupt() -> Iterator[threading.Event]:
    """An event Ctrl+C (SIGINT) sets, besides raising ``KeyboardInterrupt``: an interrupt
    that lands where Python swallows exceptions (a finalizer, a collector callback) is
    printed as ignored and lost, and tail would go on; the loop sees the event instead.
    The handler that was there before comes back after."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop  # signals reach the main thread only: nothing to install
        return

    def interrupted(_signum: int, _frame: object) -> None:
        stop.set()
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGINT, interrupted)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, before)


class TailPrinter:
    """Turns ``Update``s into lines (text or JSON), keeping what was printed."""

    def __init__(self, estimator: str, policy: str, window: int | None, as_json: bool) -> None:
        self.estimator = estimator  # counts cached with the session followed (for_session)
        self.policy = policy
        self.window = window
        self.as_json = as_json
        self.session: Session | None = None
        self.printed: dict[int, int] = {}  # index -> prompt tokens last printed
        self._thresholds: dict[int, Thresholds] = {}
        self._current: Analysis | None = None
        self._agent_shown: str | None = None  # the agent line printed for this session
        self._analysis_key: tuple[int, int] | None = None
        self._inferred: dict[tuple[str, str | None], int | None] = {}

    def show(self, up: Update, skip_existing: bool = False) -> None:
        """Print what ``up`` added or changed; ``skip_existing`` marks the
        requests of a session seen for the first time as printed (``--new-only``)."""
        s = up.session
        todo = set(up.new) | set(up.changed)
        if up.reloaded or (s is not None and s is not self.session):
            if up.reloaded:
                self._emit_reload(s)
            self.session, self.printed = s, {}
            self._inferred.clear()
            if s is None:
                return
            self._emit_header(s)
            if skip_existing:
                self.printed = {i: self._prompt(r)[0] for i, r in enumerate(s.requests)}
                return
            todo = set(range(len(s.requests)))
        if s is None:
            return
        if todo and self._agent_shown is None and s.requests:
            self._emit_agent(s)  # the first requests say which agent this is
        for i in sorted(todo):
            if i >= len(s.requests):
                continue
            tokens = self._prompt(s.requests[i])[0]
            if i in self.printed and self.printed[i] == tokens:
                continue
            self._emit_request(s, i, updated=i in self.printed)
            self.printed[i] = tokens

    # -- numbers --------------------------------------------------------------

    def _analysis(self, s: Session) -> Analysis:
        """The agent's window and thresholds for the session as it is now (re-derived as
        it grows: the agent is recognised from its first requests)."""
        key = (id(s), len(s.requests))
        if self._analysis_key != key or self._current is None:
            self._current = Analysis(s, self.estimator, self.policy, self.window)
            self._analysis_key = key
            self._thresholds.clear()
        return self._current

    def _thresholds_for(self, s: Session, req: Request) -> Thresholds:
        a = self._analysis(s)
        w = a.window_of(req.model or s.model)
        if w.tokens not in self._thresholds:
            self._thresholds[w.tokens] = a.thresholds_for(w, req.model or s.model)
        return self._thresholds[w.tokens]

    def _prompt(self, req: Request) -> tuple[int, bool]:
        """(prompt tokens, estimated): the API count, else the estimator's."""
        if req.usage is not None:
            return req.usage.prompt_tokens, False
        inferred = None
        if self.session is None:
            return estimate_request(req, get_estimator(self.estimator), None), True
        est = for_session(self.session, self.estimator)
        if not req.complete:
            key = (req.role, req.agent)
            if self._inferred.get(key) is None:
                self._inferred[key] = infer_overhead(self.session.requests, req, est)
            inferred = self._inferred[key]
        return estimate_request(req, est, inferred), True

    def _delta(self, s: Session, index: int, tokens: int) -> int | None:
        """Change from the previous request of the same role and agent."""
        req = s.requests[index]
        for prev in reversed(s.requests[:index]):
            if prev.role == req.role and prev.agent == req.agent:
                return tokens - self._prompt(prev)[0]
        return None

    def row(self, s: Session, index: int) -> dict[str, Any]:
        req = s.requests[index]
        tokens, estimated = self._prompt(req)
        return {
            "index": index,
            "timestamp": req.timestamp,
            "model": req.model,
            "prompt_tokens": tokens,
            "estimated": estimated,
            "api_prompt_tokens": req.api_prompt_tokens,
            "output_tokens": req.usage.output_tokens if req.usage is not None else None,
            "tier": tier(tokens, self._thresholds_for(s, req)),
            "delta": self._delta(s, index, tokens),
            "role": req.role,
            "sidechain": req.sidechain,
            "agent": req.agent,
            "events": [e.kind for e in req.events],
        }

    # -- output ---------------------------------------------------------------

    def _emit_agent(self, s: Session) -> None:
        """The agent, its window and policy, once its first requests name it."""
        a = self._analysis(s)
        self._agent_shown = a.identity.label
        t = a.thresholds
        if self.as_json:
            _write_json(
                {
                    "type": "agent",
                    "agent": a.identity.profile.id,
                    "label": a.identity.label,
                    "window": a.window,
                    "window_source": a.window_source,
                    "policy_label": a.policy_label,
                    "rules_note": a.identity.rules_note,
                    "thresholds": t.as_dict(),
                }
            )
            return
        _write(
            f"-- {a.identity.label} ({a.identity.evidence}): window {a.window:,} "
            f"({a.window_source}), {a.policy_label}: warn {t.warn:,} auto {t.auto:,} "
            f"hard {t.hard:,}" + _noted(a.identity.rules_note)
        )

    def _emit_header(self, s: Session) -> None:
        self._agent_shown = a_label = None
        if not s.requests:  # nothing says yet which agent writes this file
            if self.as_json:
                _write_json({"type": "start", "path": s.path, "format": s.format, "requests": 0})
            else:
                _write(f"{s.path}  [{s.format}]  0 requests (the agent shows with its first)")
            return
        model = s.model
        a = self._analysis(s)
        self._agent_shown = a_label = a.identity.label
        window, t = a.window, a.thresholds
        if self.as_json:
            _write_json(
                {
                    "type": "start",
                    "path": s.path,
                    "format": s.format,
                    "model": model,
                    "agent": a.identity.profile.id,
                    "window": window,
                    "window_source": a.window_source,
                    "policy": self.policy,
                    "policy_label": a.policy_label,
                    "thresholds": t.as_dict(),
                    "rules_note": a.identity.rules_note,
                    "requests": len(s.requests),
                }
            )
            return
        _write(
            f"{s.path}  [{s.format}]  {plural(len(s.requests), 'request')}  {a_label}  "
            f"model {model or '?'}  window {window:,} ({a.window_source})  "
            f"policy {a.policy_label} (warn {t.warn:,} auto {t.auto:,} hard {t.hard:,})"
            + _noted(a.identity.rules_note)
        )

    def _emit_reload(self, s: Session | None) -> None:
        n = len(s.requests) if s is not None else 0
        if self.as_json:
            _write_json(
                {
                    "type": "reload",
                    "path": s.path if s else None,
                    "format": s.format if s else None,
                    "requests": n,
                }
            )
        else:
            _write(f"-- reloaded (file truncated or replaced): {plural(n, 'request')}")

    def _emit_request(self, s: Session, index: int, updated: bool) -> None:
        row = self.row(s, index)
        if self.as_json:
            _write_json({"type": "request", "update": "changed" if updated else "new", **row})
            return
        req = s.requests[index]
        tokens = f"{'~' if row['estimated'] else ''}{row['prompt_tokens']:,}"
        delta = f"{row['delta']:+,}" if row["delta"] is not None else ""
        events = "  ".join(_event_text(e.kind, e.pre_tokens) for e in req.events)
        line = (
            f"{index:>5}  {_clock(req.timestamp)}  {(req.model or '?')[:28]:<28} "
            f"{tokens:>10}  {row['tier']:<4} {delta:>9}  {_role(req)}"
        )
        if events:
            line += f"  [{events}]"
        if updated:
            line += "  (updated)"
        _write(line)


def _role(req: Request) -> str:
    if req.role == SUBAGENT:
        return f"sub {req.agent[:12]}" if req.agent else "sub"
    if req.role == AUXILIARY:
        return "aux"
    return "main sidechain" if req.sidechain else "main"


def _event_text(kind: str, pre_tokens: int | None) -> str:
    return f"{kind} (from {pre_tokens:,})" if pre_tokens else kind


def _clock(ts: str | None) -> str:
    """An ISO timestamp as local wall-clock time (HH:MM:SS)."""
    if not ts:
        return "--:--:--"
    try:
        when = datetime.fromisoformat(ts)
    except ValueError:
        return ts[11:19] or ts[:8]
    if when.tzinfo is not None:
        when = when.astimezone()
    return when.strftime("%H:%M:%S")


def _noted(note: str | None) -> str:
    """A note to end a header line with ("" when there is none)."""
    return f"  ({note})" if note else ""


def _write(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _write_json(value: dict[str, Any]) -> None:
    _write(orjson.dumps(value).decode())
