"""The theme: applied at start (``--theme``, View > Theme's choice) and at once when
View > Theme changes it. Qt's widgets follow the application palette by themselves; the
plots pick their colours when they are built, so the widget holding one builds it anew
(``theme_changed``, ``replace_widget``) and gives it what it showed."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QLayout, QSplitter, QStyleFactory, QWidget

from ctxviewer.gui.widgets.palette import dark_palette, is_dark

THEMES = ("auto", "light", "dark")
_PLATFORM_STYLE = "ctxviewer_platform_style"  # the app property holding the style at start


def apply_theme(app: QApplication, theme: str) -> None:
    """``light`` or ``dark``: Fusion with that palette; ``auto``: the platform's style and
    colours (those the app started with)."""
    platform = app.property(_PLATFORM_STYLE)
    if theme in ("light", "dark"):
        if platform is None:  # the style to go back to (asked once: a QStyle costs ~6 ms)
            app.setProperty(_PLATFORM_STYLE, app.style().name())
        style = QStyleFactory.create("Fusion")
        app.setStyle(style)
        app.setPalette(dark_palette() if theme == "dark" else style.standardPalette())
        return
    if platform is None:  # never themed: the platform's style and colours already
        return
    name = str(platform)
    if app.style().name() != name:
        style = QStyleFactory.create(name)
        if style is not None:
            app.setStyle(style)
    app.setPalette(QPalette())  # nothing set: the platform's palette


def theme_changed(event: QEvent, dark: bool) -> bool:
    """Whether ``event`` brings a palette of the other darkness than ``dark``."""
    kinds = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)
    return event.type() in kinds and is_dark() != dark


def replace_widget(old: QWidget, new: QWidget) -> None:
    """Put ``new`` where ``old`` is (in a splitter or a layout); ``old`` goes."""
    parent = old.parentWidget()
    if isinstance(parent, QSplitter):
        sizes = parent.sizes()
        parent.replaceWidget(parent.indexOf(old), new)
        parent.setSizes(sizes)
    else:
        layout = parent.layout() if parent is not None else None
        if isinstance(layout, QLayout):
            layout.replaceWidget(old, new)
    old.hide()
    old.setParent(None)
    old.deleteLater()
