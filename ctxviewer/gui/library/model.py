"""The library's rows: sessions, grouped by project, and the filter over them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from PySide6.QtCore import (
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QPalette, QStandardItem, QStandardItemModel

from ctxviewer.fmt import fmt_tokens, plural, usd
from ctxviewer.gui.library.sparkline import SCALE_ROLE, SERIES_ROLE
from ctxviewer.gui.session.session_notice import no_requests_note
from ctxviewer.jsonish import printable

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
ENTRY_ROLE = Qt.ItemDataRole.UserRole + 4  # the session's dict (``library --json``)
ID_ROLE = Qt.ItemDataRole.UserRole + 5  # its id: what filters read (a dict is converted
# to and from a QVariantMap on every read, 100 µs for a session's)
PROJECT_ROLE = Qt.ItemDataRole.UserRole + 6  # a project row's project
COLUMNS = (
    "Session",
    "Agent",
    "Requests",
    "Peak",
    "Window",
    "Prompt size",
    "Cost",
    "Compactions",
    "Matches",
    "File",
)
SESSION, AGENT, REQUESTS, PEAK, SHARE, PROMPT, COST, COMPACTIONS, MATCHES, FILE = range(
    len(COLUMNS)
)
NO_PROJECT = "(no project recorded)"
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


def home(path: str) -> str:
    """``path`` for people: ``~`` for the home folder, a byte that is no UTF-8 as ``\xe9``."""
    h = os.path.expanduser("~")  # Path.home() costs 25 µs a row
    path = printable(path)
    return "~" + path[len(h) :] if path == h or path.startswith(h + os.sep) else path


def when(entry: dict[str, Any]) -> str:
    iso = entry.get("start") or entry.get("mtime") or ""
    try:
        t = datetime.fromisoformat(str(iso).replace("Z", "+00:00"))
    except ValueError:
        return str(iso)[:16]
    return t.astimezone().strftime("%Y-%m-%d %H:%M")


def _item(
    text: str, sort: object = None, tip: str | None = None, right: bool = False
) -> QStandardItem:
    item = QStandardItem(text)
    item.setEditable(False)
    item.setData(text.lower() if sort is None else sort, SORT_ROLE)
    if tip:
        item.setToolTip(tip)
    if right:
        item.setTextAlignment(RIGHT)
    return item


def session_row(e: dict[str, Any], matches: int | None = None) -> list[QStandardItem]:
    share = e.get("peak_share")
    label = when(e)
    if e.get("parts", 1) > 1:
        label += f"  ({e['part'] + 1} of {e['parts']})"
    comp = e["compactions_observed"]
    predicted = e["compactions_predicted"]
    tops = ", ".join(
        f"{c['name'].replace('_', ' ')} {fmt_tokens(c['tokens'])}"
        for c in e.get("top_categories", [])
    )
    row = [
        _item(
            label,
            e.get("start") or e.get("mtime") or "",
            tip=f"{printable(e['path'])}\n"
            f"{e.get('model') or ''}\nlargest at the peak: {tops or '-'}",
        ),
        _item(e.get("agent_label") or e["agent"], tip=e["agent"]),
        _item(f"{e['requests']:,}", e["requests"], right=True),
        _item(
            fmt_tokens(e.get("peak_prompt_tokens")), e.get("peak_prompt_tokens") or -1, right=True
        ),
        _item(
            f"{share * 100:.0f}%" if share is not None else "-",
            share if share is not None else -1.0,
            right=True,
        ),
        _item("", max(e.get("prompt_series") or [0])),
        _item(
            usd(e.get("cost_usd"), "-"),
            e.get("cost_usd") if e.get("cost_usd") is not None else -1.0,
            right=True,
        ),
        _item(
            str(comp) if comp else "",
            comp * 1000 + predicted,
            tip=f"{plural(comp, 'compaction')} in the log, {predicted} predicted",
            right=True,
        ),
        _item(f"{matches:,}" if matches else "", matches or 0, right=True),
        _item(
            os.path.basename(printable(e["path"] or "")),
            e["path"] or "",
            tip=printable(e["path"] or ""),
        ),
    ]
    row[PROMPT].setData(e.get("prompt_series") or [], SERIES_ROLE)
    row[PROMPT].setData(e.get("window") or 0, SCALE_ROLE)
    row[PROMPT].setToolTip(
        f"prompt size over the session, peak "
        f"{fmt_tokens(e.get('peak_prompt_tokens'))} of "
        f"{fmt_tokens(e.get('window'))}"
    )
    row[SESSION].setData(e, ENTRY_ROLE)
    row[SESSION].setData(e["id"], ID_ROLE)
    if not e["requests"]:
        _no_requests(row, e)
    return row


def _no_requests(row: list[QStandardItem], e: dict[str, Any]) -> None:
    """A file holding no model request (a Claude Code summary alone): greyed, saying so
    (its rows sort below the others, ``LibraryFilter.lessThan``)."""
    note = no_requests_note(e["agent"], e.get("size"), e.get("skipped_records") or 0)
    row[PROMPT].setText("no requests")
    for item in row:
        item.setForeground(QPalette().brush(QPalette.ColorRole.PlaceholderText))
        item.setToolTip(f"{e['path']}\n{note}")


def group_row(
    project: str, entries: Sequence[dict[str, Any]], matches: dict[int, int] | None = None
) -> list[QStandardItem]:
    """A project's row: its sessions' totals, so that sorting orders projects too."""
    latest = max((e.get("start") or e.get("mtime") or "" for e in entries), default="")
    peak = max((e.get("peak_prompt_tokens") or 0 for e in entries), default=0)
    costs = [e["cost_usd"] for e in entries if e.get("cost_usd") is not None]
    requests = sum(e["requests"] for e in entries)
    comps = sum(e["compactions_observed"] for e in entries)
    shares = [e["peak_share"] for e in entries if e.get("peak_share") is not None]
    name = home(project) if project != NO_PROJECT else project
    found = sum((matches or {}).get(e["id"], 0) for e in entries)
    row = [
        _item(name, latest, tip=project),
        _item(plural(len(entries), "session"), len(entries)),
        _item(f"{requests:,}", requests, right=True),
        _item(fmt_tokens(peak), peak, right=True),
        _item(f"{max(shares) * 100:.0f}%" if shares else "", max(shares, default=-1.0), right=True),
        _item("", peak),
        _item(usd(sum(costs)) if costs else "", sum(costs), right=True),
        _item(str(comps) if comps else "", comps * 1000, right=True),
        _item(f"{found:,}" if found else "", found, right=True),
        _item("", ""),
    ]
    row[0].setData(project, PROJECT_ROLE)
    font = row[0].font()
    font.setBold(True)
    for item in row:
        item.setFont(font)
    return row


def build(
    model: QStandardItemModel,
    entries: Sequence[dict[str, Any]],
    grouped: bool,
    matches: dict[int, int] | None = None,
) -> list[list[dict[str, Any]]]:
    """The rows of ``entries``; returns each top row's sessions (grouped: its project's;
    none for a session's own row), for ``retotal``."""
    model.clear()
    model.setHorizontalHeaderLabels(list(COLUMNS))
    root = model.invisibleRootItem()
    if not grouped:
        for e in entries:
            root.appendRow(session_row(e, (matches or {}).get(e["id"])))
        return [[] for _ in entries]
    groups: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        groups.setdefault(e.get("project") or NO_PROJECT, []).append(e)
    for project, members in groups.items():
        row = group_row(project, members, matches)
        for e in members:
            row[0].appendRow(session_row(e, (matches or {}).get(e["id"])))
        root.appendRow(row)
    return list(groups.values())


