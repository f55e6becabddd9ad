"""Can Qt open a window here? Checked before the application is created.

On Linux, Qt aborts the process (SIGABRT, exit 134) when its platform plugin
cannot be loaded, and its message names ``libxcb-cursor0`` whatever is really
missing. ``missing_libraries`` loads the plugin the way Qt would (``dlopen``)
before Qt does; when that fails, ``ldd`` lists every shared library the plugin
lacks, and ``problem`` turns them into one line: what is missing and the
command that installs it on Debian/Ubuntu, Fedora and Arch.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

# shared library (its soname's stem) -> package on (Debian/Ubuntu, Fedora, Arch)
PACKAGES: dict[str, tuple[str, str, str]] = {
    "libxcb-cursor": ("libxcb-cursor0", "xcb-util-cursor", "xcb-util-cursor"),
    "libxcb-icccm": ("libxcb-icccm4", "xcb-util-wm", "xcb-util-wm"),
    "libxcb-keysyms": ("libxcb-keysyms1", "xcb-util-keysyms", "xcb-util-keysyms"),
    "libxcb-image": ("libxcb-image0", "xcb-util-image", "xcb-util-image"),
    "libxcb-render-util": ("libxcb-render-util0", "xcb-util-renderutil", "xcb-util-renderutil"),
    "libxcb-util": ("libxcb-util1", "xcb-util", "xcb-util"),
    "libxcb-xkb": ("libxcb-xkb1", "libxcb", "libxcb"),
    "libxcb-randr": ("libxcb-randr0", "libxcb", "libxcb"),
    "libxcb-shape": ("libxcb-shape0", "libxcb", "libxcb"),
    "libxcb-shm": ("libxcb-shm0", "libxcb", "libxcb"),
    "libxcb-sync": ("libxcb-sync1", "libxcb", "libxcb"),
    "libxcb-xfixes": ("libxcb-xfixes0", "libxcb", "libxcb"),
    "libxcb-render": ("libxcb-render0", "libxcb", "libxcb"),
    "libxcb-xinput": ("libxcb-xinput0", "libxcb", "libxcb"),
    "libxcb-glx": ("libxcb-glx0", "libxcb", "libxcb"),
    "libxcb": ("libxcb1", "libxcb", "libxcb"),
    "libX11-xcb": ("libx11-xcb1", "libX11-xcb", "libx11"),
    "libX11": ("libx11-6", "libX11", "libx11"),
    "libxkbcommon-x11": ("libxkbcommon-x11-0", "libxkbcommon-x11", "libxkbcommon-x11"),
    "libxkbcommon": ("libxkbcommon0", "libxkbcommon", "libxkbcommon"),
    "libEGL": ("libegl1", "libglvnd-egl", "libglvnd"),
    "libGL": ("libgl1", "libglvnd-glx", "libglvnd"),
    "libOpenGL": ("libopengl0", "libglvnd-opengl", "libglvnd"),
    "libGLX": ("libglx0", "libglvnd-glx", "libglvnd"),
    "libfontconfig": ("libfontconfig1", "fontconfig", "fontconfig"),
    "libfreetype": ("libfreetype6", "freetype", "freetype2"),
    "libdbus-1": ("libdbus-1-3", "dbus-libs", "dbus"),
    "libglib-2.0": ("libglib2.0-0", "glib2", "glib2"),
    "libgthread-2.0": ("libglib2.0-0", "glib2", "glib2"),
    "libwayland-client": ("libwayland-client0", "libwayland-client", "wayland"),
    "libwayland-cursor": ("libwayland-cursor0", "libwayland-cursor", "wayland"),
    "libwayland-egl": ("libwayland-egl1", "libwayland-egl", "wayland"),
}
INSTALLERS = (
    ("Debian/Ubuntu", "sudo apt install"),
    ("Fedora", "sudo dnf install"),
    ("Arch", "sudo pacman -S"),
)
NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.M)
CANNOT_LOAD = re.compile(r"error while loading shared libraries: ([^:]+):")


def platforms(env: Mapping[str, str] = os.environ) -> list[str]:
    """The platform plugins Qt will try, in order: ``QT_QPA_PLATFORM``'s (``a;b``, each
    maybe with ``:options``), else Wayland then X11 in a Wayland session, else X11."""
    chosen = env.get("QT_QPA_PLATFORM", "")
    if chosen:
        return [p.split(":", 1)[0].strip() for p in chosen.split(";") if p.strip()]
    if env.get("XDG_SESSION_TYPE") == "wayland" and env.get("WAYLAND_DISPLAY"):
        return ["wayland", "xcb"]
    return ["xcb"]


def plugin_file(name: str, folders: Sequence[Path]) -> Path | None:
    """The file of platform plugin ``name`` (``libq<name>.so``) in ``folders``."""
    for folder in folders:
        path = folder / f"libq{name}.so"
        if path.is_file():
            return path
    return None


def plugin_folders(env: Mapping[str, str] = os.environ) -> list[Path]:
    """Where Qt looks for platform plugins: the environment's folders, then its own."""
    from PySide6.QtCore import QLibraryInfo  # QtCore only: no platform plugin loaded

    folders = [Path(p) for p in env.get("QT_QPA_PLATFORM_PLUGIN_PATH", "").split(os.pathsep) if p]
    folders += [Path(p) / "platforms" for p in env.get("QT_PLUGIN_PATH", "").split(os.pathsep) if p]
    folders.append(Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)) / "platforms")
    return folders


