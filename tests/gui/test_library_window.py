"""The window on the session library: opened with no file, a real scan on a thread, a
sortable, filterable table grouped by project; a double-click opens a session."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt, QTimer
from PySide6.QtGui import QImage

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from library_tree import fake_home, lay_out, recordings  # noqa: E402

from ctxviewer.gui.app import open_at_start  # noqa: E402
from ctxviewer.gui.app_settings import AppSettings  # noqa: E402
from ctxviewer.gui.library import model as rows  # noqa: E402
from ctxviewer.library import Library  # noqa: E402
from ctxviewer.resources import is_demo  # noqa: E402


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fake_home(tmp_path, monkeypatch)


def start(qtbot, window) -> object:
    """``ctxviewer`` with no FILE: the library page, its scan finished."""
    open_at_start(window, None, AppSettings())
    panel = window.panels["library"]
    assert panel.showing and window.controls.isHidden()
    qtbot.waitUntil(lambda: not panel.scanner.busy, timeout=60000)
    qtbot.waitUntil(lambda: panel.view.rescan.isEnabled(), timeout=5000)
    settle(qtbot, panel)
    return panel


def settle(qtbot, panel) -> None:
    """The page's reads of the index (on the thread pool) have arrived."""
    qtbot.waitUntil(lambda: not panel.querying, timeout=20000)


def search(qtbot, panel, text: str) -> None:
    panel.view.search.setText(text)
    panel.view._search_now()
    settle(qtbot, panel)


def sessions_shown(view) -> list[dict]:
    return [i.data(rows.ENTRY_ROLE) for i in view._session_indexes()]


def test_no_file_opens_the_library_grouped_by_project(qtbot, window, corpus, home, tmp_path):
    files = lay_out(corpus, home)
    recordings(corpus, tmp_path / "recordings")
    with Library() as lib:
        lib.add_folder(str(tmp_path / "recordings"))
    window.resize(1400, 900)
    panel = start(qtbot, window)
    view = panel.view
    with Library() as lib:
        expected = {e["id"]: e for e in lib.sessions()}
    shown = sessions_shown(view)
    assert {e["id"] for e in shown} == set(expected) and len(shown) == len(files) - 2 + 3
    # grouped: top rows are projects, each with its sessions under it
    tops = [view.proxy.index(r, 0) for r in range(view.proxy.rowCount())]
    assert all(view.proxy.rowCount(t) > 0 for t in tops)
    spotter = next(e for e in shown if e["path"] == str(files["spotter"]))
    group = next(
        t
        for t in tops
        if any(
            view.proxy.index(k, 0, t).data(rows.ENTRY_ROLE)["id"] == spotter["id"]
            for k in range(view.proxy.rowCount(t))
        )
    )
    assert group.data() == spotter["project"]
    # the sparkline column holds the series; the summary counts the sessions
    assert "sessions" in view.summary.text()
    # sort by peak, largest first: the first session of each group has its group's peak
    view.tree.sortByColumn(rows.PEAK, Qt.SortOrder.DescendingOrder)
    for t in tops:
        kids = [
            view.proxy.index(k, 0, t).data(rows.ENTRY_ROLE) for k in range(view.proxy.rowCount(t))
        ]
        peaks = [k["peak_prompt_tokens"] or -1 for k in kids]
        assert peaks == sorted(peaks, reverse=True)
    # flat, sorted by peak: the whole list in order
    view.grouped.setChecked(False)
    flat = sessions_shown(view)
    assert [e["peak_prompt_tokens"] or -1 for e in flat] == sorted(
        (e["peak_prompt_tokens"] or -1 for e in expected.values()), reverse=True
    )
    # agent and text filters
    view.agent.setCurrentIndex(view.agent.findData("codex"))
    assert {e["agent"] for e in sessions_shown(view)} == {"codex"}
    view.agent.setCurrentIndex(0)
    view.filter.setText("gemini")
    assert sessions_shown(view) and all(
        "gemini" in (e["agent"] + e["path"]).lower() for e in sessions_shown(view)
    )
    view.filter.setText("")
    # full-text search: the sessions whose messages hold the words
    search(qtbot, panel, "TodoWrite")
    found = {e["id"] for e in sessions_shown(view)}
    with Library() as lib:
        assert found == {e["id"] for e in lib.sessions(search="TodoWrite")} != set()
    assert not view.tree.isColumnHidden(rows.MATCHES)
    view.grouped.setChecked(True)  # a project's row totals what it shows
    for r in range(view.proxy.rowCount()):
        kids = view.proxy.rowCount(view.proxy.index(r, 0))
        assert view.proxy.index(r, rows.AGENT).data() == f"{kids} session{'s' * (kids != 1)}"
    assert f"{len(found)} match: TodoWrite" in view.summary.text()
    search(qtbot, panel, "zzqqxxnotaword")
    assert sessions_shown(view) == [] and not view.empty.isHidden()
    search(qtbot, panel, "")
    assert len(sessions_shown(view)) == len(expected)


