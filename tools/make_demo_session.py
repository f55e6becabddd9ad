"""Generate ctxviewer's bundled demo session: ``resources/demo-session.jsonl.xz``.

A fictional but plausible recording (docs/recording-format.md) of a developer
working with a coding agent on "shelfwise", a small FastAPI service: add
per-API-key rate limiting, with tests, replay last night's incident log
against it, then open a pull request. Everything in here (system prompt,
tool descriptions, memory files, source code, logs, conversation) was written
for this demo.

What the session contains, so that every view of ctxviewer has something to
show:

- ~50 main requests (Claude Code-like: 3 system blocks, 15 built-in tools, a
  ``Skill`` tool, two MCP servers ``github`` and ``postgres``), growing from
  ~18k to ~150k prompt tokens, then ONE compaction (a summary call, then the
  history replaced by a summary message), then growing again;
- two memory files in a ``<system-reminder>`` of the first user message, a
  skills listing in a mid-conversation ``system`` message, one skill body
  loaded through the Skill tool, system reminders, thinking blocks, one
  image, pytest failures then passes, a git diff, grep output, log reads;
- one ``Task`` sub-agent (an explorer with its own, shorter system prompt and
  a read-only tool set) making 6 requests;
- auxiliary calls: topic/title detection with a Haiku model (no tools) and
  the compaction summary call (no tools).

Usage numbers are computed, not invented: the prompt of every request is
counted with tiktoken cl100k on the JSON of system + tools + messages, times
1.08 (Claude's tokenizer counts a little more), and split into prompt-cache
fields the way Claude Code's usage looks (the previous request's prompt is
read from cache, the new tail is written to it, 1-10 uncached tokens).

Deterministic: a fixed random seed, fixed clock, no network.

The texts are files under ``tools/demo_session/data/``, the code that puts
them together is the ``demo_session`` package beside this script.
tests/core/test_demo_regeneration.py checks that this script gives the bundled
file byte for byte.

    python tools/make_demo_session.py [--out resources/demo-session.jsonl.xz]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from demo_session.story import build  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        default=str(ROOT / "resources" / "demo-session.jsonl.xz"),
        help="where to write (.xz, .gz or plain JSONL); default: the bundled demo",
    )
    args = parser.parse_args()
    rec = build()
    size = rec.write(Path(args.out))
    print(f"wrote {args.out}: {rec.count} exchanges, {size:,} bytes")


if __name__ == "__main__":
    main()
