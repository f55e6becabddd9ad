"""``ctxviewer proxy``: bad arguments exit 2; a real run prints the exports and stops cleanly."""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import anthropic
import pytest
from proxy_fakes import API_KEY, FakeUpstream, read_lines

from ctxviewer.cli import main

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "args",
    [
        ["--port", "99999"],
        ["--port", "eighty"],
        ["--upstream", "ftp://example.invalid"],
        ["--openai-upstream", "not a url"],
        ["--timeout", "0"],
        ["--port", "0", "--out", "/no/such/dir/rec.jsonl"],
        ["--strategy", "trim"],  # rewriting options need --compact-at
        ["--summarizer", "anthropic"],
        ["--compact-at", "0"],
        ["--compact-at", "lots"],
        ["--compact-at", "1000", "--strategy", "nope"],
    ],
)
def test_bad_arguments_exit_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["proxy", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ctxviewer: ")


def test_port_in_use_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rec.jsonl"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["proxy", "--port", str(port), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "cannot start the proxy" in err and err.count("\n") == 1
    assert f"cannot listen on 127.0.0.1 port {port}: address already in use" in err
    assert not out.exists()  # no recording for a proxy that never ran


def _lines(stream: object, into: queue.Queue[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        into.put(line.rstrip("\n"))


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_run_prints_exports_records_and_stops_cleanly(
    tmp_path: Path, upstream: FakeUpstream, stop_signal: signal.Signals
) -> None:
    """Ctrl+C (SIGINT) or a service manager's SIGTERM: exit 0, recording complete."""
    out = tmp_path / "rec.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ctxviewer",
            "proxy",
            "--port",
            "0",
            "--out",
            str(out),
            "--upstream",
            upstream.url,
            "--openai-upstream",
            upstream.url,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    ) as proc:
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_lines, args=(proc.stdout, lines), daemon=True).start()
        try:
            _drive(proc, lines, out, stop_signal)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)
        assert lines.get(timeout=5) == f"stopped: 1 exchange recorded to {out}"
        assert proc.stderr is not None and "Traceback" not in proc.stderr.read()
    records = read_lines(out)
    assert [r["type"] for r in records] == ["meta", "exchange"]
    assert API_KEY not in out.read_text()


def _drive(
    proc: subprocess.Popen[str], lines: queue.Queue[str], out: Path, stop_signal: signal.Signals
) -> None:
    """Read the banner, send one request through the proxy, stop it with ``stop_signal``."""
    banner: list[str] = []
    while not banner or not banner[-1].startswith("Ctrl+C"):
        banner.append(lines.get(timeout=20))
    exports = [line for line in banner if line.startswith("export ")]
    base = exports[0].removeprefix("export ANTHROPIC_BASE_URL=")
    assert base.startswith("http://127.0.0.1:") and not base.endswith(":0")
    assert exports == [
        f"export ANTHROPIC_BASE_URL={base}",
        f"export OPENAI_BASE_URL={base}/v1",
        f"export GOOGLE_GEMINI_BASE_URL={base}",
    ]
    assert f"recording to {out}" in banner

    with anthropic.Anthropic(base_url=base, api_key=API_KEY, max_retries=0) as client:
        client.messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "via cli"}]
        )
    exchange_line = lines.get(timeout=20)
    assert exchange_line.startswith("ex_000001") and "anthropic" in exchange_line

    proc.send_signal(stop_signal)
    assert proc.wait(timeout=20) == 0
