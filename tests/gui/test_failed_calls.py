"""A call that got no answer (the upstream hung up, a 5xx) shows as a failure: in the
request list, as a mark on the timeline but no point of its curves, and in the bar."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

anthropic = pytest.importorskip("anthropic")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "proxy"))
from proxy_fakes import API_KEY, FakeUpstream  # noqa: E402

from ctxviewer.proxy import ProxyThread  # noqa: E402


@pytest.fixture
def recording(tmp_path: Path) -> str:
    """Four calls through the real proxy; the third one's upstream hangs up unanswered."""
    upstream = FakeUpstream()
    upstream.server.start()
    out = tmp_path / "rec.jsonl"
    proxy = ProxyThread(port=0, out=out, upstream=upstream.url, openai_upstream=upstream.url)
    try:
        proxy.start()
        with anthropic.Anthropic(base_url=proxy.url, api_key=API_KEY, max_retries=0) as c:
            for n, mode in enumerate(["", "", "close", ""]):
                try:
                    c.messages.create(
                        model="claude-test-1",
                        max_tokens=16,
                        messages=[{"role": "user", "content": f"call {n}"}],
                        extra_headers={"x-fake-mode": mode},
                    )
                except anthropic.APIError:
                    assert mode == "close"
        assert proxy.wait_for_records(4, 10)
    finally:
        proxy.stop()
        upstream.server.stop()
    return str(out)


def test_a_failed_call_is_shown_as_a_failure(qtbot, window, open_and_wait, recording) -> None:
    from ctxviewer.analysis.timeline_view.series import event_marks
    from ctxviewer.gui.session.request_model import COL_PROMPT

    a = open_and_wait(window, recording)
    failed = [r.index for r in a.session.requests if r.failure]
    assert failed == [2] and "upstream_reset" in a.session.requests[2].failure

    from PySide6.QtCore import Qt

    model = window.requests.request_model
    row = next(r for r in range(model.rowCount()) if model.index(r, 0).data() == "2")
    assert model.index(row, COL_PROMPT).data() == "failed"
    assert "failed: upstream_reset" in model.index(row, COL_PROMPT).data(
        Qt.ItemDataRole.ToolTipRole
    )

    plot = window.timeline.plot
    data = plot.data
    pos = list(data.main.index).index(2)
    assert np.isnan(data.estimate[pos]) and np.isnan(data.api[pos])
    assert np.isnan(data.main.y[pos])  # no hover point, no curve vertex
    assert not np.isnan(data.estimate[pos + 1])
    marks = [m for m in event_marks(plot.points, data, plot.events) if m.kind == "failed"]
    assert [m.index for m in marks] == [2] and "upstream_reset" in marks[0].label()

    window.state.select_request(2)
    qtbot.waitUntil(
        lambda: window.state.breakdown is not None and window.state.breakdown.request == 2
    )
    # the prompt the agent sent, sized from the last API count (the model never read it)
    assert window.state.breakdown.total_basis == "estimate"
    assert sum(s.tokens for s in window.bar_panel.bar.segments) == 200_000
    headline = window.bar_panel.headline.text()
    assert "Failed call" in headline and "estimated:&nbsp;no&nbsp;API&nbsp;usage" in headline
    window.bar_panel.bar.grab().save(str(Path(recording).with_suffix(".png")))


@pytest.fixture
def rate_limited(tmp_path: Path) -> str:
    """Five calls through the real proxy; the second is refused with a 429 and the
    fourth with a 500, each answered with Anthropic's JSON error body."""
    upstream = FakeUpstream()
    upstream.server.start()
    out = tmp_path / "limited.jsonl"
    proxy = ProxyThread(port=0, out=out, upstream=upstream.url, openai_upstream=upstream.url)
    try:
        proxy.start()
        with anthropic.Anthropic(base_url=proxy.url, api_key=API_KEY, max_retries=0) as c:
            for n, mode in enumerate(["", "429", "", "500", ""]):
                try:
                    c.messages.create(
                        model="claude-test-1",
                        max_tokens=16,
                        messages=[{"role": "user", "content": f"call {n}"}],
                        extra_headers={"x-fake-mode": mode},
                    )
                except anthropic.APIStatusError as e:
                    assert str(e.status_code) == mode
        assert proxy.wait_for_records(5, 10)
    finally:
        proxy.stop()
        upstream.server.stop()
    return str(out)


def test_json_error_bodies_leave_the_timeline_whole(
    qtbot, window, open_and_wait, rate_limited
) -> None:
    """A failed call's label holds its JSON error body, braces and all: pyqtgraph's line
    labels format their text with ``str.format``, which raised on the braces, and the
    timeline lost its threshold lines, its title and its marks."""
    from ctxviewer.analysis.timeline_view.series import event_marks

    a = open_and_wait(window, rate_limited)
    failed = {r.index: r.failure for r in a.session.requests if r.failure}
    assert sorted(failed) == [1, 3] and all("{" in f for f in failed.values())
    plot = window.timeline.plot
    window.tabs.setCurrentWidget(window.timeline)
    window.resize(1200, 800)
    window.show()
    qtbot.waitExposed(window)
    marks = [m for m in event_marks(plot.points, plot.data, plot.events) if m.kind == "failed"]
    assert [m.index for m in marks] == [1, 3]
    labels = [ln.label.toPlainText() for ln in plot.event_lines]
    assert sum("HTTP 429: {'type'" in t for t in labels) == 1  # the braces as they are
    shown = {k: ln for k, ln in plot.threshold_lines.items() if ln.isVisible()}
    assert {"warn", "auto"} <= set(shown)
    assert all(str(f"{ln.value():,.0f}") in ln.label.toPlainText() for ln in shown.values())
    assert plot.whatif_label.text  # the title: what the policy would have done
    assert window.status.info.text() != "No session"
    plot.grab().save(str(Path(rate_limited).with_suffix(".png")))
