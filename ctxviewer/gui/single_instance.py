"""One running ctxviewer per user: a second launch hands its files over.

The first instance listens on a ``QLocalServer`` named per user. A later
``ctxviewer FILE`` (double-click in a file manager) connects, sends the
absolute paths as one JSON line and exits; the running app opens each file
in a new window, so the session already open is never replaced.
"""

from __future__ import annotations

import getpass
import json
import os
from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtNetwork import QLocalServer, QLocalSocket

CONNECT_TIMEOUT_MS = 500


def server_name() -> str:
    """Per user (and overridable for tests and side-by-side installs)."""
    name = os.environ.get("CTXVIEWER_INSTANCE")
    if name:
        return name
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name on this system
        user = str(os.getuid()) if hasattr(os, "getuid") else "user"
    return f"ctxviewer-{user}"


def hand_over(paths: list[str], name: str | None = None) -> bool:
    """Send ``paths`` to a running instance; False when none is listening."""
    socket = QLocalSocket()
    socket.connectToServer(name or server_name())
    if not socket.waitForConnected(CONNECT_TIMEOUT_MS):
        return False
    socket.write((json.dumps({"open": [os.path.abspath(p) for p in paths]}) + "\n").encode())
    ok = socket.waitForBytesWritten(2_000)
    socket.disconnectFromServer()
    if socket.state() != QLocalSocket.LocalSocketState.UnconnectedState:
        socket.waitForDisconnected(1_000)
    return ok


class InstanceServer(QObject):
    """Listens for files handed over by later launches."""

    files_received = Signal(list)  # absolute paths

    def __init__(self, name: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name or server_name()
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._on_server_new_connection)
        self._buffers: dict[QLocalSocket, bytes] = {}

    def listen(self) -> bool:
        """Listen; False when another live instance already owns the name.

        Probe first: with ``UserAccessOption`` Qt creates the socket aside and
        renames it over the name, which would silently take it from a live app.
        """
        probe = QLocalSocket()
        probe.connectToServer(self.name)
        if probe.waitForConnected(CONNECT_TIMEOUT_MS):
            probe.abort()
            return False
        if self.server.listen(self.name):
            return True
        QLocalServer.removeServer(self.name)  # a stale socket left by a crashed instance
        return self.server.listen(self.name)

    def close(self) -> None:
        self.server.close()

    def _on_server_new_connection(self) -> None:
        while self.server.hasPendingConnections():
            socket = self.server.nextPendingConnection()
            self._buffers[socket] = b""
            socket.readyRead.connect(lambda s=socket: self._on_socket_ready_read(s))
            socket.disconnected.connect(lambda s=socket: self._on_socket_disconnected(s))

    def _on_socket_ready_read(self, socket: QLocalSocket) -> None:
        self._buffers[socket] = self._buffers.get(socket, b"") + bytes(socket.readAll().data())
        if b"\n" in self._buffers[socket]:
            self._deliver(self._buffers.pop(socket))
            socket.disconnectFromServer()

    def _on_socket_disconnected(self, socket: QLocalSocket) -> None:
        pending = self._buffers.pop(socket, b"")
        if pending.strip():
            self._deliver(pending)
        socket.deleteLater()

    def _deliver(self, data: bytes) -> None:
        try:
            message = json.loads(data.decode("utf-8", "replace").splitlines()[0])
        except (ValueError, IndexError):
            return
        paths = [p for p in message.get("open", []) if isinstance(p, str)]
        if paths:
            self.files_received.emit(paths)


class AppWindow(Protocol):
    """What the app asks of a window (a ``MainWindow``)."""

    def show(self) -> None: ...
    def raise_(self) -> None: ...
    def activateWindow(self) -> None: ...  # noqa: N802 - Qt's name
    def open_file(self, path: str) -> None: ...


class WindowSet(QObject):
    """The app's windows: handed-over files open in new windows."""

    def __init__(self, make_window: Callable[[], AppWindow], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.make_window = make_window
        self.windows: list[AppWindow] = []

    def add(self, window: AppWindow) -> AppWindow:
        self.windows.append(window)
        return window

    def open_in_new_window(self, paths: list[str]) -> None:
        for path in paths:
            window = self.add(self.make_window())
            window.show()
            window.open_file(path)
            if QGuiApplication.platformName() != "offscreen":  # it has no window stack
                window.raise_()
                window.activateWindow()