def patch(
    model: QStandardItemModel,
    old: Sequence[dict[str, Any]],
    new: Sequence[dict[str, Any]],
    grouped: bool,
    matches: dict[int, int] | None = None,
) -> list[list[dict[str, Any]]]:
    """Bring the rows ``build(old)`` made to ``new`` in place: rows are added for new
    sessions (in their project's row), replaced for changed ones, removed for gone ones.
    While a scan runs this touches the few sessions it brought, where ``build`` made
    every row again (0.35 s for 2,000 sessions, the window frozen meanwhile). Returns
    the groups, as ``build`` does."""
    before = {e["id"]: e for e in old}
    after = {e["id"]: e for e in new}
    root = model.invisibleRootItem()
    where: dict[int, tuple[QStandardItem, int]] = {}  # session id -> (parent, row)
    projects: dict[str, QStandardItem] = {}
    for r in range(model.rowCount()):
        top = model.item(r, SESSION)
        if top is None:
            continue
        if top.data(ID_ROLE) is not None:
            where[top.data(ID_ROLE)] = (root, r)
        else:
            projects[top.data(PROJECT_ROLE)] = top
            for k in range(top.rowCount()):
                where[top.child(k, SESSION).data(ID_ROLE)] = (top, k)
    moved = {
        sid
        for sid, e in after.items()
        if sid in before
        and grouped
        and (e.get("project") or NO_PROJECT) != (before[sid].get("project") or NO_PROJECT)
    }
    gone = sorted(
        (where[sid] for sid in (before.keys() - after.keys()) | moved if sid in where),
        key=lambda pr: -pr[1],
    )
    for parent, r in gone:  # bottom up: the rows above keep their numbers
        parent.removeRow(r)
    for sid, e in after.items():
        if sid in before and sid in where and sid not in moved and before[sid] != e:
            parent, r = where[sid]
            for c, item in enumerate(session_row(e, (matches or {}).get(sid))):
                parent.setChild(r, c, item)
    for e in new:
        if e["id"] in before and e["id"] not in moved:
            continue
        row = session_row(e, (matches or {}).get(e["id"]))
        if not grouped:
            root.appendRow(row)
            continue
        project = e.get("project") or NO_PROJECT
        if project not in projects:
            head = group_row(project, [e], matches)
            root.appendRow(head)
            projects[project] = head[SESSION]
        projects[project].appendRow(row)
    for r in reversed(range(model.rowCount())):  # a project whose sessions all went
        top = model.item(r, SESSION)
        if top is not None and top.data(ID_ROLE) is None and not top.hasChildren():
            root.removeRow(r)
    if not grouped:
        return [[] for _ in range(model.rowCount())]
    members: dict[str, list[dict[str, Any]]] = {}
    for e in new:
        members.setdefault(e.get("project") or NO_PROJECT, []).append(e)
    return [
        members.get(model.item(r, SESSION).data(PROJECT_ROLE), []) for r in range(model.rowCount())
    ]


