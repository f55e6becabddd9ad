"""The file dialog: typing a path under /proc lists it without reading a file (Qt's
own dialog used to read /proc/kmsg and freeze), and special targets are refused."""

from __future__ import annotations

import faulthandler
import os
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QFileInfo, Qt, QTimer
from PySide6.QtWidgets import QCompleter, QFileDialog, QFileIconProvider, QLineEdit

from ctxviewer.gui.widgets.file_dialog import FileDialog, NameOnlyIcons

PNG_MAGIC = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


@pytest.fixture
def freeze_guard():
    """A freeze of the GUI thread fails the run after a minute instead of hanging it."""
    faulthandler.dump_traceback_later(60, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def dialog(
    qtbot, tmp_path: Path, *, save: bool = True, filter_: str = "PNG image (*.png)"
) -> FileDialog:
    d = FileDialog(None, "Export bar as PNG", str(tmp_path / "bar.png"), filter_, save=save)
    d.setOption(QFileDialog.Option.DontUseNativeDialog, True)  # the one that froze
    d.refused = []
    d.refuse = d.refused.append
    qtbot.addWidget(d)
    d.show()
    qtbot.waitExposed(d)
    qtbot.wait(300)  # the folder's listing comes from a thread: let it land, as a user does
    return d


def type_path(qtbot, d: FileDialog, text: str, *, enter: bool = False) -> None:
    edit = d.findChild(QLineEdit, "fileNameEdit")
    edit.clear()
    qtbot.keyClicks(edit, text)
    if enter:
        qtbot.keyClick(edit, Qt.Key.Key_Return)


def test_types_are_named_by_name_not_by_content(tmp_path):
    png = tmp_path / "notes"  # no extension: only the content says PNG
    png.write_bytes(PNG_MAGIC)
    info = QFileInfo(str(png))
    assert QFileIconProvider().type(info) == "PNG image"  # Qt's reads the file
    ours = NameOnlyIcons()
    assert ours.type(info) != "PNG image"
    assert ours.type(QFileInfo(str(tmp_path / "trace.jsonl"))) != ""
    assert ours.type(QFileInfo(str(tmp_path))) == QFileIconProvider().type(QFileInfo(str(tmp_path)))
    assert not ours.icon(info).isNull()


def test_typing_a_proc_path_keeps_the_app_responsive(qtbot, tmp_path, freeze_guard):
    d = dialog(qtbot, tmp_path, filter_="All files (*)")  # PNG alone would hide kmsg
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    start = time.perf_counter()
    type_path(qtbot, d, "/proc/km")
    completer = d.findChild(QLineEdit, "fileNameEdit").completer()
    assert isinstance(completer, QCompleter)
    # the dialog really lists /proc: its completer offers kmsg
    qtbot.waitUntil(lambda: completer.completionCount() > 0, timeout=10000)
    completer.setCurrentRow(0)
    assert completer.currentCompletion() == "/proc/kmsg"
    qtbot.wait(300)
    timer.stop()
    gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
    assert len(ticks) > 5 and max(gaps) < 2.0
    edit = d.findChild(QLineEdit, "fileNameEdit")
    qtbot.keyClicks(edit, "sg")  # on to /proc/kmsg, and Enter
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert time.perf_counter() - start < 15
    assert d.isVisible() and d.result() != QFileDialog.DialogCode.Accepted
    assert d.refused == [
        "/proc/kmsg is in /proc, the system's kernel files, not a place to "
        "save to: choose a file in an ordinary folder"
    ]


@pytest.mark.parametrize("target", ["/dev/null", "/sys/kernel/notes", "fifo", "socket"])
def test_save_refuses_special_targets(qtbot, tmp_path, target, freeze_guard):
    if target == "fifo":
        target = str(tmp_path / "pipe.png")
        os.mkfifo(target)
    elif target == "socket":
        import socket

        target = str(tmp_path / "s.png")
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(target)
    d = dialog(qtbot, tmp_path)
    type_path(qtbot, d, target, enter=True)
    assert d.isVisible() and len(d.refused) == 1
    assert d.refused[0].startswith(target + " is ")
    assert d.result() != QFileDialog.DialogCode.Accepted


def test_save_accepts_an_ordinary_file(qtbot, tmp_path):
    d = dialog(qtbot, tmp_path)
    type_path(qtbot, d, str(tmp_path / "out.png"), enter=True)
    assert d.refused == []
    assert d.result() == QFileDialog.DialogCode.Accepted
    assert d.selectedFiles() == [str(tmp_path / "out.png")]


def test_open_refuses_a_kernel_file(qtbot, tmp_path, freeze_guard):
    d = dialog(qtbot, tmp_path, save=False)
    type_path(qtbot, d, "/proc/kmsg", enter=True)
    assert d.refused == ["/proc/kmsg is in /proc, the system's files, not a session log"]
    assert d.isVisible()


def test_the_plots_own_export_uses_the_safe_dialog(qtbot, window, tmp_path, freeze_guard):
    """Right-click > Export... on a plot (pyqtgraph's exporters) asks with FileDialog."""
    from pyqtgraph.exporters import ImageExporter

    plot = window.timeline.plot
    exporter = ImageExporter(plot.getPlotItem())
    exporter.export()  # no file name: pyqtgraph asks for one
    d = exporter.fileDialog
    assert isinstance(d, FileDialog)
    d.setOption(QFileDialog.Option.DontUseNativeDialog, True)
    d.refused = []
    d.refuse = d.refused.append
    qtbot.addWidget(d)
    qtbot.waitExposed(d)
    qtbot.wait(300)
    saved = []
    d.fileSelected.connect(saved.append)
    type_path(qtbot, d, "/proc/kmsg", enter=True)
    assert d.refused and d.refused[0].startswith("/proc/kmsg is in /proc") and saved == []
    d.setDirectory(str(tmp_path))
    qtbot.wait(300)
    type_path(qtbot, d, str(tmp_path / "timeline.png"), enter=True)
    qtbot.waitUntil(lambda: (tmp_path / "timeline.png").is_file(), timeout=5000)