def missing_libraries(
    plugin: Path, load: Callable[[str], object] = ctypes.CDLL, ldd: str | None = None
) -> list[str]:
    """The shared libraries ``plugin`` needs and cannot find ([] when it loads).

    ``load`` opens it as Qt does (once loaded, Qt finds it loaded); on failure ``ldd``
    lists every missing library, and the loader's own error names at least one."""
    try:
        load(str(plugin))
        return []
    except OSError as e:
        error = str(e)
    found: list[str] = []
    import shutil  # only when the plugin cannot be loaded
    import subprocess

    first = error.split(":", 1)[0].strip()
    if first and first != str(plugin):
        found.append(os.path.basename(first))
    ldd = ldd if ldd is not None else shutil.which("ldd")
    if ldd:
        try:
            out = subprocess.run(
                [ldd, str(plugin)], capture_output=True, text=True, timeout=10, check=False
            )
            text = out.stdout + out.stderr
            found += NOT_FOUND.findall(text)
            found += [os.path.basename(m) for m in CANNOT_LOAD.findall(text)]
        except (OSError, subprocess.SubprocessError):
            pass
    return list(dict.fromkeys(found)) or [error]


def _stem(library: str) -> str:
    """``libxcb-icccm.so.4`` -> ``libxcb-icccm``."""
    return library.split(".so", 1)[0]


def install_hint(libraries: Sequence[str]) -> str:
    """The commands that install ``libraries`` (those it knows) on each family."""
    known = [PACKAGES[_stem(lib)] for lib in libraries if _stem(lib) in PACKAGES]
    if not known:
        return (
            "reinstall PySide6 (pip install --force-reinstall PySide6)"
            if any(_stem(lib).startswith("libQt6") for lib in libraries)
            else ""
        )
    hints = []
    for i, (family, command) in enumerate(INSTALLERS):
        packages = " ".join(dict.fromkeys(p[i] for p in known))
        hints.append(f"{family}: {command} {packages}")
    return "; ".join(hints)


def problem(
    env: Mapping[str, str] = os.environ,
    folders: Sequence[Path] | None = None,
    load: Callable[[str], object] = ctypes.CDLL,
) -> str | None:
    """One line saying why Qt cannot open a window here, or None when it can (or when
    the platform's plugin is not found: Qt then says so itself)."""
    if not sys.platform.startswith("linux"):
        return None
    folders = list(folders) if folders is not None else plugin_folders(env)
    failures: list[tuple[str, list[str]]] = []
    for name in platforms(env):
        plugin = plugin_file(name, folders)
        if plugin is None:
            return None
        missing = missing_libraries(plugin, load)
        if not missing:
            return None
        failures.append((name, missing))
    if not failures:
        return None
    libraries = list(dict.fromkeys(lib for _n, libs in failures for lib in libs))
    names = " or ".join(f"'{n}'" for n, _l in failures)
    hint = install_hint(libraries)
    return f"Qt cannot load its {names} platform plugin: missing {', '.join(libraries)}" + (
        f"; install: {hint}" if hint else ""
    )
