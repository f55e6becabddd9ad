"""Qt's platform plugin is checked before the application is created: a missing
system library is one line naming it and the command that installs it, exit 2
(Qt itself aborts with SIGABRT and names libxcb-cursor0 whatever is missing)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxviewer.gui import platform_check

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="Qt's platform plugins are checked on Linux"
)


def test_a_broken_system_library_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """The X11 plugin's libxcb-icccm replaced by a broken file (first in the library
    path): the window's start names it and its package, instead of Qt's abort."""
    stub = tmp_path / "lib"
    stub.mkdir()
    (stub / "libxcb-icccm.so.4").write_bytes(b"")  # not a shared library
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QT_", "WAYLAND"))}
    env.update(
        LD_LIBRARY_PATH=str(stub),
        QT_QPA_PLATFORM="xcb",
        DISPLAY=":0",
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    proc = subprocess.run(
        [sys.executable, "-m", "ctxviewer", "--new-instance"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith("ctxviewer: Qt cannot load its 'xcb' platform plugin: missing ")
    assert "libxcb-icccm.so.4" in line
    assert "Debian/Ubuntu: sudo apt install libxcb-icccm4" in line
    assert "Fedora: sudo dnf install xcb-util-wm" in line
    assert "Arch: sudo pacman -S xcb-util-wm" in line


def test_a_plugin_that_loads_is_no_problem() -> None:
    folders = platform_check.plugin_folders({})
    assert platform_check.plugin_file("offscreen", folders) is not None
    assert platform_check.problem({"QT_QPA_PLATFORM": "offscreen"}, folders) is None


def test_every_missing_library_is_named(tmp_path: Path) -> None:
    """A plugin whose loader fails: ldd's 'not found' lines all count, not only the
    first the loader met."""
    plugin = tmp_path / "platforms" / "libqxcb.so"
    plugin.parent.mkdir()
    plugin.write_bytes(b"")
    ldd = tmp_path / "ldd"
    ldd.write_text(
        "#!/bin/sh\necho '\tlibxcb-icccm.so.4 => not found'\n"
        "echo '\tlibxcb-keysyms.so.1 => not found'\n"
        "echo '\tlibc.so.6 => /lib/libc.so.6 (0x1)'\n"
    )
    ldd.chmod(0o755)

    def load(path: str) -> object:
        raise OSError("libxcb-icccm.so.4: cannot open shared object file: No such file")

    assert platform_check.missing_libraries(plugin, load, str(ldd)) == [
        "libxcb-icccm.so.4",
        "libxcb-keysyms.so.1",
    ]
    why = platform_check.problem(
        {"QT_QPA_PLATFORM": "xcb"}, [plugin.parent], load=lambda p: load(p)
    )
    # ldd found on the PATH reads the empty file: the loader's own error names one
    assert why is not None and "libxcb-icccm.so.4" in why and "libxcb-icccm4" in why


def test_the_platforms_qt_tries() -> None:
    assert platform_check.platforms({}) == ["xcb"]
    assert platform_check.platforms(
        {"XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0"}
    ) == ["wayland", "xcb"]
    assert platform_check.platforms({"QT_QPA_PLATFORM": "wayland;xcb:dpi=96"}) == ["wayland", "xcb"]


def test_install_hints() -> None:
    hint = platform_check.install_hint(
        ["libxcb-cursor.so.0", "libxcb-xkb.so.1", "libxcb-randr.so.0"]
    )
    assert hint == (
        "Debian/Ubuntu: sudo apt install libxcb-cursor0 libxcb-xkb1 libxcb-randr0; "
        "Fedora: sudo dnf install xcb-util-cursor libxcb; "
        "Arch: sudo pacman -S xcb-util-cursor libxcb"
    )
    assert "reinstall PySide6" in platform_check.install_hint(["libQt6XcbQpa.so.6"])
    assert platform_check.install_hint(["libunknown.so.1"]) == ""
