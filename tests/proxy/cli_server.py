"""Run ``ctxviewer proxy`` or ``ctxviewer otel`` as a real process, as a user does, and
read what it prints."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


class CliServer:
    """``python -m ctxviewer COMMAND ARGS`` on port 0; ``url`` is where it listens,
    ``lines`` what it prints on stdout after its banner."""

    def __init__(
        self, command: str, args: list[str], cwd: Path, preexec: Callable[[], None] | None = None
    ) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ctxviewer", command, "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=cwd,
            preexec_fn=preexec,
        )  # noqa: PLW1509 - a resource limit, set before exec
        self.lines: queue.Queue[str] = queue.Queue()
        self._err: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()
        self._err_pump = threading.Thread(target=self._pump_err, daemon=True)
        self._err_pump.start()
        first = self.lines.get(timeout=30)
        self.url = first.split(" listening on ")[1].split()[0]
        while not self.lines.get(timeout=10).startswith(("Ctrl+C", "then: ")):
            pass

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def _pump_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._err.append(line)

    def printed(self) -> list[str]:
        """What it printed on stdout so far (after the banner)."""
        out = []
        while not self.lines.empty():
            out.append(self.lines.get())
        return out

    def stop(self) -> tuple[int, str]:
        """Ctrl+C; its exit status and all it wrote to stderr."""
        try:
            self.proc.send_signal(signal.SIGINT)
            code = self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._err_pump.join(timeout=10)
        return code, "".join(self._err)
