"""``ctxviewer proxy``: record an agent's API calls through a local forwarding proxy."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Any

from ctxviewer.commands.common import (
    UsageError,
    add_client_timeout_argument,
    port_number,
    seconds,
)
from ctxviewer.commands.serving import serve
from ctxviewer.fmt import plural
from ctxviewer.proxy.recorder import default_recording_name
from ctxviewer.proxy.redact import redact_text
from ctxviewer.proxy.rewrite import Rewriter
from ctxviewer.proxy.rewrite_plan import REWRITE_STRATEGIES
from ctxviewer.proxy.routes import (
    ANTHROPIC_UPSTREAM,
    GEMINI_UPSTREAM,
    OPENAI_UPSTREAM,
    upstream_base,
)
from ctxviewer.proxy.server import (
    CLIENT_TIMEOUT,
    DEFAULT_PORT,
    DEFAULT_TIMEOUT,
    ProxyConfig,
    ProxyServer,
    is_loopback,
)

HELP = "record API calls: a local proxy that forwards to the real API and writes JSONL"


def _url(text: str) -> str:
    try:
        return upstream_base(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port",
        type=port_number,
        default=DEFAULT_PORT,
        help=f"port to listen on (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only)",
    )
    parser.add_argument(
        "--upstream",
        type=_url,
        default=ANTHROPIC_UPSTREAM,
        help=f"Anthropic API base URL (default {ANTHROPIC_UPSTREAM})",
    )
    parser.add_argument(
        "--openai-upstream",
        type=_url,
        default=OPENAI_UPSTREAM,
        help=f"OpenAI API base URL (default {OPENAI_UPSTREAM})",
    )
    parser.add_argument(
        "--gemini-upstream",
        type=_url,
        default=GEMINI_UPSTREAM,
        help=f"Gemini API base URL (default {GEMINI_UPSTREAM}); Gemini CLI "
        "reaches the proxy with GOOGLE_GEMINI_BASE_URL=http://HOST:PORT",
    )
    parser.add_argument(
        "--out",
        help="recording file, appended to when it is a ctxviewer "
        "recording (default "
        "./ctxviewer-recording-<timestamp>.jsonl)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="append to --out even when it is not a ctxviewer recording",
    )
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=DEFAULT_TIMEOUT,
        help=f"seconds of upstream silence before giving up (default {DEFAULT_TIMEOUT:g})",
    )
    add_client_timeout_argument(parser, CLIENT_TIMEOUT)
    parser.add_argument("--quiet", action="store_true", help="no line per exchange")
    rewrite = parser.add_argument_group(
        "rewriting (off unless --compact-at is given)",
        "compact each conversation once, on its first request whose prompt would exceed "
        "TOKENS, and send the same compacted history on every later request of it; the "
        "recording keeps both bodies; a rejected rewrite is resent as sent, and rewriting "
        "stops for that conversation",
    )
    rewrite.add_argument(
        "--compact-at", type=_tokens, metavar="TOKENS", help="prompt size that triggers compaction"
    )
    rewrite.add_argument(
        "--strategy",
        default="qwen",
        choices=REWRITE_STRATEGIES,
        help="qwen (summary + recent 30%%, default), shannon (primers + "
        "summary + recents), trim (drop old items), slim (shorten "
        "tool results)",
    )
    rewrite.add_argument(
        "--summarizer",
        default="local",
        choices=("local", "anthropic"),
        help="who writes the summary: local (offline, default) or anthropic "
        "(ANTHROPIC_API_KEY; ANTHROPIC_BASE_URL, ANTHROPIC_MODEL)",
    )


def _tokens(text: str) -> int:
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of tokens: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of tokens, not {text}")
    return value


def _rewriter(args: argparse.Namespace) -> Rewriter | None:
    if args.compact_at is None:
        if args.strategy != "qwen" or args.summarizer != "local":
            raise UsageError("--strategy and --summarizer need --compact-at")
        return None
    summarizer = None
    if args.summarizer == "anthropic":
        from ctxviewer.analysis.compaction.summarize_anthropic import AnthropicSummarizer

        summarizer = AnthropicSummarizer()
    return Rewriter(
        compact_at=args.compact_at, strategy=args.strategy, summarizer=summarizer, on_event=_say
    )


def _say(message: str) -> None:
    with contextlib.suppress(OSError):
        print(redact_text(f"rewrite: {message}"), flush=True)


def run(args: argparse.Namespace) -> int:
    out = os.path.abspath(args.out or default_recording_name())
    if not os.path.isdir(os.path.dirname(out)):
        raise UsageError(f"no such directory for --out: {os.path.dirname(out)}")
    config = ProxyConfig(
        out=out,
        host=args.host,
        port=args.port,
        upstream=args.upstream,
        openai_upstream=args.openai_upstream,
        timeout=args.timeout,
        client_timeout=args.client_timeout,
        on_record=None if args.quiet else print_exchange,
        force=args.force,
        rewriter=_rewriter(args),
        gemini_upstream=args.gemini_upstream,
    )
    server = ProxyServer(config)
    serve(server, "the proxy", lambda: print_banner(server))
    rec = server.recorder
    print(f"stopped: {plural(rec.count, 'exchange')} recorded to {out}", flush=True)
    if rec.failure:
        print(
            f"the recording stopped early ({rec.failure}): {plural(rec.dropped, 'exchange')} "
            "forwarded but not recorded",
            file=sys.stderr,
            flush=True,
        )
        return 1
    return 0


def print_banner(server: ProxyServer) -> None:
    """Where the proxy listens and records, and the lines to paste into the agent's shell."""
    host = server.config.host
    lines = [
        f"ctxviewer proxy listening on {server.url}",
        f"recording to {server.recorder.path}",
        "point your agent at it (paste into its shell):",
        f"export ANTHROPIC_BASE_URL={server.url}",
        f"export OPENAI_BASE_URL={server.url}/v1",
        f"export GOOGLE_GEMINI_BASE_URL={server.url}",
        "Ctrl+C to stop.",
    ]
    rw = server.config.rewriter
    if rw is not None and rw.compact_at is not None:
        lines.insert(
            2,
            f"rewriting ON: each conversation is compacted ({rw.strategy}, "
            f"{rw.summarizer.name} summary) once its prompt exceeds "
            f"{rw.compact_at:,} tokens",
        )
    if not is_loopback(host):
        lines.insert(1, f"warning: listening on {host}: other machines can use your API keys")
    print("\n".join(lines), flush=True)


