"""What one scenario captured (its ``case.json``), read back from a run's folder or from the
compressed copy under tests/data/agents/, and that copy's making.

``case.json``::

    {"agent": "claude-code", "version": "2.1.332", "scenario": "print", "via": "proxy",
     "what": "print mode (-p), 3 turns, then -p /context",
     "outputs": {"/context": "context.txt"},          # the agent's own numbers
     "logs": {"recording": "recording.rec.jsonl",      # what ctxviewer reads
              "transcript": "transcript.jsonl"},
     "wire": "recording.rec.jsonl",                    # the requests as sent
     "steps": [{"step": "turn 1", "rc": 0}, ...], "notes": []}
"""

from __future__ import annotations

import json
import lzma
import shutil
from dataclasses import dataclass
from pathlib import Path

COMPRESSED = (".xz", ".gz")
# agents whose tables include what was sent (they print no breakdown of their own)
WIRE_AGENTS = ("codex", "gemini-cli")


@dataclass(frozen=True)
class Case:
    folder: Path
    agent: str
    version: str
    scenario: str
    via: str  # "proxy" | "direct"
    what: str
    outputs: dict[str, str]
    logs: dict[str, str]
    wire: str | None
    steps: tuple[dict[str, object], ...]

    @property
    def key(self) -> str:
        """``claude-code-2.1.332/print``: how tests and tables name the case."""
        return f"{self.agent}-{self.version}/{self.scenario}"

    def file(self, name: str) -> Path:
        """A captured file, compressed or not."""
        for suffix in ("", *COMPRESSED):
            path = self.folder / (name + suffix)
            if path.is_file():
                return path
        raise FileNotFoundError(self.folder / name)

    def text(self, name: str) -> str:
        path = self.file(name)
        if path.suffix == ".xz":
            return lzma.decompress(path.read_bytes()).decode("utf-8", "replace")
        if path.suffix == ".gz":
            import gzip

            return gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
        return path.read_text("utf-8", errors="replace")

    @property
    def failed_steps(self) -> list[str]:
        return [f"{s['step']} (rc {s['rc']})" for s in self.steps if s.get("rc")]


def load(folder: Path) -> Case:
    raw = json.loads((folder / "case.json").read_text("utf-8"))
    return Case(
        folder,
        raw["agent"],
        raw["version"],
        raw["scenario"],
        raw["via"],
        raw["what"],
        dict(raw["outputs"]),
        dict(raw["logs"]),
        raw.get("wire"),
        tuple(raw.get("steps", ())),
    )


def find(root: Path) -> list[Case]:
    """Every case under ``root`` (a run's or the test data's folder), in a stable order."""
    return [load(p.parent) for p in sorted(root.rglob("case.json"))]


def save(case: Case, dest: Path) -> list[Path]:
    """Copy a case as test data: ``case.json``, the agent's own output as text, the logs
    xz-compressed, and the wire file where the tables use it. Returns what it wrote."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    raw = json.loads((case.folder / "case.json").read_text("utf-8"))
    keep_wire = case.wire is not None and (
        case.agent in WIRE_AGENTS or case.wire in case.logs.values()
    )
    raw["wire"] = case.wire if keep_wire else None
    written = [dest / "case.json"]
    written[0].write_text(json.dumps(raw, indent=2) + "\n", "utf-8")
    for name in case.outputs.values():
        shutil.copyfile(case.file(name), dest / name)
        written.append(dest / name)
    for name in {*case.logs.values(), *([case.wire] if keep_wire and case.wire else [])}:
        target = dest / (name + ".xz")
        data = lzma.compress(case.file(name).read_bytes(), preset=9 | lzma.PRESET_EXTREME)
        target.write_bytes(data)
        written.append(target)
    return written
