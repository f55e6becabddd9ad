"""The request and response bodies Claude Code logs over OpenTelemetry.

``OTEL_LOG_RAW_API_BODIES`` decides how a body reaches the log:

- ``1``: inline, in the event's ``body`` attribute, as the JSON text of the
  body. A body longer than 61,440 characters (60 KB) is cut there and ends with
  ``TRUNCATION_MARK``; ``body_truncated`` is ``"true"`` and ``body_length``
  gives the whole body's length in characters. The body's members come in the
  order ``model``, ``messages``, ``system``, ``tools``, ``betas``, ``metadata``,
  ``max_tokens``...: a cut keeps the start of that list (``json_prefix``).
- ``file:<dir>``: the event carries ``body_ref``, the path of a file holding
  the whole body (``<dir>/<uuid>.request.json``, ``<dir>/<request id>.response.json``)
  and ``body_length`` in bytes. The files stay on the machine Claude Code ran
  on: a file that is not there (any more, or not on this machine) is looked
  for beside the log too, then reported missing.

The logged request body is the body sent plus a ``betas`` list (what went in
the ``anthropic-beta`` header), with the text of earlier answers' thinking
blocks replaced by ``<REDACTED>``.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Any

import orjson

from ctxviewer.ingest.base import MESSAGES_CUT_NOTE, lenient_loads
from ctxviewer.ingest.otel.json_prefix import salvage
from ctxviewer.ingest.otel.records import LogEvent
from ctxviewer.special_files import pseudo_root, unusable_name

TRUNCATION_MARK = "\n\n[TRUNCATED - Content exceeds 60KB limit]"
INLINE_LIMIT = 61_440  # characters Claude Code keeps of an inline body
REDACTED = "<REDACTED>"
MAX_BODY_FILE = 512 * 1024 * 1024  # a body file larger than this is damage, not a request


@dataclass
class LoggedBody:
    """A body event's body, as far as the log (or its file) holds it."""

    text: str | None  # the JSON text (whole or cut); None when there is none to read
    length: int | None  # the whole body's size as logged (``body_length``)
    truncated: bool = False  # cut at ``INLINE_LIMIT``
    ref: str | None = None  # ``body_ref``: the file the body was written to
    missing: str | None = None  # why ``ref`` could not be read
    fingerprint: int | None = None  # the same body logged twice (a retried call)


@dataclass
class ParsedBody:
    """A request body: its whole members, and what the log lost of it."""

    fields: dict[str, Any]
    whole: bool
    notes: list[str] = field(default_factory=list)
    cut: str | None = None  # the member the cut falls in


def logged_body(event: LogEvent, base_dir: str | None) -> LoggedBody:
    """The body of an ``api_request_body`` or ``api_response_body`` event."""
    length = event.number("body_length")
    ref = event.text("body_ref")
    if ref is not None:
        text, missing = _read_ref(ref, base_dir)
        return LoggedBody(text, length, ref=ref, missing=missing, fingerprint=_fingerprint(text))
    text = event.text("body")
    if text is None:
        return LoggedBody(None, length)
    truncated = str(event.attrs.get("body_truncated")).lower() == "true" or text.endswith(
        TRUNCATION_MARK
    )
    if truncated:
        text = text.removesuffix(TRUNCATION_MARK)
    return LoggedBody(text, length, truncated=truncated, fingerprint=_fingerprint(text))


def _fingerprint(text: str | None) -> int | None:
    """Equal for the same body logged again, streamed or not (a retry, a fallback)."""
    if text is None:
        return None
    for tail in (',"stream":true}', ',"stream":false}'):
        if text.endswith(tail):
            text = text[: -len(tail)] + "}"
            break
    return hash(text)  # compared within one reading only


def ref_candidates(ref: str, base_dir: str | None) -> list[str]:
    """Where a body file may be: where it was written, else beside the log (in a folder
    of the same name, or right there)."""
    out = [ref]
    if base_dir:
        name = os.path.basename(ref)
        folder = os.path.basename(os.path.dirname(ref))
        if folder:
            out.append(os.path.join(base_dir, folder, name))
        out.append(os.path.join(base_dir, name))
    return list(dict.fromkeys(out))