def set_counts(model: QStandardItemModel, counts: dict[int, int]) -> None:
    """Write a search's counts into the Matches column of the sessions' rows."""

    def put(session: QStandardItem | None, matches: QStandardItem | None) -> None:
        sid = session.data(ID_ROLE) if session is not None else None
        if sid is not None and matches is not None:
            n = counts.get(sid, 0)
            matches.setData(n, SORT_ROLE)
            matches.setText(f"{n:,}" if n else "")

    for r in range(model.rowCount()):
        top = model.item(r, SESSION)
        put(top, model.item(r, MATCHES))
        for k in range(top.rowCount() if top is not None else 0):
            put(top.child(k, SESSION), top.child(k, MATCHES))


def retotal(
    model: QStandardItemModel,
    groups: list[list[dict[str, Any]]],
    shown: set[int],
    matches: dict[int, int] | None = None,
) -> None:
    """Each project's row (``groups``: ``build``'s) totals its sessions in ``shown``
    (the others are filtered out), their matching requests too."""
    for r, sessions in enumerate(groups):
        members = [e for e in sessions if e["id"] in shown]
        if not members:
            continue
        for c, new in enumerate(
            group_row(members[0].get("project") or NO_PROJECT, members, matches)
        ):
            old = model.item(r, c)
            if old is not None and (old.text(), old.data(SORT_ROLE)) != (
                new.text(),
                new.data(SORT_ROLE),
            ):
                old.setText(new.text())
                old.setData(new.data(SORT_ROLE), SORT_ROLE)


class LibraryFilter(QSortFilterProxyModel):
    """Shows the sessions of the chosen agent and project that hold the filter text
    (in any column) and, while a search is on, match it."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self.setRecursiveFilteringEnabled(True)
        self.setSortCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.agent: str | None = None
        self.project: str | None = None
        self.text = ""
        self.ids: set[int] | None = None  # a search's sessions; None: no search
        self.entries: dict[int, dict[str, Any]] = {}  # every session's entry, by id

    def set_filters(
        self, agent: str | None, project: str | None, text: str, ids: set[int] | None
    ) -> None:
        self.agent, self.project, self.text, self.ids = agent, project, text.lower(), ids
        # The whole mapping again, in one layout change: 20 ms for 2,000 sessions, where
        # a filter change (row by row removals and insertions) takes ten times that.
        self.invalidate()

    def lessThan(
        self, left: QModelIndex | QPersistentModelIndex, right: QModelIndex | QPersistentModelIndex
    ) -> bool:
        """Rows without requests (sessions, or projects of such sessions only) below the
        others whichever way the column sorts: a file holding only a summary, dated
        today, is no session to open first."""
        empty_left, empty_right = _empty(left), _empty(right)
        if empty_left != empty_right:
            ascending = self.sortOrder() == Qt.SortOrder.AscendingOrder
            return empty_right if ascending else empty_left
        return super().lessThan(left, right)

    def filterAcceptsRow(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> bool:
        model = self.sourceModel()
        e = self.entries.get(model.index(row, SESSION, parent).data(ID_ROLE))
        if e is None:  # a project row: shown when one of its sessions is
            return False
        if self.agent and e["agent"] != self.agent:
            return False
        if self.project and (e.get("project") or NO_PROJECT) != self.project:
            return False
        if self.ids is not None and e["id"] not in self.ids:
            return False
        if self.text:
            hay = " ".join(
                str(model.index(row, c, parent).data() or "") for c in range(len(COLUMNS))
            )
            hay += (
                " "
                + (e.get("path") or "")
                + " "
                + (e.get("project") or "")
                + " "
                + (e.get("model") or "")
            )
            return all(word in hay.lower() for word in self.text.split())
        return True


def _empty(index: QModelIndex | QPersistentModelIndex) -> bool:
    """Whether the row of ``index`` counts no request."""
    return bool(index.sibling(index.row(), REQUESTS).data(SORT_ROLE) == 0)
