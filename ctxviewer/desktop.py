"""Per-user desktop integration on freedesktop systems (Linux, BSD).

``ctxviewer --install-desktop`` copies the ``.desktop`` entry, the MIME types
and the icons under ``$XDG_DATA_HOME`` (default ``~/.local/share``), with
``Exec`` pointing at this very installation, then refreshes the desktop, MIME
and icon databases when their tools exist. ``--uninstall-desktop`` removes
exactly what was installed. No root, no Qt.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ctxviewer.resources import resource

DESKTOP_FILE = "ctxviewer.desktop"
MIME_FILE = "ctxviewer.xml"
ICON_NAME = "ctxviewer"


@dataclass
class DesktopResult:
    """What installing or removing the desktop entry did."""

    written: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    refreshed: list[str] = field(default_factory=list)  # database tools that ran
    missing_tools: list[str] = field(default_factory=list)


def data_home() -> Path:
    value = os.environ.get("XDG_DATA_HOME")
    return Path(value) if value else Path.home() / ".local" / "share"


def launch_command() -> str:
    """The command that starts this installation, for ``Exec=``."""
    script = shutil.which("ctxviewer")
    venv_script = Path(sys.executable).with_name("ctxviewer")
    if venv_script.exists():
        script = str(venv_script)
    if getattr(sys, "frozen", False):
        return shlex.quote(sys.executable)
    if script:
        return shlex.quote(script)
    return f"{shlex.quote(sys.executable)} -m ctxviewer"


def _targets(base: Path) -> dict[Path, Path]:
    """installed path -> source in resources/"""
    out = {
        base / "applications" / DESKTOP_FILE: resource("desktop", "ctxviewer.desktop"),
        base / "mime" / "packages" / MIME_FILE: resource("desktop", "ctxviewer-mime.xml"),
        base / "icons" / "hicolor" / "scalable" / "apps" / f"{ICON_NAME}.svg": resource(
            "icons", "ctxviewer.svg"
        ),
    }
    hicolor = resource("icons", "hicolor")
    for png in sorted(hicolor.glob("*/apps/ctxviewer.png")):
        out[base / "icons" / "hicolor" / png.relative_to(hicolor)] = png
    return out


def _desktop_entry(source: Path, command: str) -> str:
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        if line.startswith("Exec="):
            line = f"Exec={command} %f"
        elif line.startswith("TryExec="):
            line = f"TryExec={shlex.split(command)[0]}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def _refresh(base: Path, result: DesktopResult) -> None:
    tools = [
        ("update-desktop-database", [str(base / "applications")]),
        ("update-mime-database", [str(base / "mime")]),
        ("gtk-update-icon-cache", ["-f", "-t", str(base / "icons" / "hicolor")]),
    ]
    for tool, args in tools:
        exe = shutil.which(tool)
        if exe is None:
            result.missing_tools.append(tool)
            continue
        subprocess.run([exe, *args], capture_output=True, timeout=60, check=False)
        result.refreshed.append(tool)


def install(base: Path | None = None, command: str | None = None) -> DesktopResult:
    base = base or data_home()
    command = command or launch_command()
    result = DesktopResult()
    for target, source in _targets(base).items():
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.name == DESKTOP_FILE:
            target.write_text(_desktop_entry(source, command), encoding="utf-8")
            target.chmod(0o755)
        else:
            shutil.copyfile(source, target)
        result.written.append(target)
    _refresh(base, result)
    return result


def uninstall(base: Path | None = None) -> DesktopResult:
    base = base or data_home()
    result = DesktopResult()
    for target in _targets(base):
        if target.exists():
            target.unlink()
            result.removed.append(target)
    _refresh(base, result)
    return result
