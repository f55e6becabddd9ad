"""Run the recording proxy from the GUI (docs/recording-format.md).

``ProxyControl`` starts and stops one ``ProxyThread`` and turns its
per-exchange callback (called on the proxy's thread) into a Qt signal, which
Qt delivers on the GUI thread.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from ctxviewer.proxy.routes import ANTHROPIC_UPSTREAM, OPENAI_UPSTREAM

if TYPE_CHECKING:
    from ctxviewer.proxy import ProxyThread

DEFAULT_PORT = 8787


def default_output() -> str:
    """A new file under ``~/ctxviewer-recordings/``, named after the time."""
    from datetime import datetime

    from ctxviewer.ingest.discover import recordings_folder

    folder = recordings_folder()  # the library reads it
    return str(folder / f"recording-{datetime.now():%Y%m%d-%H%M%S}.jsonl")


@dataclass(frozen=True)
class ProxySettings:
    """Where the proxy listens, where it forwards to, where it records."""

    port: int = DEFAULT_PORT  # 0: any free port
    upstream: str = ANTHROPIC_UPSTREAM
    openai_upstream: str = OPENAI_UPSTREAM
    out: str = ""  # empty: default_output()
    # opt-in: conversations may be compacted from the window (only those the user picks;
    # nothing is rewritten until a rule is applied): the proxy gets a ``Rewriter``
    rewriting: bool = False


def env_lines(url: str) -> list[str]:
    """The shell lines that point an agent at the proxy."""
    return [f"export ANTHROPIC_BASE_URL={url}", f"export OPENAI_BASE_URL={url}/v1"]


class ProxyControl(QObject):
    started = Signal(int, str)  # port, recording path
    stopped = Signal(int)  # exchanges recorded
    recorded = Signal(int)  # exchanges recorded so far (after each one)
    failed = Signal(str)  # the recording stopped (a full disk): why; forwarding goes on
    rewrite_event = Signal(str)  # what the rewriter did (rule on, undone, upstream rejected)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.proxy: ProxyThread | None = None
        self.count = 0

    @property
    def running(self) -> bool:
        return self.proxy is not None

    @property
    def port(self) -> int | None:
        return self.proxy.port if self.proxy is not None else None

    @property
    def url(self) -> str:
        return self.proxy.url if self.proxy is not None else ""

    @property
    def out(self) -> str:
        return self.proxy.out if self.proxy is not None else ""

    def start(self, settings: ProxySettings) -> int:
        """Start the proxy; returns its port. Raises ``OSError`` (port taken, file not
        writable) or ``ValueError`` (bad settings); nothing runs then."""
        if self.proxy is not None:
            raise RuntimeError("the proxy is already running")
        out = settings.out or default_output()
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        from ctxviewer.proxy import ProxyThread  # aiohttp: imported when first started

        rewriter = None
        if settings.rewriting:
            from ctxviewer.proxy.rewrite import Rewriter

            rewriter = Rewriter(on_event=self.rewrite_event.emit)  # no --compact-at: manual
        proxy = ProxyThread(
            port=settings.port,
            out=out,
            upstream=settings.upstream,
            openai_upstream=settings.openai_upstream,
            on_record=self._on_proxy_record,
            on_failure=self.failed.emit,
            rewriter=rewriter,
        )
        port = proxy.start()  # binds at once; raises when it cannot
        self.proxy, self.count = proxy, 0
        self.started.emit(port, proxy.out)
        return port

    def stop(self) -> None:
        proxy, self.proxy = self.proxy, None
        if proxy is not None:
            proxy.stop()
            self.stopped.emit(proxy.server.recorder.count)

    def _on_proxy_record(self, _record: object) -> None:
        # proxy thread: read the count there, deliver it queued to the GUI thread
        proxy = self.proxy
        if proxy is not None:
            self.recorded.emit(proxy.server.recorder.count)
