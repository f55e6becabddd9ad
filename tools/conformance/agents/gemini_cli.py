"""Gemini CLI (npm ``@google/gemini-cli``): two turns (``-p``, then ``-r latest -p``) with
``-o json``.

Gemini CLI has no ``/context``. Its own numbers are what it reports and what its code says:
the last turn's ``-o json`` stats (the main model's prompt tokens: one main request that
turn), and the window (``DEFAULT_TOKEN_LIMIT``) and compression threshold
(``DEFAULT_COMPRESSION_TOKEN_THRESHOLD``) read from the installed bundle into
``source.json``. Through ``ctxviewer proxy`` (``--gemini-upstream``) its calls are recorded
as Gemini calls, the model router's among them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from conformance import processes
from conformance.agents.base import GEMINI_KEY, Run, Scenario, copy_newest, first_line

FAKE_PORT = 18092
TURNS = ("Please look at hello.py and tell me what it does.", "Second turn: say OK.")
CONSTANTS = {
    "window": r"\bDEFAULT_TOKEN_LIMIT = ([\d.e]+);",
    "compression_threshold": r"\bDEFAULT_COMPRESSION_TOKEN_THRESHOLD = ([\d.]+);",
}


class GeminiCli:
    name = "gemini-cli"
    package = "@google/gemini-cli"
    default_version = "0.61.0"
    scenarios = (
        Scenario("direct", False, "2 turns with -o json"),
        Scenario("proxy", True, "2 turns with -o json"),
    )

    def command(self, prefix: Path) -> list[str]:
        return ["node", str(prefix / "node_modules/@google/gemini-cli/bundle/gemini.js")]

    def installed_version(self, prefix: Path) -> str | None:
        return first_line([*self.command(prefix), "--version"])

    def run(self, run: Run) -> None:
        bundle = Path(run.command[-1]).parent
        (run.out / "source.json").write_text(json.dumps(source_constants(bundle)) + "\n", "utf-8")
        with processes.fake(run.box.python, "gemini_api.py", FAKE_PORT, run.out / "fake.jsonl"):
            if run.scenario.via_proxy:
                with processes.proxy(
                    run.ctxviewer, FAKE_PORT, run.out / "recording.rec.jsonl"
                ) as port:
                    self._converse(run, port)
            else:
                self._converse(run, FAKE_PORT)
        copy_newest(".gemini/tmp/*/chats/session-*", run.box.home, run.out / "chat.jsonl")
        logs = {"chat": "chat.jsonl"}
        if run.scenario.via_proxy:
            logs = {"recording": "recording.rec.jsonl", **logs}
        run.write_case(
            {"-o json": f"turn{len(TURNS)}.json", "source": "source.json"},
            logs,
            "recording.rec.jsonl" if run.scenario.via_proxy else "fake.jsonl",
        )

    def _converse(self, run: Run, port: int) -> None:
        env = run.env(
            GEMINI_API_KEY=GEMINI_KEY,
            GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{port}",
            GEMINI_CLI_NO_RELAUNCH="1",
        )
        for i, prompt in enumerate(TURNS, 1):
            resume = ["-r", "latest"] if i > 1 else []
            rc = processes.run(
                [*run.command, "-y", "-o", "json", *resume, "-p", prompt],
                env,
                run.box.proj,
                run.out / f"turn{i}.json",
            )
            run.step(f"turn {i}", rc)


def source_constants(bundle: Path) -> dict[str, float | None]:
    """The window and compression threshold as the installed bundle defines them."""
    found: dict[str, float | None] = dict.fromkeys(CONSTANTS)
    for js in sorted(bundle.glob("*.js")):
        text = js.read_text("utf-8", errors="replace")
        for key, pattern in CONSTANTS.items():
            if found[key] is None and (m := re.search(pattern, text)):
                found[key] = float(m.group(1))
        if all(v is not None for v in found.values()):
            break
    return found
