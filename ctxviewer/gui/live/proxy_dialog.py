"""The "Start recording proxy" dialog: settings in, then the line to paste.

A passive view: ``start_requested(ProxySettings)`` asks its owner to start
the proxy; the owner answers with ``set_running(url, out)`` or
``set_error(message)``.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ctxviewer.gui.live.proxy_control import ProxySettings, default_output, env_lines
from ctxviewer.gui.widgets.file_dialog import ask_path


class ProxyDialog(QDialog):
    start_requested = Signal(object)  # ProxySettings

    def __init__(
        self, settings: ProxySettings | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Start recording proxy")
        s = settings or ProxySettings()
        self.port = QSpinBox(self)
        self.port.setRange(0, 65535)
        self.port.setValue(s.port)
        self.port.setSpecialValueText("any free port")
        self.upstream = QLineEdit(s.upstream, self)
        self.openai_upstream = QLineEdit(s.openai_upstream, self)
        self.out = QLineEdit(s.out or default_output(), self)
        browse = QPushButton("Browse…", self)
        browse.clicked.connect(self._on_browse_clicked)
        out_row = QHBoxLayout()
        out_row.addWidget(self.out, 1)
        out_row.addWidget(browse)
        form = QFormLayout()
        form.addRow("Port (0 = any free):", self.port)
        form.addRow("Anthropic upstream:", self.upstream)
        form.addRow("OpenAI upstream:", self.openai_upstream)
        form.addRow("Record to:", out_row)
        self.rewriting = QCheckBox(
            "Let me compact live conversations from the window "
            "(Proxy > Compact a live conversation…)",
            self,
        )
        self.rewriting.setChecked(s.rewriting)
        self.rewriting.setToolTip(
            "Off by default. On: the proxy can rewrite the requests of "
            "the conversations you pick, after a preview; the recording "
            "keeps what the agent sent and what went upstream."
        )
        form.addRow("", self.rewriting)
        self.hint = QLabel("Then point your agent at it:", self)
        self.env = QPlainTextEdit(self)
        self.env.setReadOnly(True)
        self.env.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.env.setMaximumHeight(self.env.fontMetrics().lineSpacing() * 3 + 16)
        self.copy_button = QPushButton("Copy", self)
        self.copy_button.clicked.connect(self._on_copy_clicked)
        env_row = QHBoxLayout()
        env_row.addWidget(self.env, 1)
        env_row.addWidget(self.copy_button, 0, Qt.AlignmentFlag.AlignTop)
        self.error = QLabel(self)
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #d04040")
        self.error.hide()
        self.buttons = QDialogButtonBox(self)
        self.start_button = self.buttons.addButton("Start", QDialogButtonBox.ButtonRole.AcceptRole)
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.start_button.clicked.connect(self._on_start_clicked)
        self.close_button.clicked.connect(self.reject)
        box = QVBoxLayout(self)
        box.addLayout(form)
        box.addWidget(self.hint)
        box.addLayout(env_row)
        box.addWidget(self.error)
        box.addWidget(self.buttons)
        self.port.valueChanged.connect(self._on_port_value_changed)
        self._on_port_value_changed(self.port.value())
        self.resize(620, self.sizeHint().height())

    def settings(self) -> ProxySettings:
        return ProxySettings(
            self.port.value(),
            self.upstream.text().strip(),
            self.openai_upstream.text().strip(),
            self.out.text().strip(),
            self.rewriting.isChecked(),
        )

    def set_running(self, url: str, out: str) -> None:
        """The proxy runs: show the lines to paste; the settings can no longer change."""
        self.env.setPlainText("\n".join(env_lines(url)))
        self.hint.setText(f"Recording to {out}\nPoint your agent at it (in its shell):")
        self.error.hide()
        for w in (
            self.port,
            self.upstream,
            self.openai_upstream,
            self.out,
            self.rewriting,
            self.start_button,
        ):
            w.setEnabled(False)
        self.close_button.setDefault(True)

    def set_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.show()

    def env_text(self) -> str:
        return self.env.toPlainText()

    def _on_port_value_changed(self, port: int) -> None:
        self.env.setPlainText("\n".join(env_lines(f"http://127.0.0.1:{port or 'PORT'}")))

    def _on_start_clicked(self) -> None:
        self.error.hide()
        self.start_requested.emit(self.settings())

    def _on_copy_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self.env_text())

    def _on_browse_clicked(self) -> None:
        path = ask_path(self, "Record to", self.out.text(), "Recordings (*.jsonl)", save=True)
        if path:
            self.out.setText(path)
