"""The estimators a comparison can score, and the counters that are not local.

Three kinds of name, each known here once for the CLI and the window:

- the local estimators of ``analysis.tokens.estimators`` (offline, counted per text);
- ``calibrated``: derived from a local one, fitted on the session's own
  requests (``analysis.tokens.calibrate``);
- ``anthropic``: the API's ``count_tokens``, which needs a key (or a base URL
  that holds one), costs a call per distinct body, and is counted up front by
  ``remote_counters`` before ``compare`` scores it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from ctxviewer.analysis.tokens import calibrate
from ctxviewer.analysis.tokens.estimators import names as local_names
from ctxviewer.errors import UsageError
from ctxviewer.model import Request, Session

if TYPE_CHECKING:
    from ctxviewer.analysis.tokens.counter import PromptCounter

ANTHROPIC = "anthropic"  # the count_tokens counter (analysis.tokens.anthropic)
REMOTE = (ANTHROPIC,)


def default_names() -> list[str]:
    """What a comparison shows unless told otherwise: every local estimator and
    ``calibrated`` (never a remote one: it needs a key and costs calls)."""
    return [*local_names(), calibrate.NAME]


def known_names() -> list[str]:
    return [*default_names(), *REMOTE]


def check_names(wanted: Iterable[str]) -> list[str]:
    """``wanted`` without repeats, in order; ``UsageError`` naming the unknown ones."""
    names = list(dict.fromkeys(n for n in wanted if n))
    known = known_names()
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise UsageError(
            f"unknown estimator {', '.join(unknown) or '(none)'} (known: {', '.join(known)})"
        )
    return names


def remote_available(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the ``anthropic`` counter can reach the API: a key, or a base URL (a proxy
    that holds the key)."""
    env = os.environ if environ is None else environ
    return bool(env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_BASE_URL"))


def count_targets(session: Session) -> list[Request]:
    """The requests a remote counter is asked about: complete ones with an API count."""
    return [r for r in session.requests if r.complete and r.api_prompt_tokens]


def remote_counters(
    session: Session,
    names: Sequence[str],
    *,
    request: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> dict[str, PromptCounter]:
    """The remote counters among ``names``, with every target already counted (progress
    and cancel between calls). ``request``: also count that request and its categories
    (the per-category table). Raises ``UsageError`` when the API is not configured."""
    if ANTHROPIC not in names:
        return {}
    from ctxviewer.analysis.tokens.anthropic import AnthropicCounter

    counter = AnthropicCounter.from_env()
    targets = count_targets(session)
    picked = session.requests[request] if request is not None else None
    if picked is not None:
        targets.append(picked)
    counter.prefetch(targets, progress=progress, categories=picked, cancelled=cancelled)
    return {ANTHROPIC: counter}
