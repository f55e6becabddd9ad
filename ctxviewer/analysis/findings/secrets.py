"""Secrets in the context: a key or token in a message, a tool result or the system prompt
was sent to the model provider with every request that carried it.

Looked for, as agentsview's secret scan does over its archive: Anthropic, OpenAI,
Google, GitHub and AWS keys, Slack tokens, an ``Authorization: Bearer`` header and a
private key block. A match that reads as a placeholder (``REDACTED``, ``EXAMPLE``,
``xxxx``, ``your…``) is no secret. The finding shows the secret redacted (its first
characters and length) and where it came in: whose message, which tool's result,
which request and message.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ctxviewer.analysis.agents.controls import Controls
from ctxviewer.analysis.findings.content import Messages
from ctxviewer.analysis.findings.model import ERROR, Finding
from ctxviewer.fmt import plural
from ctxviewer.model import TOOL_RESULT, TOOL_USE, Block, Message, Request

# (label, pattern): the first that matches names the secret
PATTERNS: tuple[tuple[str, str], ...] = (
    (
        "private key",
        r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY"
        r"(?: BLOCK)?-----",
    ),
    ("Anthropic API key", r"\bsk-ant-(?:api|admin|oat)\d\d-[A-Za-z0-9_-]{20,}"),
    (
        "OpenAI API key",
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}T3BlbkFJ"
        r"[A-Za-z0-9_-]{20,}|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}",
    ),
    ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
    ("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})\b"),
    ("AWS access key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("AWS secret key", r"(?i:aws_secret_access_key)\s*[=:]\s*[\"']?[A-Za-z0-9/+]{40}\b"),
    ("Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{20,}"),
    (
        "Bearer token",
        r"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:bearer)\s+"
        r"[A-Za-z0-9._~+/=-]{20,}",
    ),
)
_ANY = re.compile("|".join(f"(?P<p{i}>{p})" for i, (_, p) in enumerate(PATTERNS)))
_PLACEHOLDER = re.compile(
    r"(?i)redacted|example|x{4,}|\*{4}|your[_-]|<[a-z_-]+>|\.\.\.|dummy|"
    r"placeholder|fake|test[_-]?key"
)
ACTION = (
    "Revoke the key and issue a new one: it went to the model provider with every "
    "request that carried it (and into the agent's log). Keep secrets out of what the "
    "agent reads: files it is denied (.env in the agent's ignore or deny rules), "
    "environment variables it does not print, a secret manager."
)


def redact(secret: str) -> str:
    """The first characters of ``secret`` and its length, never the rest."""
    if secret.startswith("-----BEGIN"):
        return secret.split("-----")[1].strip()
    keep = 8 if len(secret) > 24 else 4
    return f"{secret[:keep]}… ({len(secret)} characters)"


def _where(b: Block, m: Message, names: dict[str, str]) -> str:
    if b.kind == TOOL_RESULT:
        return f"the result of {b.name or names.get(b.ref or '', '') or 'a tool'}"
    if b.kind == TOOL_USE:
        return f"a {b.name or 'tool'} call"
    if m.role == "assistant":
        return "the assistant's text"
    if m.role in ("user", "human"):
        return "a user message"
    return f"a {m.role} message"


def find_secrets(text: str) -> list[tuple[str, str]]:
    """(label, secret) of each secret in ``text``, placeholders left out."""
    out = []
    for match in _ANY.finditer(text):
        secret = match.group(0)
        if _PLACEHOLDER.search(secret):
            continue
        label = PATTERNS[int((match.lastgroup or "p0")[1:])][0]
        out.append((label, secret))
    return out


def secret_findings(msgs: Messages, requests: Sequence[Request], ctl: Controls) -> list[Finding]:
    """One finding per secret, at the first place it came in."""
    found: dict[str, Finding] = {}
    names: dict[str, str] = {}
    seen_system: set[int] = set()
    for r in requests:  # the system prompt (memory files are often in it)
        if id(r.system) in seen_system:
            continue
        seen_system.add(id(r.system))
        for b in r.system:
            for label, secret in find_secrets(b.text):
                if secret not in found:
                    carriers = tuple(
                        x.index
                        for x in requests
                        if x.system is r.system or any(c is b for c in x.system)
                    )
                    found[secret] = _finding(
                        label, secret, "the system prompt", carriers, r.index, (), ctl
                    )
    for seen in msgs.seen:
        m = seen.message
        for b in m.blocks:
            if b.kind == TOOL_USE and b.ref and b.name:
                names[b.ref] = b.name
            for label, secret in find_secrets(b.text):
                if secret in found:
                    continue
                carriers = tuple(x.index for x in msgs.carriers(m))
                found[secret] = _finding(
                    label,
                    secret,
                    _where(b, m, names),
                    carriers,
                    seen.request,
                    (seen.position,),
                    ctl,
                )
    return list(found.values())


def _finding(
    label: str,
    secret: str,
    where: str,
    carriers: tuple[int, ...],
    first: int,
    positions: tuple[int, ...],
    ctl: Controls,
) -> Finding:
    del ctl  # every agent: the same step (revoke, keep it out)
    shown = redact(secret)
    at = f"message {positions[0]} of request {first}" if positions else f"request {first}"
    return Finding(
        "secret-in-context",
        ERROR,
        f"A {label} was sent to the model provider: {shown}",
        (shown,),
        carriers,
        None,
        None,
        None,
        ACTION,
        f"In {where} ({at}), carried by {plural(len(carriers), 'request')}",
        category="messages",
        messages=positions,
        focus=first,
    )
