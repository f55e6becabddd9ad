"""Codex CLI (npm ``@openai/codex``): three ``codex exec`` turns, then one more turn in the TUI
(``codex resume <id>`` in tmux) and its ``/status`` (context window used and size). The
``compaction`` scenario: ``codex exec`` turns whose usage the fake reports as each prompt
scripts it, crossing the auto-compaction limit before a turn and in the middle of one.

A ``model_provider`` in ``$CODEX_HOME/config.toml`` points it at the fake Responses API
(directly or through the proxy). The TUI starts a ``codex app-server`` daemon that outlives
it; the daemon is stopped by its PID (found by the scenario's own CODEX_HOME path).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from conformance import processes
from conformance.agents.base import OPENAI_KEY, Run, Scenario, copy_newest, first_line

FAKE_PORT = 18091
TURNS = (
    "Please look at hello.py and tell me what it does.",
    "Second turn: say OK.",
    "Third turn: summarize in one line.",
)
TUI_TURN = "Fourth turn: say OK."
# Usage crossing the auto-compaction limit (codex-rs: 90% of the model's window; a call's
# total is its input + the fake's 9 output tokens), per the model a version picks:
COMPACTION_TURNS = {
    (0, 171): (  # gpt-6.2-sol: 500,000, limit 450,000
        "First turn: hello A. USAGE=449990",  # 449,999: under the limit
        "Second turn: hello B. USAGE=449992",  # 450,001: compacted before the next turn
        "Third turn: hello C. USAGE=20000",
        "Fourth turn: TOOLCALL please. USAGE=449000 FOLLOW=30000",
        "Fifth turn: done? USAGE=25000",
        "Sixth turn: TOOLCALL again. USAGE=449990 FOLLOW=31000",  # + a tool's output: mid-turn
        "Seventh turn: fine. USAGE=26000",
    ),
    (0, 0): (  # gpt-5.2-codex: 272,000, limit 244,800
        "First turn: hello A. USAGE=20000",
        "Second turn: TOOLCALL think. USAGE=21000 FOLLOW=22000",  # an encrypted reasoning item
        "Third turn: big. USAGE=243500",  # 243,509 + Codex's estimate of that reasoning: over
        "Fourth turn: small. USAGE=15000",
        "Fifth turn: TOOLCALL mid. USAGE=244780 FOLLOW=16000",  # + a tool's output: mid-turn
        "Sixth turn: done. USAGE=17000",
    ),
}
SCRIPTED = (
    "the fake reports the input tokens a prompt names (USAGE=n; FOLLOW=n after a "
    "tool's output), else request JSON length / 4; TOOLCALL gets a reasoning item "
    "(8,000 characters of encrypted content) and a call of an unknown tool first"
)


class Codex:
    name = "codex"
    package = "@openai/codex"
    default_version = "0.171.0"
    scenarios = (
        Scenario("proxy", True, "3 codex exec turns, 1 TUI turn, then /status"),
        Scenario("direct", False, "3 codex exec turns, 1 TUI turn, then /status"),
        Scenario(
            "compaction",
            True,
            "codex exec turns whose scripted usage crosses the "
            "auto-compaction limit before a turn and mid-turn",
        ),
    )

    def command(self, prefix: Path) -> list[str]:
        """The native binary (``codex-<platform>/vendor/<triple>/bin/codex``)."""
        native = sorted(prefix.glob("node_modules/@openai/codex-*/vendor/*/bin/codex")) or sorted(
            prefix.glob("node_modules/@openai/codex-*/vendor/*/codex/codex")
        )  # 0.10x
        return [str(native[0])] if native else [str(prefix / "node_modules/.bin/codex")]

    def installed_version(self, prefix: Path) -> str | None:
        line = first_line([*self.command(prefix), "--version"])  # "codex-cli 0.171.0"
        return line.split()[-1] if line else None

    def run(self, run: Run) -> None:
        if run.scenario.name == "compaction":
            self._compaction(run)
            return
        with processes.fake(
            run.box.python, "openai_responses.py", FAKE_PORT, run.out / "fake.jsonl"
        ):
            if run.scenario.via_proxy:
                with processes.proxy(
                    run.ctxviewer, FAKE_PORT, run.out / "recording.rec.jsonl"
                ) as port:
                    self._converse(run, port)
            else:
                self._converse(run, FAKE_PORT)
        codex_home = run.box.home / ".codex"
        copy_newest("sessions/**/rollout-*.jsonl", codex_home, run.out / "rollout.jsonl")
        logs = {"rollout": "rollout.jsonl"}
        if run.scenario.via_proxy:
            logs = {"recording": "recording.rec.jsonl", **logs}
        run.write_case(
            {"/status": "status.txt"},
            logs,
            "recording.rec.jsonl" if run.scenario.via_proxy else "fake.jsonl",
        )

    def _compaction(self, run: Run) -> None:
        version = tuple(int(x) for x in run.version.split(".")[:2])
        turns = next(t for v, t in sorted(COMPACTION_TURNS.items(), reverse=True) if version >= v)
        with (
            processes.fake(
                run.box.python, "openai_responses.py", FAKE_PORT, run.out / "fake.jsonl"
            ),
            processes.proxy(run.ctxviewer, FAKE_PORT, run.out / "recording.rec.jsonl") as port,
        ):
            env = run.env(CODEX_HOME=str(self._configure(run, port)), FAKE_OPENAI_KEY=OPENAI_KEY)
            for i, prompt in enumerate(turns, 1):
                resume = ["resume", "--last"] if i > 1 else []
                rc = processes.run(
                    [*run.command, "exec", "--skip-git-repo-check", *resume, prompt],
                    env,
                    run.box.proj,
                    run.out / f"turn{i}.out",
                    timeout=180,
                )
                run.step(f"turn {i}", rc)
        copy_newest(
            "sessions/**/rollout-*.jsonl", run.box.home / ".codex", run.out / "rollout.jsonl"
        )
        run.write_case(
            {},
            {"recording": "recording.rec.jsonl", "rollout": "rollout.jsonl"},
            "recording.rec.jsonl",
            [SCRIPTED],
        )

    def _configure(self, run: Run, port: int) -> Path:
        codex_home = run.box.home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        server = run.box.mcp_server(run.box.root / "mcp_calls.log")
        proj = json.dumps(str(run.box.proj))
        (codex_home / "config.toml").write_text(
            f"""model_provider = "fake"
