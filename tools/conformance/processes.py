"""Processes of one scenario: the fake server, ctxviewer's proxy, the agent (plain or in tmux).

Everything binds or talks to 127.0.0.1 inside the network namespace the runner made. Every
wait is bounded; every process started here is stopped by its PID (tmux by its private
socket), never by name.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from conformance.sandbox import FAKES

PROXY_PORT = 18787


def wait_until(check: Callable[[], bool], seconds: float, step: float = 0.2) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(step)
    return check()


def stop(proc: subprocess.Popen[bytes], grace: float = 5) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_fake/health", timeout=1):
            return True
    except OSError:
        return False


@contextmanager
def fake(python: str, script: str, port: int, record: Path, *args: str) -> Iterator[int]:
    """A fake API server from fakes/ on ``port``, logging every request to ``record``."""
    log = record.with_suffix(".log")
    with open(log, "ab") as err:
        proc = subprocess.Popen(
            [
                python,
                str(FAKES / script),
                "--port",
                str(port),
                "--record",
                str(record),
                "--max-lifetime",
                "1200",
                *args,
            ],
            stdout=subprocess.DEVNULL,
            stderr=err,
            cwd=FAKES,
        )
    try:
        if not wait_until(lambda: _healthy(port), 20):
            raise RuntimeError(f"fake server {script} did not start (see {log})")
        yield port
    finally:
        stop(proc)


@contextmanager
def proxy(ctxviewer: Sequence[str], upstream: int, out: Path) -> Iterator[int]:
    """``ctxviewer proxy`` on PROXY_PORT recording to ``out``, forwarding every API it
    routes (Anthropic, OpenAI, Gemini) to the fake."""
    url = f"http://127.0.0.1:{upstream}"
    with open(out.with_suffix(".proxy.txt"), "ab") as log:
        proc = subprocess.Popen(
            [
                *ctxviewer,
                "proxy",
                "--port",
                str(PROXY_PORT),
                "--upstream",
                url,
                "--openai-upstream",
                url,
                "--gemini-upstream",
                url,
                "--out",
                str(out),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        if not wait_until(lambda: out.exists() and out.stat().st_size > 0, 20):
            raise RuntimeError(f"ctxviewer proxy did not start (see {out}.proxy.txt)")
        yield PROXY_PORT
    finally:
        stop(proc)


def run(cmd: Sequence[str], env: dict[str, str], cwd: Path, out: Path, timeout: float = 120) -> int:
    """Run an agent to its end: stdout to ``out``, stderr beside it; the exit code (124:
    timed out)."""
    with open(out, "wb") as so, open(out.with_suffix(out.suffix + ".err"), "wb") as se:
        try:
            return subprocess.run(
                list(cmd),
                env=env,
                cwd=cwd,
                stdout=so,
                stderr=se,
                stdin=subprocess.DEVNULL,
                timeout=timeout,
            ).returncode
        except subprocess.TimeoutExpired:
            return 124


class Tmux:
    """An agent's TUI in a tmux session on a private socket."""

    def __init__(self, socket: str, width: int = 200, height: int = 60) -> None:
        self.base = ["tmux", "-L", socket]
        self.size = (str(width), str(height))

    def start(self, command: str, cwd: Path, env: dict[str, str]) -> None:
        self.kill()
        # `timeout --foreground`: a plain timeout puts the TUI in a background process group,
        # where it stops on SIGTTIN without drawing anything
        subprocess.run(
            [
                *self.base,
                "new-session",
                "-d",
                "-s",
                "agent",
                "-x",
                self.size[0],
                "-y",
                self.size[1],
                "-c",
                str(cwd),
                f"timeout --foreground 300 {command}; echo AGENT-EXITED rc=$?; sleep 5",
            ],
            env=env,
            check=True,
        )

    def screen(self, ansi: bool = False, lines: int = 2000) -> str:
        cmd = [*self.base, "capture-pane", "-p", "-J", "-S", f"-{lines}", "-t", "agent"]
        if ansi:
            cmd.insert(4, "-e")
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        return done.stdout

    def type(self, text: str, settle: float = 1.0) -> None:
        """Type a line and press Enter: two send-keys calls (one call is taken as a paste)."""
        subprocess.run([*self.base, "send-keys", "-t", "agent", "-l", text], check=False)
        time.sleep(settle)
        subprocess.run([*self.base, "send-keys", "-t", "agent", "Enter"], check=False)

    def key(self, *keys: str) -> None:
        subprocess.run([*self.base, "send-keys", "-t", "agent", *keys], check=False)

    def wait_for(self, text: str, seconds: float, since: int = 0) -> bool:
        """Wait until ``text`` shows on the screen after its first ``since`` occurrences."""
        return wait_until(lambda: self.screen().count(text) > since, seconds, step=1.0)

    def kill(self) -> None:
        subprocess.run([*self.base, "kill-server"], stderr=subprocess.DEVNULL, check=False)


def after_prompt(screen: str, typed: str) -> str:
    """The screen from the last line where ``typed`` was entered (a prompt glyph, the text and
    nothing else on the line): the agent's answer to it."""
    lines = screen.splitlines()
    pattern = re.compile(r"^\s*(?:[❯>›]\s*)?" + re.escape(typed) + r"\s*$")
    found = [i for i, line in enumerate(lines) if pattern.match(line)]
    return "\n".join(lines[found[-1] :] if found else []) + "\n"


def processes_under(path: Path) -> list[int]:
    """PIDs of processes whose command line names ``path`` (a daemon an agent left behind)."""
    needle = str(path).encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def stop_pids(pids: list[int]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        if not wait_until(lambda: not any(Path(f"/proc/{p}").exists() for p in pids), 3):
            continue
        return
