"""An OpenTelemetry capture of Claude Code (tests/data/otel) in the window: the requests,
the inferred part on the bar, and the reader's note on what the log lost."""

from __future__ import annotations

from pathlib import Path

from ctxviewer.ingest.base import MESSAGES_CUT_NOTE

DATA = Path(__file__).resolve().parents[1] / "data" / "otel"


def test_a_cut_capture_opens_with_what_was_lost(window, open_and_wait, tmp_path) -> None:
    analysis = open_and_wait(window, str(DATA / "big-inline.jsonl.xz"))
    assert analysis.session.format == "otel" and len(analysis.session.requests) == 5
    window.state.select_request(4)
    bar = window.bar_panel
    names = [seg.name for seg in bar.bar.segments]
    assert "unrecorded_overhead" in names and "messages" in names
    assert any("System prompt + tools (not recorded)" in lab.text() for lab in bar.legend_labels)
    assert MESSAGES_CUT_NOTE in bar.notes.toolTip()  # the reader's note on the cut
    window.resize(1024, 700)
    assert window.grab().save(str(tmp_path / "otel.png"))