def _read_ref(ref: str, base_dir: str | None) -> tuple[str | None, str | None]:
    """The text of a body file, or (None, why not)."""
    bad = unusable_name(ref)
    if bad is not None:
        return None, f"the body file {ref!r} is no file name ({bad}): not read"
    why = f"the body file {ref} is missing"
    for path in ref_candidates(ref, base_dir):
        if pseudo_root(path) is not None:
            return None, f"the body file {ref} is in {pseudo_root(path)}: not read"
        try:
            st = os.stat(path)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            return None, f"the body file {ref} is not a regular file: not read"
        if st.st_size > MAX_BODY_FILE:
            return None, f"the body file {ref} is {st.st_size:,} bytes: not read"
        try:
            with open(path, "rb") as f:
                return f.read().decode("utf-8", errors="surrogatepass"), None
        except (OSError, UnicodeDecodeError) as e:
            why = f"the body file {ref} cannot be read ({getattr(e, 'strerror', None) or e})"
    return None, why


def _loads(text: str) -> Any:
    """JSON text -> value; ``ValueError`` when it is not JSON (or nests past Python's limit)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        try:
            return lenient_loads(text.encode("utf-8", "surrogatepass"))
        except RecursionError:
            raise ValueError("nested too deep") from None


def parse_request(body: LoggedBody) -> ParsedBody | None:
    """The members of a logged request body; None when there is no JSON object to read."""
    if body.text is None:
        return None
    if not body.truncated:
        try:
            value = _loads(body.text)
        except ValueError:
            return None
        return ParsedBody(value, True) if isinstance(value, dict) else None
    part = salvage(body.text)
    if part.cut is None:  # marked as cut, yet whole
        return ParsedBody(part.fields, True)
    if part.cut == "" and not part.fields:
        return None
    fields = part.fields
    units = len(body.text.encode("utf-16-le", "surrogatepass")) // 2  # as JavaScript counts
    kept = f"{units:,}" + (f" of {body.length:,}" if body.length else "")
    head = (
        f"request body logged inline and cut at {kept} characters (Claude Code keeps "
        f"{INLINE_LIMIT:,} of a body with OTEL_LOG_RAW_API_BODIES=1)"
    )
    if part.cut == "messages" or "messages" not in fields:
        msgs = fields.get("messages") if part.partial else None
        whole = len(msgs) if isinstance(msgs, list) else 0
        note = (
            f"{MESSAGES_CUT_NOTE}: {head}. {whole} messages are whole; the later "
            "messages, the system prompt, the tools and the rest are not in the log. "
            "The system prompt and tools are inferred from a request whose messages "
            "were whole, the lost messages from the API's count"
        )
        fields = {k: v for k, v in fields.items() if k in ("model", "messages")}
    elif part.cut == "system" or "system" not in fields:
        note = (
            f"{head}, inside the system prompt: the messages are whole; the system "
            "prompt, the tools and the rest are not in the log, their size is inferred "
            "from the API's count"
        )
        fields = {k: v for k, v in fields.items() if k in ("model", "messages")}
    else:
        tools = (
            f" ({part.kept} tools whole before the cut are left out: the list is incomplete)"
            if part.cut == "tools" and part.kept
            else ""
        )
        where = f"in `{part.cut}`" if part.cut else "after the system prompt"
        note = (
            f"{head}, {where}: the messages and the system prompt are whole; the tools"
            f"{tools} and the rest of the body are not in the log, their size is "
            "inferred from the API's count"
        )
        fields = {k: v for k, v in fields.items() if k in ("model", "messages", "system")}
    return ParsedBody(fields, False, [note], part.cut)


def parse_response(body: LoggedBody) -> dict[str, Any] | None:
    """A logged response body (the answer, with its usage), when it is whole."""
    if body.text is None or body.truncated:
        return None
    try:
        value = _loads(body.text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def redacted_thinking(fields: dict[str, Any]) -> bool:
    """True when the body's earlier answers carry thinking logged as ``<REDACTED>``."""
    for m in fields.get("messages") or ():
        if not isinstance(m, dict) or m.get("role") != "assistant":
            continue
        content = m.get("content")
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and REDACTED in (block.get("thinking"), block.get("data")):
                return True
    return False
