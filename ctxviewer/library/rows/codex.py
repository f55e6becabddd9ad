"""The requests of a Codex rollout, for its row: ``ingest.codex.rollout``'s own parser,
told to leave the messages out (``messages`` False).

Every line is parsed: a row needs the order of the conversation's items (where a call's
output starts, whether a compaction call ran on the history as it was) and Codex's own
estimate of the items before a compaction, as the full read has them. What is left out
is what costs: the messages of every item and call (a tool's output is made into one
only when asked whether it holds memory or a compaction summary), their merging and
interning, the notes. The parser says where its rows could differ from a full read's
(``inexact``): then this declines, as it does for a record the parser trips on.
"""

from __future__ import annotations

from collections.abc import Iterator

import orjson

from ctxviewer.ingest.base import Item, new_parser
from ctxviewer.ingest.codex.rollout import READER
from ctxviewer.ingest.loader import BOM, iter_lines
from ctxviewer.library.rows import Declined, parse


def items(path: str) -> Iterator[Item]:
    parser = new_parser(READER, path, messages=False)
    for lineno, raw, _ in iter_lines(path):
        if not raw or raw.isspace():
            continue
        body = raw if lineno > 1 else raw.removeprefix(BOM)
        try:
            record = orjson.loads(body)
        except orjson.JSONDecodeError:
            record = parse(body)
            if record is None:
                continue  # a skipped record, which the full read counts
        try:
            found = parser.feed(lineno, record)
        except Exception as e:  # noqa: BLE001 - the full read skips it: read in full
            raise Declined(f"line {lineno}: {type(e).__name__}: {e}") from None
        yield from found
    yield from parser.finish()
    inexact: str | None = getattr(parser, "inexact", None)  # the Codex parser's own
    if inexact:
        raise Declined(inexact)
