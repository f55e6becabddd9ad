"""Desktop integration files and the per-user install (issue: double-click a log)."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from ctxviewer.cli import main
from ctxviewer.resources import resource

DESKTOP = resource("desktop", "ctxviewer.desktop")
MIME = resource("desktop", "ctxviewer-mime.xml")
NS = "{http://www.freedesktop.org/standards/shared-mime-info}"


def _entry(path):
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def test_desktop_entry_is_valid():
    e = _entry(DESKTOP)
    assert e["Type"] == "Application" and e["Name"] == "ctxviewer"
    assert e["Exec"].endswith(" %f") and e["Icon"] == "ctxviewer"
    assert e["Categories"].endswith(";") and e["MimeType"].endswith(";")
    assert "application/x-ctxviewer-recording" in e["MimeType"].split(";")
    if shutil.which("desktop-file-validate"):
        proc = subprocess.run(
            ["desktop-file-validate", str(DESKTOP)], capture_output=True, text=True
        )
        assert proc.returncode == 0 and not proc.stdout.strip(), proc.stdout


def test_mime_types_are_valid_and_cover_the_entry():
    root = ET.parse(MIME).getroot()
    types = {t.get("type"): t for t in root.findall(f"{NS}mime-type")}
    assert {
        "application/x-ctxviewer-recording",
        "application/x-ctxviewer-session",
        "application/jsonl",
    } <= set(types)
    magic = [m.get("value") for m in types["application/x-ctxviewer-recording"].iter(f"{NS}match")]
    assert '{"ctxviewer":1' in magic  # how the proxy writes its first line (orjson)
    declared = set(_entry(DESKTOP)["MimeType"].strip(";").split(";"))
    assert set(types) <= declared
    # not every JSON document: a Gemini CLI chat is claimed by its name and first key
    assert "application/json" not in declared
    chat = types["application/x-ctxviewer-chat"]
    assert [g.get("pattern") for g in chat.iter(f"{NS}glob")] == ["session-*.json"]


def test_install_and_uninstall_into_a_temporary_xdg_home(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    assert main(["--install-desktop"]) == 0
    out = capsys.readouterr().out
    base = tmp_path / "share"
    entry = base / "applications" / "ctxviewer.desktop"
    assert entry.exists() and str(entry) in out
    e = _entry(entry)
    command = e["Exec"].removesuffix(" %f")
    assert "ctxviewer" in command and command != "ctxviewer"  # absolute: works outside PATH
    assert (base / "mime" / "packages" / "ctxviewer.xml").exists()
    assert (base / "icons" / "hicolor" / "scalable" / "apps" / "ctxviewer.svg").exists()
    for size in (16, 48, 256):
        assert (base / "icons" / "hicolor" / f"{size}x{size}" / "apps" / "ctxviewer.png").exists()
    if shutil.which("update-mime-database"):
        assert "update-mime-database" in out
        globs = (base / "mime" / "globs2").read_text()
        assert "application/x-ctxviewer-recording" in globs
        assert ":application/x-ctxviewer-chat:session-*.json" in globs
        assert "application/json:" not in globs
    if shutil.which("desktop-file-validate"):
        proc = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout
    assert main(["--uninstall-desktop"]) == 0
    assert not entry.exists()
    assert not list(base.rglob("ctxviewer.png")) and not list(base.rglob("ctxviewer.svg"))


def test_install_flags_are_exclusive(capsys):
    assert main(["--install-desktop", "--uninstall-desktop"]) == 2
    assert "not allowed" in capsys.readouterr().err


@pytest.mark.parametrize("size", [16, 32, 48, 64, 128, 256, 512])
def test_icon_sizes_are_shipped(size):
    png = resource("icons", "hicolor", f"{size}x{size}", "apps", "ctxviewer.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
