"""A refresh while the library grows changes only the rows of what changed: the rows
``patch`` leaves are those ``build`` would make (sessions added, changed, gone, moved
to another project, grouped or not), and the session the user picked stays picked."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QStandardItemModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from library_tree import fake_home, lay_out, recordings  # noqa: E402

from ctxviewer.gui.library import model as rows  # noqa: E402
from ctxviewer.gui.library.view import LibraryView  # noqa: E402
from ctxviewer.library import Library  # noqa: E402


def _rows(model: QStandardItemModel) -> list[tuple[Any, ...]]:
    """Every row's texts and sort keys, children under their parent, in a stable order
    (the proxy sorts; the model's own order is the order rows came in)."""

    def one(parent: Any, r: int) -> tuple[Any, ...]:
        cells = tuple(
            (parent.child(r, c).text(), parent.child(r, c).data(rows.SORT_ROLE))
            for c in range(len(rows.COLUMNS))
        )
        top = parent.child(r, rows.SESSION)
        kids = sorted(one(top, k) for k in range(top.rowCount()))
        return (*cells, tuple(kids))

    root = model.invisibleRootItem()
    return sorted(one(root, r) for r in range(model.rowCount()))


@pytest.fixture
def entries(corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    home = fake_home(tmp_path, monkeypatch)
    lay_out(corpus, home)
    recordings(corpus, tmp_path / "recordings")
    with Library() as lib:
        lib.add_folder(str(tmp_path / "recordings"))
        lib.scan()
        found = lib.sessions()
    assert len({e.get("project") for e in found}) >= 3
    return found


@pytest.mark.parametrize("grouped", [True, False])
def test_patched_rows_are_built_rows(qtbot, entries: list[dict], grouped: bool) -> None:
    half = entries[: len(entries) // 2]
    changed = [dict(e) for e in entries]
    changed[0]["requests"] += 7  # a session that grew
    changed[0]["peak_prompt_tokens"] = (changed[0]["peak_prompt_tokens"] or 0) + 1000
    changed[-1]["project"] = "/somewhere/else"  # a session of another project now
    fewer = [e for i, e in enumerate(changed) if i % 3 != 1]  # some files deleted
    steps = [half, entries, changed, fewer, half]
    patched = QStandardItemModel()
    for before, after in zip([[], *steps], steps, strict=False):
        if before:  # as the view does: patch, then total the project rows again
            groups = rows.patch(patched, before, after, grouped)
            rows.retotal(patched, groups, {e["id"] for e in after})
        else:
            groups = rows.build(patched, after, grouped)
        built = QStandardItemModel()
        want = rows.build(built, after, grouped)
        assert _rows(patched) == _rows(built)

        def key(g: list[dict[str, object]]) -> list[object]:
            return sorted(e["id"] for e in g)

        assert sorted(map(key, groups)) == sorted(map(key, want))
        assert len(groups) == patched.rowCount()


def test_a_scan_refresh_keeps_the_pick(qtbot, entries: list[dict]) -> None:
    view = LibraryView()
    qtbot.addWidget(view)
    view.resize(1024, 700)
    view.show()
    view.set_entries(entries[:3])
    picked = entries[1]["id"]
    assert view.select(picked)
    first = view.model.item(0, rows.SESSION)
    view.set_entries(entries)  # the scan brought the rest: rows added, none built again
    assert view.model.item(0, rows.SESSION) is first
    assert view.current_entry() is not None and view.current_entry()["id"] == picked
    assert view.visible_sessions() == len(entries)
