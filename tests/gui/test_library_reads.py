"""The library page reads the index on the thread pool: a search's sessions arrive,
then their counts; a newer search supersedes an older one, whose results never show;
no SQLite connection is opened on the GUI thread. A row of a recording that holds
several sessions opens the session it shows, without asking."""

from __future__ import annotations

import sqlite3
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from library_tree import fake_home, lay_out, recordings  # noqa: E402
from test_library_window import search, sessions_shown, settle, start  # noqa: E402

from ctxviewer.analysis.agents.sessions import default_session, split  # noqa: E402
from ctxviewer.gui.library import model as rows  # noqa: E402
from ctxviewer.ingest import load  # noqa: E402
from ctxviewer.library import Library  # noqa: E402


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fake_home(tmp_path, monkeypatch)


def test_a_search_arrives_from_the_pool_and_the_newest_wins(
    qtbot, window, corpus, home, tmp_path, monkeypatch
):
    lay_out(corpus, home)
    recordings(corpus, tmp_path / "recordings")
    with Library() as lib:
        lib.add_folder(str(tmp_path / "recordings"))
        lib.scan()
        want = {q: lib.search_counts(q) for q in ("TodoWrite", "the file", "zzqqxxnotaword")}
    assert want["TodoWrite"] and want["the file"] != want["TodoWrite"]
    seen: list[threading.Thread] = []  # the thread of every SQLite connection from now on
    real = sqlite3.connect
    monkeypatch.setattr(
        sqlite3,
        "connect",
        lambda *a, **k: (seen.append(threading.current_thread()), real(*a, **k))[1],
    )
    panel = start(qtbot, window)
    shown: list[tuple[str, bool]] = []
    panel.queries.found.connect(lambda f: shown.append((f.text, f.counted)))
    panel.queries.counted.connect(lambda f: shown.append((f.text, f.counted)))
    view = panel.view
    # three searches at once: only the last one's results are ever shown
    for text in ("zzqqxxnotaword", "TodoWrite", "the file"):
        view.search.setText(text)
        view._search_now()
    assert panel.querying
    settle(qtbot, panel)
    assert shown and {t for t, _ in shown} == {"the file"}
    assert shown[-1] == ("the file", True)
    assert {e["id"] for e in sessions_shown(view)} == set(want["the file"])
    assert view.matches == want["the file"]  # the counts, in the Matches column too
    assert "requests)" in view.summary.text()
    # a refresh (as a scan commits) runs the search again; a search then supersedes it
    panel.refresh()
    search(qtbot, panel, "TodoWrite")
    assert view.matches == want["TodoWrite"]
    assert {e["id"] for e in sessions_shown(view)} == set(want["TodoWrite"])
    search(qtbot, panel, "")
    assert view.matches is None and len(sessions_shown(view)) > len(want["TodoWrite"])
    assert seen and threading.main_thread() not in seen  # no SQLite on the GUI thread


def test_a_row_of_a_recording_opens_its_own_session(qtbot, window, corpus, home, tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    path = folder / "mixed.jsonl"
    path.write_bytes(next((corpus / "openai").glob("hanqunfeng__*.jsonl")).read_bytes())
    parts = split(load(str(path)))
    assert len(parts) > 1
    with Library() as lib:
        lib.add_folder(str(folder))
    panel = start(qtbot, window)
    rows = sorted(
        (e for e in sessions_shown(panel.view) if e["path"] == str(path)), key=lambda e: e["part"]
    )
    assert [e["part"] for e in rows] == list(range(len(parts)))
    others = [e for e in rows if e["part"] != default_session(parts)]
    for entry in (others[0], rows[default_session(parts)], others[-1]):
        window.panels["library"].show_library(scan=False)
        settle(qtbot, panel)
        assert panel.view.select(entry["id"])
        with qtbot.waitSignal(window.state.session_loaded, timeout=20000):
            panel.view.tree.doubleClicked.emit(panel.view.tree.currentIndex())
        qtbot.waitUntil(lambda: not window.loader.is_busy(), timeout=20000)
        qtbot.wait(50)  # the loader's sessions_found is handled
        part = parts[entry["part"]]
        shown = window.state.session
        assert (shown.session_id, shown.title, len(shown.requests)) == (
            part.session_id,
            part.title,
            len(part.requests),
        )
        assert entry["requests"] == len(part.requests)
        dialog = window.file_sessions.dialog
        assert dialog is None or not dialog.isVisible()  # nothing asked
        assert window.actions_.sessions.isEnabled()  # File > Sessions in this file still asks
    # opened otherwise (File > Open, a drop), the file asks which session to show
    with qtbot.waitSignal(window.loader.sessions_found, timeout=20000):
        window.open_file(str(path))
    qtbot.waitUntil(
        lambda: window.file_sessions.dialog is not None and window.file_sessions.dialog.isVisible(),
        timeout=5000,
    )
    window.file_sessions.dialog.reject()


def test_a_search_with_an_agent_chosen_and_the_rows_regrouped(
    qtbot, window, corpus, home, tmp_path
):
    lay_out(corpus, home)
    recordings(corpus, tmp_path / "recordings")
    with Library() as lib:
        lib.add_folder(str(tmp_path / "recordings"))
        lib.scan()
        counts = lib.search_counts("TodoWrite")
        agents = {e["id"]: e["agent"] for e in lib.sessions()}
    agent = max({agents[i] for i in counts}, key=lambda a: sum(agents[i] == a for i in counts))
    panel = start(qtbot, window)
    view = panel.view
    search(qtbot, panel, "TodoWrite")
    view.agent.setCurrentIndex(view.agent.findData(agent))
    want = {i for i in counts if agents[i] == agent}
    assert {e["id"] for e in sessions_shown(view)} == want
    for r in range(view.proxy.rowCount()):  # each project's row totals what it shows
        top = view.proxy.index(r, 0)
        kids = [
            view.proxy.index(k, 0, top).data(rows.ENTRY_ROLE)
            for k in range(view.proxy.rowCount(top))
        ]
        assert view.proxy.index(r, rows.REQUESTS).data() == f"{sum(e['requests'] for e in kids):,}"
        assert view.proxy.index(r, rows.MATCHES).data(rows.SORT_ROLE) == sum(
            counts[e["id"]] for e in kids
        )
    view.grouped.setChecked(False)  # rebuilt flat: the counts stay
    assert {e["id"] for e in sessions_shown(view)} == want
    assert {
        view.proxy.index(r, rows.SESSION).data(rows.ID_ROLE): view.proxy.index(
            r, rows.MATCHES
        ).data(rows.SORT_ROLE)
        for r in range(view.proxy.rowCount())
    } == {i: counts[i] for i in want}
    view.agent.setCurrentIndex(0)
    assert {e["id"] for e in sessions_shown(view)} == set(counts)