def print_exchange(record: dict[str, Any]) -> None:
    """One line per recorded exchange, for people watching the terminal."""
    response = record.get("response") or {}
    usage = record.get("usage") or {}
    body = (record.get("request") or {}).get("body")
    model = body.get("model", "") if isinstance(body, dict) else ""
    if not model and ":" in str(record.get("path", "")):  # Gemini: /v1beta/models/<model>:<method>
        model = str(record["path"]).rsplit("/", 1)[-1].split(":", 1)[0]
    total = (record.get("timing") or {}).get("total_ms") or 0
    parts = [
        record["id"],
        f"{record['api']:<22}",
        str(response.get("status", "---")),
        f"{total / 1000:6.1f}s",
        str(model),
    ]
    if usage:
        prompt = sum(
            usage.get(k, 0)
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        parts.append(f"prompt={prompt} out={usage.get('output_tokens', 0)}")
    rewrite = record.get("rewrite")
    if rewrite:
        parts.append(
            "REWRITTEN"
            if "upstream_body" in (record.get("request") or {})
            else f"not rewritten ({rewrite.get('fallback') or rewrite.get('note')})"
        )
    if record.get("error"):
        parts.append(f"ERROR {record['error']['kind']}: {record['error']['message']}")
    with contextlib.suppress(OSError):  # a closed terminal must not stop the recording
        print(redact_text("  ".join(parts)), flush=True)