approval_policy = "never"
sandbox_mode = "read-only"

[model_providers.fake]
name = "Fake"
base_url = "http://127.0.0.1:{port}/v1"
env_key = "FAKE_OPENAI_KEY"
wire_api = "responses"

[projects.{proj}]
trust_level = "trusted"

[mcp_servers.notes-weather]
command = {json.dumps(server["command"])}
args = {json.dumps(server["args"])}
env = {{ CONFORMANCE_MCP_LOG = {json.dumps(str(run.box.root / "mcp_calls.log"))} }}
""",
            "utf-8",
        )
        return codex_home

    def _converse(self, run: Run, port: int) -> None:
        codex_home = self._configure(run, port)
        env = run.env(CODEX_HOME=str(codex_home), FAKE_OPENAI_KEY=OPENAI_KEY)
        for i, prompt in enumerate(TURNS, 1):
            resume = ["resume", "--last"] if i > 1 else []
            rc = processes.run(
                [*run.command, "exec", "--skip-git-repo-check", *resume, prompt],
                env,
                run.box.proj,
                run.out / f"turn{i}.out",
            )
            run.step(f"exec turn {i}", rc)
        rollouts = sorted(codex_home.glob("sessions/**/rollout-*.jsonl"))
        found = re.search(r"([0-9a-f-]{36})\.jsonl$", rollouts[-1].name) if rollouts else None
        if found is None:
            run.step("TUI: no rollout to resume", 1)
            return
        try:
            self._tui(run, env, found.group(1))
        finally:
            processes.stop_pids(processes.processes_under(codex_home))

    def _tui(self, run: Run, env: dict[str, str], session: str) -> None:
        tmux = processes.Tmux(f"conformance-codex-{run.scenario.name}", width=180, height=50)
        tmux.start(f"{run.command[0]} resume {session}", run.box.proj, env)
        try:
            ok = tmux.wait_for(TURNS[-1], 30)  # the resumed history is drawn
            if "Trust this folder" in tmux.screen():
                tmux.key("Enter")
                ok = tmux.wait_for(TURNS[-1], 20)
            time.sleep(3)
            run.step("TUI start", 0 if ok else 1)
            run.step("TUI turn", 0 if self._submit(tmux, TUI_TURN, "Worked for") else 1)
            time.sleep(2)
            ok = self._submit(tmux, "/status", "Context window")
            time.sleep(2)
            (run.out / "status.txt").write_text(tmux.screen(lines=500), "utf-8")
            run.step("/status", 0 if ok else 1)
            tmux.key("Escape")
            time.sleep(1)
            for _ in range(2):
                tmux.key("C-c")
                time.sleep(1)
        finally:
            tmux.kill()

    @staticmethod
    def _submit(tmux: processes.Tmux, text: str, answer: str) -> bool:
        """Type ``text`` and Enter; wait for ``answer`` below it. The TUI may take a quick
        Enter as part of a paste: then Enter once more."""

        def answered() -> bool:
            return answer in processes.after_prompt(tmux.screen(), text)

        tmux.type(text, settle=1.5)
        if processes.wait_until(answered, 10, 1.0):
            return True
        tmux.key("Enter")
        return processes.wait_until(answered, 30, 1.0)
