"""Paths that are no place for a file: refused from their path and stat alone."""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

import pytest

from ctxviewer.cli import main
from ctxviewer.special_files import pseudo_root, write_refusal

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux paths")


def test_pseudo_roots_follow_links(tmp_path: Path) -> None:
    (tmp_path / "k").symlink_to("/proc")
    assert pseudo_root(str(tmp_path / "k" / "kmsg")) == "/proc"
    assert pseudo_root("/sys/kernel") == "/sys"
    assert pseudo_root("/dev") == "/dev"
    assert pseudo_root("/devices/x") is None  # a name that starts like one
    assert pseudo_root(str(tmp_path / "a.png")) is None


def test_write_refusal(tmp_path: Path) -> None:
    fifo, sock = tmp_path / "pipe", tmp_path / "sock"
    os.mkfifo(fifo)
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock))
    regular = tmp_path / "old.png"
    regular.write_bytes(b"x")
    assert write_refusal(str(regular)) is None
    assert write_refusal(str(tmp_path / "new.png")) is None
    assert (
        write_refusal(str(fifo)) == f"{fifo} is a pipe, not a file: choose a file in an "
        "ordinary folder"
    )
    assert write_refusal(str(sock)).startswith(f"{sock} is a socket,")
    assert write_refusal(str(tmp_path)).startswith(f"{tmp_path} is a folder,")
    assert write_refusal("/proc/kmsg").startswith("/proc/kmsg is in /proc, the system's kernel")
    assert write_refusal("/dev/null").startswith("/dev/null is in /dev, the system's device")
    s.close()


@pytest.mark.parametrize(
    "argv", [["report", "/proc/kmsg"], ["proxy", "--port", "0", "--out", "/proc/kmsg", "--force"]]
)
def test_the_cli_refuses_kernel_files_at_once(argv, capsys) -> None:
    start = time.perf_counter()
    assert main(argv) == 2  # reading /proc/kmsg would block until the kernel logs
    assert time.perf_counter() - start < 5
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "/proc/kmsg is in /proc" in err
