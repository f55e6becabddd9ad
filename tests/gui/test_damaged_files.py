"""Damaged real logs opened in the window while a good session is open.

The damaged copies are built from corpus files at test time (as tools/fuzz_window.py
does at random): what can be read opens, what cannot says why in one line and the
open session stays.
"""

from __future__ import annotations

import gzip
import lzma
from pathlib import Path

from ctxviewer.ingest import load

CODEX = "codex/Mai0313__VibeCodingTracker__tests_fixtures_sessions_codex.jsonl"


def _compressed_cut(corpus: Path, tmp_path: Path, keep: float, kind: str) -> Path:
    data = (corpus / CODEX).read_bytes()
    packed = gzip.compress(data, mtime=0) if kind == "gz" else lzma.compress(data)
    path = tmp_path / f"cut-{kind}-{keep}.jsonl.{kind}"
    path.write_bytes(packed[: max(int(len(packed) * keep), 12)])
    return path


def test_a_cut_or_corrupt_compressed_log_opens_up_to_the_damage(
    qtbot, window, open_and_wait, corpus, tmp_path
):
    """The window's first view read the start of a compressed log in one read: a file
    cut short raised EOFError (gzip) or LZMAError (xz), and a dialog said 'internal
    error' where the command line read the file up to the damage."""
    corrupt = tmp_path / "corrupt.jsonl.xz"
    packed = bytearray(lzma.compress((corpus / CODEX).read_bytes()))
    packed[len(packed) * 3 // 5 : len(packed) * 3 // 5 + 16] = bytes(16)
    corrupt.write_bytes(bytes(packed))
    whole = len(load(str(corpus / CODEX)).requests)
    for path in (
        _compressed_cut(corpus, tmp_path, 0.5, "gz"),
        _compressed_cut(corpus, tmp_path, 0.5, "xz"),
        corrupt,
    ):
        expected = load(str(path))
        assert "the rest of it cannot be read" in expected.skipped[-1].reason
        a = open_and_wait(window, str(path))
        assert window.errors == []
        assert a.session.path == str(path)
        assert 0 < len(a.session.requests) == len(expected.requests) < whole
        assert len(a.session.skipped) == len(expected.skipped)


def test_unreadable_damage_says_why_and_keeps_the_open_session(
    qtbot, window, open_and_wait, trace_path, corpus, tmp_path
):
    open_and_wait(window, trace_path)
    good, segments = window.state.session, list(window.bar_panel.bar.segments)
    nuls = tmp_path / "nuls.jsonl"
    nuls.write_bytes(b"\0" * 4096)
    flipped = tmp_path / "flipped.jsonl.xz"
    packed = bytearray(lzma.compress((corpus / CODEX).read_bytes()))
    packed[6:40] = bytes(34)  # the stream's header is gone: nothing can be read
    flipped.write_bytes(bytes(packed))
    cases = [
        (_compressed_cut(corpus, tmp_path, 0.0, "xz"), "the compressed file ends before"),
        (_compressed_cut(corpus, tmp_path, 0.0, "gz"), "the compressed file ends before"),
        (flipped, "the compressed file is damaged before"),
        (nuls, "is a binary file, not a session log"),
    ]
    for path, why in cases:
        with qtbot.waitSignal(window.loader.failed, timeout=10000):
            window.open_file(str(path))
        title, message = window.errors[-1]
        assert (title, why in message, "\n" in message) == ("Cannot open file", True, False)
        assert "internal error" not in message
        assert window.state.session is good
    qtbot.waitUntil(lambda: not window.loader.is_busy(), timeout=10000)
    assert window.bar_panel.bar.segments == segments
