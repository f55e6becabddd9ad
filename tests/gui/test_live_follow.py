"""Following a growing file: new requests reach the navigator, bar and timeline."""

from __future__ import annotations

from pathlib import Path

from live_helpers import lines_of, panel_of, requests_in, shown


def _views_show(window, n: int) -> bool:
    a = window.state.analysis
    return (
        a is not None
        and shown(window) == n
        and len(a.timeline) == n
        and (not window.timeline.available or len(window.timeline.plot.points) == n)
    )


def test_follow_appends_in_chunks_tail_mode_and_truncation(
    qtbot, window, transcript_path, tmp_path: Path
) -> None:
    lines = lines_of(transcript_path)
    live = tmp_path / "live.jsonl"
    live.write_bytes(b"".join(lines[:300]))
    panel = panel_of(window)
    panel.follow_file(str(live))
    n1 = requests_in(live)
    assert n1 > 5
    qtbot.waitUntil(lambda: _views_show(window, n1), timeout=5000)
    assert panel.live_label.isVisible() or not window.isVisible()
    assert not panel.live_label.isHidden() and panel.follow.isChecked()
    assert window.state.index == window.state.analysis.resolve_index("last")

    # more lines and half of the next one: the half line waits, it is no error
    half = lines[600][: len(lines[600]) // 2]
    with live.open("ab") as f:
        f.write(b"".join(lines[300:600]) + half)
    n2 = requests_in(live)
    assert n2 > n1
    qtbot.waitUntil(lambda: _views_show(window, n2), timeout=3000)
    last = window.state.analysis.resolve_index("last")
    assert window.state.index == last  # tail mode: the newest request is shown
    assert window.state.breakdown.request == last
    assert f"Request&nbsp;{last}&nbsp;" in window.bar_panel.headline.text()  # the bar's heading
    assert window.requests.current_row() == last
    assert not any(s.reason == "not valid JSON" for s in window.state.session.skipped)

    # the user looks at an old request: it stays selected while the file grows
    window.state.select_request(2)
    with live.open("ab") as f:
        f.write(lines[600][len(half) :] + b"".join(lines[601:900]))
    n3 = requests_in(live)
    assert n3 > n2
    qtbot.waitUntil(lambda: _views_show(window, n3), timeout=3000)
    assert window.state.index == 2
    assert window.requests.current_row() == 2

    # truncated and rewritten: read again from the start
    session_before = window.state.session
    live.write_bytes(b"".join(lines[:150]))
    n4 = requests_in(live)
    assert n4 < n3
    qtbot.waitUntil(lambda: _views_show(window, n4), timeout=3000)
    assert window.state.session is not session_before
    assert panel.follower.is_following()


def test_follow_toggle_on_the_open_file(
    qtbot, window, open_and_wait, trace_path, tmp_path: Path
) -> None:
    lines = lines_of(trace_path)
    live = tmp_path / "trace.jsonl"
    live.write_bytes(b"".join(lines[:20]))
    panel = panel_of(window)
    assert not panel.follow.isEnabled()
    open_and_wait(window, str(live))
    assert panel.follow.isEnabled() and not panel.follow.isChecked()
    window.state.select_request(3)

    panel.follow.trigger()  # Ctrl+L
    qtbot.waitUntil(
        lambda: panel.follower.is_following() and not panel.follower.is_busy(), timeout=3000
    )
    assert not panel.live_label.isHidden()
    assert window.state.index == 3  # starting to follow keeps the user's place
    with live.open("ab") as f:
        f.write(b"".join(lines[20:40]))
    qtbot.waitUntil(lambda: _views_show(window, 40), timeout=3000)
    assert window.state.index == 3

    panel.follow.trigger()
    assert not panel.follower.is_following() and panel.live_label.isHidden()
    assert not panel.follow.isChecked()


def test_opening_another_file_stops_following(
    qtbot, window, open_and_wait, trace_path, transcript_path, tmp_path: Path
) -> None:
    live = tmp_path / "trace.jsonl"
    live.write_bytes(b"".join(lines_of(trace_path)[:10]))
    panel = panel_of(window)
    panel.follow_file(str(live))
    qtbot.waitUntil(lambda: _views_show(window, 10), timeout=3000)
    open_and_wait(window, transcript_path)
    assert not panel.follower.is_following()
    assert panel.live_label.isHidden()


def test_follow_waits_for_a_file_that_is_still_empty(
    qtbot, window, trace_path, tmp_path: Path
) -> None:
    live = tmp_path / "later.jsonl"
    live.write_bytes(b"")
    panel = panel_of(window)
    panel.follow_file(str(live))
    with qtbot.waitSignal(panel.follower.waiting, timeout=3000):
        pass
    assert window.errors == [] and panel.follower.is_following()
    live.write_bytes(b"".join(lines_of(trace_path)[:3]))
    qtbot.waitUntil(lambda: _views_show(window, 3), timeout=3000)


def test_a_view_holding_the_previous_step_is_unaffected_by_the_next(
    qtbot, window, transcript_path, tmp_path: Path
) -> None:
    """Live follow publishes one snapshot per step: the analysis a view holds (and its
    session, timeline and breakdowns) stays as it was when the file grows."""
    lines = lines_of(transcript_path)
    live = tmp_path / "live.jsonl"
    live.write_bytes(b"".join(lines[:300]))
    panel = panel_of(window)
    panel.follow_file(str(live))
    n1 = requests_in(live)
    qtbot.waitUntil(lambda: _views_show(window, n1), timeout=5000)
    held = window.state.analysis  # what a view holds
    requests = list(held.session.requests)
    timeline = list(held.timeline)
    last = held.resolve_index("last")
    breakdown = held.breakdown(last)
    plot_view = window.timeline.plot.view if window.timeline.available else None

    with live.open("ab") as f:
        f.write(b"".join(lines[300:600]))
    n2 = requests_in(live)
    assert n2 > n1
    qtbot.waitUntil(lambda: _views_show(window, n2), timeout=3000)
    now = window.state.analysis
    assert now is not held and now.session is not held.session
    assert now.session.path == held.session.path
    assert now.session.requests[:n1] == requests  # the same requests, and more
    # the held step is whole: its session did not grow under it
    assert held.session.requests == requests and len(held.session.requests) == n1
    assert held.timeline == timeline and len(held.timeline) == n1
    assert held.resolve_index("last") == last and held.breakdown(last) == breakdown
    if plot_view is not None:  # the timeline's previous view model too
        assert len(plot_view.points) == n1 and window.timeline.plot.view is not plot_view
        assert len(window.timeline.plot.view.points) == n2
    # an analysis of the earlier step is stale for the state
    window.state.update_analysis(held)
    assert window.state.analysis is now
