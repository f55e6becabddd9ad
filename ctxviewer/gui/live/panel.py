"""Live attach in the main window: follow the open file, File > Attach…, the proxy.

``install(host)`` adds the actions (File > Attach… Ctrl+Shift+O, File >
Follow live Ctrl+L, a Proxy menu), toolbar buttons and two status-bar
indicators ("● live", "proxy :PORT recording N exchanges") to the window
(a ``PanelHost``), and returns the ``LivePanel`` that wires them. Dialogs are
created through replaceable factories so tests can drive them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QLabel

from ctxviewer.fmt import plural
from ctxviewer.gui.host import PanelHost
from ctxviewer.gui.live.follow import LiveFollower
from ctxviewer.gui.widgets.jobs import LatestJob

if TYPE_CHECKING:  # the dialogs and the proxy: imported when first used, not at the start
    from ctxviewer.gui.live.attach_dialog import AttachDialog
    from ctxviewer.gui.live.compact_dialog import LiveCompactDialog
    from ctxviewer.gui.live.proxy_control import ProxyControl, ProxySettings
    from ctxviewer.gui.live.proxy_dialog import ProxyDialog

DISCOVER_LIMIT = 1000  # newest files listed (each is probed: its first 64 KiB read)


def discover_job(limit: int = DISCOVER_LIMIT) -> Callable[..., Any]:
    """List and probe the agents' session files (a worker job)."""

    def job(progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> Any:
        from ctxviewer.ingest.discover import default_roots, discover_sessions

        roots = [str(r.path) for r in default_roots()]
        infos = discover_sessions(limit=limit)
        for i, info in enumerate(infos):
            if cancelled():
                break
            info.probe()
            progress(i + 1, len(infos))
        return infos, roots, time.time()

    return job


class LivePanel(QObject):
    def __init__(self, host: PanelHost) -> None:
        super().__init__(host.window())
        self.host = host
        self.follower = LiveFollower(host.state, parent=self)
        self._proxy: ProxyControl | None = None  # made when first needed (``proxy``)
        self.make_attach_dialog: Callable[[], AttachDialog] = self._new_attach_dialog
        self.make_proxy_dialog: Callable[[], ProxyDialog] = self._new_proxy_dialog
        self.attach_dialog: AttachDialog | None = None
        self.proxy_dialog: ProxyDialog | None = None
        self._discover = LatestJob(parent=self)  # the attach dialog's search for sessions
        self._discover.finished.connect(self._on_discover_finished)
        self._discover.failed.connect(self._on_discover_failed)
        self._build_actions()
        self._build_indicators()
        self._connect()
        host.closing.connect(self._on_window_closing)  # stop following and the proxy
        host.add_quit_concern(self.quit_concern)

    def _new_attach_dialog(self) -> AttachDialog:
        from ctxviewer.gui.live.attach_dialog import AttachDialog

        return AttachDialog(self.host.window())

    def _new_proxy_dialog(self) -> ProxyDialog:
        from ctxviewer.gui.live.proxy_dialog import ProxyDialog

        return ProxyDialog(parent=self.host.window())

    # -- building -----------------------------------------------------------------
    def _action(self, text: str, key: str = "", checkable: bool = False) -> QAction:
        action = QAction(text, self.host.window())
        if key:
            action.setShortcut(QKeySequence(key))
        action.setCheckable(checkable)
        self.host.add_action(action)
        return action

    def _build_actions(self) -> None:
        h = self.host
        self.attach = self._action("&Attach to an agent session…", "Ctrl+Shift+O")
        self.attach.setToolTip("Pick a running agent's session file and follow it live")
        self.follow = self._action("&Follow live", "Ctrl+L", checkable=True)
        self.follow.setToolTip("Show what is appended to the open file as it is written")
        self.follow.setEnabled(False)
        self.start_proxy = self._action("&Recording proxy…")
        self.start_proxy.setToolTip(
            "Start ctxviewer's recording proxy and show the requests an agent sends through it"
        )
        self.stop_proxy = self._action("S&top proxy")
        self.stop_proxy.setEnabled(False)
        self.compact_live = self._action("&Compact a live conversation…")
        self.compact_live.setToolTip(
            "Preview and apply a compaction to a conversation going "
            "through the proxy (started with compaction allowed)"
        )
        self.compact_live.setEnabled(False)
        self.compact_dialog: LiveCompactDialog | None = None
        h.add_open_actions([self.attach, self.follow])
        self.proxy_menu = h.menu("&Proxy", before="Go")
        self.proxy_menu.addAction(self.start_proxy)
        self.proxy_menu.addAction(self.stop_proxy)
        self.proxy_menu.addAction(self.compact_live)
        for a in (self.attach, self.follow, self.start_proxy):
            h.add_toolbar_action(a)
        self.attach.setIconText("Attach…")
        self.follow.setIconText("Follow")
        self.start_proxy.setIconText("Proxy…")

    def _build_indicators(self) -> None:
        self.live_label = QLabel("● live")
        self.live_label.setStyleSheet("color: #2eaa4f; font-weight: bold; padding: 0 4px")
        self.live_label.setToolTip("Following the file as it is written (Ctrl+L to stop)")
        self.live_label.hide()
        self.proxy_label = QLabel()
        self.proxy_label.setStyleSheet("color: #d0702a; padding: 0 4px")
        self.proxy_label.hide()
        self.host.add_status_widget(self.proxy_label)
        self.host.add_status_widget(self.live_label)

    def _connect(self) -> None:
        s, f = self.host.state, self.follower
        s.session_loaded.connect(self._on_state_session_loaded)
        self.attach.triggered.connect(self.show_attach_dialog)
        self.follow.toggled.connect(self._on_follow_toggled)
        self.start_proxy.triggered.connect(self.show_proxy_dialog)
        self.stop_proxy.triggered.connect(lambda: self.proxy.stop())
        self.compact_live.triggered.connect(self.show_compact_dialog)
        f.following_changed.connect(self._on_follower_following_changed)
        f.failed.connect(self._on_follower_failed)
        f.waiting.connect(self._on_follower_waiting)
        f.updated.connect(self._on_follower_updated)

    @property
    def proxy(self) -> ProxyControl:
        """The recording proxy's control, made the first time it is needed (its module
        reads the proxy's routes: not before the window's first paint)."""
        if self._proxy is None:
            from ctxviewer.gui.live.proxy_control import ProxyControl

            p = self._proxy = ProxyControl(self)
            p.rewrite_event.connect(lambda m: self.host.show_message(f"Proxy: {m}", 8000))
            p.started.connect(self._on_proxy_started)
            p.recorded.connect(self._on_proxy_recorded)
            p.stopped.connect(self._on_proxy_stopped)
            p.failed.connect(self._on_proxy_failed)
        return self._proxy

    # -- public API -----------------------------------------------------------------
    def follow_file(self, path: str) -> None:
        """Open ``path`` and follow it live (in the session's views, not the library)."""
        self.host.show_session_views()
        self.follower.follow(path)
        self.host.show_message(f"Following {os.path.basename(path)}…", 3000)

    def show_attach_dialog(self) -> AttachDialog:
        if self.attach_dialog is None:
            d = self.attach_dialog = self.make_attach_dialog()
            d.refresh_requested.connect(self.refresh_sessions)
            d.attach_requested.connect(self.follow_file)
            d.open_requested.connect(self.host.open_file)
        self.refresh_sessions()
        _show(self.attach_dialog)
        return self.attach_dialog

    def refresh_sessions(self) -> None:
        if self.attach_dialog is not None:
            self.attach_dialog.set_searching()
        self._discover.start(discover_job())

    def show_proxy_dialog(self) -> ProxyDialog:
        if self.proxy_dialog is None:
            d = self.proxy_dialog = self.make_proxy_dialog()
            d.start_requested.connect(self.start_proxy_with)
        if self.proxy.running:
            self.proxy_dialog.set_running(self.proxy.url, self.proxy.out)
        _show(self.proxy_dialog)
        return self.proxy_dialog

    def show_compact_dialog(self) -> LiveCompactDialog | None:
        """The live compaction dialog, on the running proxy's rewriter (None without one)."""
        running = self.proxy.proxy
        rewriter = running.rewriter if running is not None else None
        if rewriter is None:
            return None
        if self.compact_dialog is None:
            from ctxviewer.analysis.insights import load_prices
            from ctxviewer.gui.live.compact_dialog import LiveCompactDialog

            try:
                prices = load_prices()
            except ValueError:
                prices = None  # the preview says there is no price
            self.compact_dialog = LiveCompactDialog(rewriter, prices, self.host.window())
        else:
            self.compact_dialog.refresh()
        _show(self.compact_dialog)
        return self.compact_dialog

    def start_proxy_with(self, settings: ProxySettings) -> bool:
        """Start the proxy and follow its recording; False (and the reason shown) on failure."""
        try:
            self.proxy.start(settings)
        except (OSError, ValueError, RuntimeError) as e:
            reason = f"Cannot start the proxy: {getattr(e, 'strerror', None) or e}"
            if self.proxy_dialog is not None:
                self.proxy_dialog.set_error(reason)
            else:
                self.host.show_error("Proxy", reason)
            return False
        if self.proxy_dialog is not None:
            self.proxy_dialog.set_running(self.proxy.url, self.proxy.out)
        self.follow_file(self.proxy.out)
        return True

    # -- slots ----------------------------------------------------------------------
    def _on_state_session_loaded(self, a: Any) -> None:
        self.follow.setEnabled(bool(a.session.path) and os.path.isfile(a.session.path))

    def _on_follow_toggled(self, on: bool) -> None:
        if on and not self.follower.is_following():
            session = self.host.state.session
            path = session.path if session is not None else None
            if path:
                self.host.show_session_views()
                self.follower.follow(path)
            else:
                self.follow.setChecked(False)
        elif not on:
            self.follower.stop()

    def _on_follower_following_changed(self, on: bool) -> None:
        self.follow.setChecked(on)
        self.follow.setEnabled(True)
        self.live_label.setVisible(on)
        if on:
            self.live_label.setToolTip(f"Following {self.follower.path} (Ctrl+L to stop)")

    def _on_follower_failed(self, path: str, reason: str) -> None:
        self.host.show_error("Stopped following", reason)

    def _on_follower_waiting(self, reason: str) -> None:
        self.host.show_message(f"Waiting for content: {reason}", 3000)

    def _on_follower_updated(self, result: Any) -> None:
        session = result.analysis.session
        if not session.requests:
            name = os.path.basename(session.path or "")
            self.host.show_message(f"Following {name}: waiting for the first request")
        elif result.new and not result.reloaded:
            n = len(result.new)
            self.host.show_message(f"{n} new request{'s' if n > 1 else ''}", 3000)

    def _on_discover_finished(self, result: object) -> None:
        if self.attach_dialog is not None:
            assert isinstance(result, tuple)
            infos, roots, now = result
            self.attach_dialog.set_sessions(list(infos), list(roots), float(now))

    def _on_discover_failed(self, reason: str) -> None:
        if self.attach_dialog is not None:
            self.attach_dialog.set_sessions([], [f"(search failed: {reason})"])

    def _on_proxy_started(self, port: int, out: str) -> None:
        self.stop_proxy.setEnabled(True)
        running = self.proxy.proxy
        self.compact_live.setEnabled(running is not None and running.rewriter is not None)
        self._show_proxy_count(0)
        self.proxy_label.setToolTip(f"{self.proxy.url} → {out}")
        self.proxy_label.show()

    def _on_proxy_recorded(self, count: int) -> None:
        self._show_proxy_count(count)
        self.follower.poll_now()  # no need to wait for the timer

    def _show_proxy_count(self, count: int) -> None:
        self.proxy_label.setText(
            f"proxy :{self.proxy.port} recording {count} exchange{'' if count == 1 else 's'}"
        )

    def _on_proxy_failed(self, why: str) -> None:
        self.proxy_label.setText(f"proxy :{self.proxy.port} NOT recording")
        self.proxy_label.setToolTip(
            f"The recording stopped ({why}). The proxy still forwards "
            "every call; stop it and start it with another file."
        )
        self.host.show_message(
            f"Proxy recording stopped: {why}; calls are still forwarded but no longer recorded"
        )

    def _on_proxy_stopped(self, count: int) -> None:
        self.stop_proxy.setEnabled(False)
        self.compact_live.setEnabled(False)
        if self.compact_dialog is not None:
            self.compact_dialog.close()
            self.compact_dialog.deleteLater()
            self.compact_dialog = None
        self.proxy_label.hide()
        self.host.show_message(f"Proxy stopped: {plural(count, 'exchange')} recorded", 5000)
        if self.proxy_dialog is not None:
            self.proxy_dialog.close()
            self.proxy_dialog.deleteLater()
            self.proxy_dialog = None

    def _on_window_closing(self) -> None:
        self.follower.stop()
        if self._proxy is not None:
            self._proxy.stop()

    def quit_concern(self) -> str | None:
        """What closing the window would stop (asked before it closes)."""
        if self._proxy is None or not self._proxy.running:
            return None
        running = self.proxy.proxy
        count = running.server.recorder.count if running is not None else 0
        return (
            f"The recording proxy is running ({plural(count, 'exchange')} "
            f"recorded to {self.proxy.out}): closing the window stops it, and agents "
            "pointed at it lose their connection."
        )


def _show(dialog: QDialog) -> None:
    if dialog.isVisible():
        dialog.raise_()  # already open behind the window
    else:
        dialog.show()


def install(host: PanelHost) -> LivePanel:
    return LivePanel(host)
