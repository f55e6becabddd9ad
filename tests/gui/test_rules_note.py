"""The status bar says where a log's agent is newer than the rules ctxviewer knows, beside the
window and policy those rules gave it."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

ROLLOUT = (
    Path(__file__).parents[1] / "data" / "agents" / "codex-0.171.0" / "proxy" / "rollout.jsonl.xz"
)


def _rollout(tmp_path: Path, version: str) -> str:
    records = [json.loads(x) for x in lzma.decompress(ROLLOUT.read_bytes()).splitlines()]
    records[0]["payload"]["cli_version"] = version
    path = tmp_path / f"rollout-{version}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def test_the_status_bar_says_the_version_is_newer_than_the_rules(
    qtbot, window, open_and_wait, tmp_path
):
    note = (
        "Codex CLI 0.200.0 is newer than the rules ctxviewer knows (up to 0.171.0); using 0.171.0's"
    )
    a = open_and_wait(window, _rollout(tmp_path, "0.200.0"))
    assert a.identity.rules_note == note
    text = window.status.info_text()
    assert note in text and text.index("policy: Codex") < text.index(note)
    assert note in window.status.info.toolTip()
    open_and_wait(window, _rollout(tmp_path, "0.171.0"))
    assert "newer than the rules" not in window.status.info_text()
    assert "newer than the rules" not in window.status.info.toolTip()