def test_double_click_opens_and_file_library_returns(qtbot, window, corpus, home):
    files = lay_out(corpus, home)
    panel = start(qtbot, window)
    view = panel.view
    assert view.select(
        next(e["id"] for e in sessions_shown(view) if e["path"] == str(files["codex"]))
    )
    index: QModelIndex = view.tree.currentIndex()
    with qtbot.waitSignal(window.state.session_loaded, timeout=20000):
        view.tree.doubleClicked.emit(index)
    qtbot.waitUntil(lambda: not window.loader.is_busy(), timeout=20000)
    assert window.state.session.path == str(files["codex"]) and not panel.showing
    assert not window.controls.isHidden()
    action = panel.action
    assert action.shortcut().toString() == "Ctrl+Shift+L" and "Library" in action.text()
    action.trigger()
    assert panel.showing
    qtbot.waitUntil(lambda: not panel.scanner.busy, timeout=20000)
    settle(qtbot, panel)
    # Enter opens the current session too
    view.select(next(e["id"] for e in sessions_shown(view) if e["path"] == str(files["qwen"])))
    with qtbot.waitSignal(window.state.session_loaded, timeout=20000):
        qtbot.keyClick(view.tree, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not window.loader.is_busy(), timeout=20000)
    assert window.state.session.path == str(files["qwen"])


@pytest.fixture(params=["prompt", "slow-exit"])
def scan_exit(request, monkeypatch: pytest.MonkeyPatch) -> str:
    """How long a scan's thread lives on after it sent its end: at once, or a second
    later (a loaded machine: the listing that follows arrives while the thread lives)."""
    if request.param == "slow-exit":
        from ctxviewer.gui.library.scanner import Scanner

        send = Scanner._emit

        def send_then_linger(self, name: str, *args: object) -> None:
            send(self, name, *args)
            if name == "finished":
                time.sleep(1.0)

        monkeypatch.setattr(Scanner, "_emit", send_then_linger)
    return request.param


def test_a_fresh_machine_opens_the_demo(qtbot, window, home, scan_exit):
    with qtbot.waitSignal(window.state.session_loaded, timeout=60000):
        open_at_start(window, None, AppSettings())
    qtbot.waitUntil(lambda: not window.loader.is_busy(), timeout=20000)
    panel = window.panels["library"]
    assert is_demo(window.state.session.path) and not panel.showing
    panel.action.trigger()  # the library says it found nothing, and offers the demo
    qtbot.waitUntil(lambda: "No sessions found" in panel.view.empty.text(), timeout=20000)
    assert not panel.view.empty.isHidden() and panel.view.tree.isHidden()
    with qtbot.waitSignal(window.state.session_loaded, timeout=20000):
        panel.view.demo.click()
    qtbot.waitUntil(lambda: not window.loader.is_busy(), timeout=20000)
    assert is_demo(window.state.session.path)


def test_the_first_index_never_blocks_the_window(qtbot, window, corpus, home, tmp_path):
    folder = tmp_path / "many"
    folder.mkdir()
    src = lay_out(corpus, home)["spotter"].read_bytes()
    for i in range(30):
        (folder / f"copy-{i:02}.jsonl").write_bytes(src)
    with Library() as lib:
        lib.add_folder(str(folder))
    ticks: list[int] = []
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(
        lambda: ticks.append(1) if window.panels["library"].scanner.busy else None
    )
    timer.start()
    panel = window.panels["library"]
    panel.scanner.pool = False  # read on the scan thread: the GIL is shared with the window
    open_at_start(window, None, AppSettings())
    assert panel.scanner.busy  # open_at_start returned while the scan runs
    qtbot.waitUntil(lambda: not panel.scanner.busy, timeout=120000)
    timer.stop()
    assert len(ticks) >= 5  # the event loop kept running while the scan read
    qtbot.waitUntil(lambda: len(sessions_shown(panel.view)) == 36, timeout=10000)


def test_library_renders_at_both_sizes(qtbot, window, corpus, home, tmp_path):
    lay_out(corpus, home)
    recordings(corpus, tmp_path / "recordings")
    with Library() as lib:
        lib.add_folder(str(tmp_path / "recordings"))
    panel = start(qtbot, window)
    search(qtbot, panel, "TodoWrite")
    for size in ((1024, 700), (1400, 900)):
        window.resize(*size)
        qtbot.wait(50)
        out = tmp_path / f"library-{size[0]}.png"
        assert window.grab().save(str(out))
        image = QImage(str(out))
        assert (image.width(), image.height()) == size
        # no column of the table is cut to nothing
        header = panel.view.tree.header()
        assert all(
            header.sectionSize(c) >= 40
            for c in range(header.count())
            if not header.isSectionHidden(c)
        )


def test_add_folder_and_a_file_that_cannot_be_opened(qtbot, window, corpus, home, tmp_path):
    files = lay_out(corpus, home)
    panel = start(qtbot, window)
    before = len(sessions_shown(panel.view))
    recs = recordings(corpus, tmp_path / "recordings")
    panel.ask_folder = lambda: str(tmp_path / "recordings")
    panel.view.add_folder.click()
    qtbot.waitUntil(lambda: not panel.scanner.busy and panel.view.rescan.isEnabled(), timeout=60000)
    qtbot.waitUntil(lambda: len(sessions_shown(panel.view)) == before + len(recs), timeout=20000)
    with Library() as lib:
        assert lib.folders() == [str(tmp_path / "recordings")]
    # a listed file that turned into something else: the error, and back to the library
    files["vibe"].write_bytes(b"\x00\x01\x02" * 100)
    entry = next(e for e in sessions_shown(panel.view) if e["path"] == str(files["vibe"]))
    panel.open_entry(entry)
    qtbot.waitUntil(lambda: bool(window.errors), timeout=20000)
    assert window.errors[-1][0] == "Cannot open file"
    qtbot.waitUntil(lambda: panel.showing, timeout=5000)
