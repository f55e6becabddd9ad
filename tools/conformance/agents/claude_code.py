"""Claude Code (npm ``@anthropic-ai/claude-code``): print mode and the TUI, and their /context.

Print mode: three turns (a Read, the MCP weather tool, a summary) with ``-p`` and
``--continue``, then ``-p /context`` (Markdown). The TUI (tmux): the first two turns, then
``/context`` and ``/context all`` (the screen). ``count404`` is print mode against a server
without count_tokens (Claude Code then counts with ``max_tokens: 1`` probes); ``parallel``
is a turn whose reply holds three parallel Read calls.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from conformance import processes
from conformance.agents.base import ANTHROPIC_KEY, Run, Scenario, copy_newest, first_line

FAKE_PORT, SINK_PORT = 18080, 18089
TURNS = (
    "Please look at hello.py and tell me what it does.",
    "What's the weather in Paris? Use the weather tool.",
    "Thanks. Summarize our conversation in one line.",
)
PARALLEL = (
    "Read hello.py, CLAUDE.md and QWEN.md in parallel and tell me what they say.",
    "Thanks. Summarize in one line.",
)


class ClaudeCode:
    name = "claude-code"
    package = "@anthropic-ai/claude-code"
    default_version = "2.1.332"
    scenarios = (
        Scenario("print", True, "print mode (-p), 3 turns, then -p /context"),
        Scenario("print-direct", False, "print mode (-p), 3 turns, then -p /context"),
        Scenario("count404", True, "print mode against a server without count_tokens"),
        Scenario("tui", True, "TUI in tmux, 2 turns, then /context and /context all"),
        Scenario("tui-direct", False, "TUI in tmux, 2 turns, then /context and /context all"),
        Scenario("parallel", True, "print mode, a reply of 3 parallel Read calls"),
    )

    def command(self, prefix: Path) -> list[str]:
        """The native binary the package installs (``claude-code-<platform>/claude``)."""
        native = sorted(prefix.glob("node_modules/@anthropic-ai/claude-code-*/claude"))
        return [str(native[0])] if native else [str(prefix / "node_modules/.bin/claude")]

    def installed_version(self, prefix: Path) -> str | None:
        line = first_line([*self.command(prefix), "--version"])  # "2.1.332 (Claude Code)"
        return line.split()[0] if line else None

    def run(self, run: Run) -> None:
        name = run.scenario.name
        count_tokens = "404" if name == "count404" else "api-like"
        with processes.fake(
            run.box.python,
            "anthropic_api.py",
            FAKE_PORT,
            run.out / "fake.jsonl",
            "--proxy-port",
            str(SINK_PORT),
            "--workdir",
            str(run.box.proj),
            "--count-tokens",
            count_tokens,
        ):
            if run.scenario.via_proxy:
                with processes.proxy(
                    run.ctxviewer, FAKE_PORT, run.out / "recording.rec.jsonl"
                ) as port:
                    self._converse(run, port)
            else:
                self._converse(run, FAKE_PORT)
        run.step(
            "MCP tools offered in the first turn", 0 if mcp_offered(run.out / "fake.jsonl") else 1
        )
        copy_newest(".claude/projects/*/*.jsonl", run.box.home, run.out / "transcript.jsonl")
        tui = name.startswith("tui")
        outputs = {"/context": "context_tui.txt" if tui else "context.txt"}
        if tui:
            outputs["/context all"] = "context_all.txt"
        logs = {"transcript": "transcript.jsonl"}
        if run.scenario.via_proxy:
            logs = {"recording": "recording.rec.jsonl", **logs}
        run.write_case(
            outputs, logs, "recording.rec.jsonl" if run.scenario.via_proxy else "fake.jsonl"
        )

    def _env(self, run: Run, port: int) -> dict[str, str]:
        claude_dir = str(run.box.home / ".claude")
        sink = f"http://127.0.0.1:{SINK_PORT}"  # refuses (and logs) any non-loopback host
        return run.env(
            CLAUDE_CONFIG_DIR=claude_dir,
            ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}",
            ANTHROPIC_API_KEY=ANTHROPIC_KEY,
            DISABLE_TELEMETRY="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_ERROR_REPORTING="1",
            DISABLE_BUG_COMMAND="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            CLAUDE_CODE_ENABLE_TELEMETRY="0",
            CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL="1",
            IS_SANDBOX="1",  # root may then pass --dangerously-skip-permissions
            HTTPS_PROXY=sink,
            HTTP_PROXY=sink,
            https_proxy=sink,
            http_proxy=sink,
        )

    def _converse(self, run: Run, port: int) -> None:
        env = self._env(run, port)
        if run.scenario.name.startswith("tui"):
            self._tui(run, env)
            return
        turns = PARALLEL if run.scenario.name == "parallel" else TURNS
        for i, prompt in enumerate(turns, 1):
            cont = ["--continue"] if i > 1 else []
            rc = processes.run(
                [
                    *run.command,
                    "--dangerously-skip-permissions",
                    *cont,
                    "-p",
                    prompt,
                    "--output-format",
                    "stream-json",
                    "--verbose",
                ],
                env,
                run.box.proj,
                run.out / f"turn{i}.stream.jsonl",
            )
            run.step(f"turn {i}", rc)
        rc = processes.run(
            [*run.command, "--dangerously-skip-permissions", "--continue", "-p", "/context"],
            env,
            run.box.proj,
            run.out / "context.txt",
        )
        run.step("-p /context", rc)

    def _tui(self, run: Run, env: dict[str, str]) -> None:
        seed_tui(run.box.home / ".claude", run.box.proj, run.version)
        tmux = processes.Tmux(f"conformance-cc-{run.scenario.name}")
        cmd = " ".join([*run.command, "--dangerously-skip-permissions"])
        tmux.start(cmd, run.box.proj, env)
        try:
            run.step("start", 0 if tmux.wait_for("bypass permissions", 60) else 1)
            time.sleep(2)
            for i, (prompt, done) in enumerate(
                zip(TURNS[:2], ("got the tool result", "Weather in Paris"), strict=False), 1
            ):
                tmux.type(prompt)
                run.step(f"turn {i}", 0 if tmux.wait_for(done, 60) else 1)
                time.sleep(2)
            for command, file in (
                ("/context", "context_tui.txt"),
                ("/context all", "context_all.txt"),
            ):
                tmux.type(command)

                # the TUI redraws its history: look below the command's own line
                def shown(c: str = command) -> bool:
                    return "Free space" in processes.after_prompt(tmux.screen(), c)

                ok = processes.wait_until(shown, 60, 1.0)
                time.sleep(4)
                screen = tmux.screen()
                (run.out / file.replace(".txt", ".screen.txt")).write_text(screen, "utf-8")
                (run.out / file).write_text(processes.after_prompt(screen, command), "utf-8")
                run.step(command, 0 if ok else 1)
            tmux.type("/exit")
            tmux.wait_for("AGENT-EXITED", 20)
        finally:
            tmux.kill()


def mcp_offered(fake_log: Path) -> bool:
    """Whether the first main request (tools, max_tokens > 1) named the MCP server's tools:
    listed whole (2.1.197) or as deferred names (2.1.3xx)."""
    for line in fake_log.read_text("utf-8", errors="replace").splitlines():
        body = json.loads(line).get("body")
        if (
            isinstance(body, dict)
            and body.get("tools")
            and (body.get("max_tokens") or 0) > 1
            and "messages" in body
        ):
            return "mcp__notes-weather__get_weather" in json.dumps(body)
    return False


def seed_tui(config_dir: Path, proj: Path, version: str) -> None:
    """Claude Code's global config for a TUI that starts without onboarding, theme, API-key,
    trust or bypass-mode prompts, with the project's .mcp.json server enabled."""
    path = config_dir / ".claude.json"
    cfg = json.loads(path.read_text("utf-8")) if path.exists() else {}
    cfg.update(
        {
            "hasCompletedOnboarding": True,
            "lastOnboardingVersion": version,
            "theme": "dark",
            "bypassPermissionsModeAccepted": True,
            "autoUpdates": False,
            "customApiKeyResponses": {"approved": [ANTHROPIC_KEY[-20:]], "rejected": []},
        }
    )
    cfg.setdefault("projects", {}).setdefault(str(proj), {}).update(
        {
            "hasTrustDialogAccepted": True,
            "hasCompletedProjectOnboarding": True,
            "enabledMcpjsonServers": ["notes-weather"],
            "disabledMcpjsonServers": [],
        }
    )
    config_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(cfg, indent=2), "utf-8")
    settings = config_dir / "settings.json"
    st = json.loads(settings.read_text("utf-8")) if settings.exists() else {}
    st.update({"skipDangerousModePermissionPrompt": True, "enableAllProjectMcpServers": True})
    settings.write_text(json.dumps(st, indent=2), "utf-8")
