"""The window's recording proxy writes to ~/ctxviewer-recordings/ by default: the library
reads that folder as it reads the agents' folders, without being told."""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest
from library_tree import fake_home

from ctxviewer.ingest.discover import recordings_folder
from ctxviewer.library import Library
from ctxviewer.resources import demo_session_path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fake_home(tmp_path, monkeypatch)


def test_the_proxys_folder_is_in_the_library(home: Path) -> None:
    assert recordings_folder() == home / "ctxviewer-recordings"
    with Library() as lib:
        lib.scan()
        assert lib.sessions() == []  # the folder need not exist
    rec = recordings_folder() / "recording-20260101-101010.jsonl"
    rec.parent.mkdir()
    rec.write_bytes(lzma.decompress(demo_session_path().read_bytes()))
    with Library() as lib:
        lib.scan()
        rows = lib.sessions()
        assert lib.folders() == []  # not added: read as the agents' folders are
    assert [r["path"] for r in rows] == [str(rec)]
    assert rows[0]["requests"] == 55
