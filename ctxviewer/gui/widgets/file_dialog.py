"""The file dialog of every Open, Export and Save: Qt's own, made safe for the
system's special files.

Qt's non-native dialog (the one on X11 without a desktop portal) names the
type of every file it lists by reading its first bytes (``QMimeDatabase``,
from ``QAbstractFileIconProvider.type``), on the GUI thread. Typing ``/proc/``
lists ``/proc/kmsg``, whose read blocks until the kernel logs something: the
app froze. ``NameOnlyIcons`` names types and picks icons by the file's name
alone, so listing any folder opens no file. A save dialog refuses a target in
``/proc``, ``/sys`` or ``/dev``, a pipe, a socket or a device
(``special_files.write_refusal``) and stays open, saying why.

The plots' own "Export..." (pyqtgraph's right-click menu: PNG, SVG, CSV of a
plot) opens pyqtgraph's file dialog: ``guard_plot_exports`` makes it this one.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6.QtCore import QFileInfo, QMimeDatabase
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QFileDialog, QFileIconProvider, QMessageBox, QWidget

from ctxviewer.special_files import pseudo_root, write_refusal

BY_NAME = QMimeDatabase.MatchMode.MatchExtension


class NameOnlyIcons(QFileIconProvider):
    """Icons and type names from a file's name, never from its content."""

    def __init__(self) -> None:
        super().__init__()
        self._mimes = QMimeDatabase()

    def type(self, info: QFileInfo) -> str:  # noqa: A003 - Qt's name
        if not info.isFile():
            return super().type(info)  # folders, drives, links: no content read
        mime = self._mimes.mimeTypeForFile(info.fileName(), BY_NAME)
        return mime.comment() or mime.name()

    def icon(self, what: QFileIconProvider.IconType | QFileInfo) -> QIcon:
        if isinstance(what, QFileInfo):
            if what.isFile():
                return super().icon(QFileIconProvider.IconType.File)
            return super().icon(what)
        return super().icon(what)


class FileDialog(QFileDialog):
    """A ``QFileDialog`` that lists folders by name only and, saving, refuses a
    special target: ``refuse(message)`` says why (a warning box unless replaced)
    and the dialog stays open."""

    def __init__(
        self, parent: QWidget | None, title: str, path: str, filter_: str, *, save: bool
    ) -> None:
        super().__init__(parent, title, path, filter_)
        self.icons = NameOnlyIcons()  # the dialog does not own it: keep it alive
        self.setIconProvider(self.icons)
        self.setAcceptMode(
            QFileDialog.AcceptMode.AcceptSave if save else QFileDialog.AcceptMode.AcceptOpen
        )
        if not save:
            self.setFileMode(QFileDialog.FileMode.ExistingFile)
        self.refuse: Callable[[str], object] = lambda message: QMessageBox.warning(
            self, title, message
        )

    def refusal(self) -> str | None:
        """Why a chosen path cannot be used, or None. An ordinary folder is not
        refused: accepting it opens it."""
        saving = self.acceptMode() == QFileDialog.AcceptMode.AcceptSave
        for path in sorted(self.selectedFiles(), key=os.path.isdir):  # files first
            root = pseudo_root(path)
            if root is None and os.path.isdir(path):
                continue
            if saving:
                why = write_refusal(path)
            else:
                why = (
                    f"{path} is in {root}, the system's files, not a session log" if root else None
                )
            if why is not None:
                return why
        return None

    def accept(self) -> None:
        why = self.refusal()
        if why is not None:
            self.refuse(why)
            return
        super().accept()

    def chosen(self) -> str:
        """Run the dialog; the path chosen, or "" when cancelled. A native dialog
        cannot be kept open: a refused choice is said and the dialog asked again."""
        while self.exec() == QFileDialog.DialogCode.Accepted:
            why = self.refusal()
            if why is None:
                return self.selectedFiles()[0] if self.selectedFiles() else ""
            self.refuse(why)
        return ""


def ask_path(parent: QWidget | None, title: str, path: str, filter_: str, *, save: bool) -> str:
    return FileDialog(parent, title, path, filter_, save=save).chosen()


class PlotExportDialog(FileDialog):
    """pyqtgraph's exporters build their file dialog with no arguments: this one."""

    def __init__(self, *_: object) -> None:
        super().__init__(None, "Export plot", "", "", save=True)
        self.setFileMode(QFileDialog.FileMode.AnyFile)


def guard_plot_exports() -> None:
    """pyqtgraph's Export... asks for the file with ``PlotExportDialog``."""
    import importlib

    # the module, not the class of the same name that pyqtgraph.exporters exports
    # (setattr: pyqtgraph has no types, so mypy sees no FileDialog attribute to assign)
    exporter = importlib.import_module("pyqtgraph.exporters.Exporter")
    setattr(exporter, "FileDialog", PlotExportDialog)  # noqa: B010
