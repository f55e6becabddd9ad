"""qwen-code (npm ``@qwen-code/qwen-code``): three turns (``-y``, ``-c``), then ``/context`` and
``/context -d`` (``/context detail`` prints nothing in non-interactive mode).

Its HTTP client ignores NO_PROXY for 127.0.0.1, so HTTP(S)_PROXY is the fake's sink, which
tunnels loopback targets and refuses (and logs) any other host.
"""

from __future__ import annotations

from pathlib import Path

from conformance import processes
from conformance.agents.base import OPENAI_KEY, Run, Scenario, copy_newest, first_line

FAKE_PORT, SINK_PORT = 18090, 18099
TURNS = (
    "Please look at hello.py and tell me what it does.",
    "What's the weather in Paris? Use the weather tool.",
    "Thanks. Summarize our conversation in one line.",
)


class QwenCode:
    name = "qwen-code"
    package = "@qwen-code/qwen-code"
    default_version = "0.24.4"
    scenarios = (
        Scenario("proxy", True, "3 turns, then /context -d"),
        Scenario("direct", False, "3 turns, then /context -d"),
    )

    def command(self, prefix: Path) -> list[str]:
        return ["node", str(prefix / "node_modules/@qwen-code/qwen-code/cli.js")]

    def installed_version(self, prefix: Path) -> str | None:
        return first_line([*self.command(prefix), "--version"])

    def run(self, run: Run) -> None:
        with processes.fake(
            run.box.python,
            "openai_chat.py",
            FAKE_PORT,
            run.out / "fake.jsonl",
            "--proxy-port",
            str(SINK_PORT),
            "--workdir",
            str(run.box.proj),
        ):
            if run.scenario.via_proxy:
                with processes.proxy(
                    run.ctxviewer, FAKE_PORT, run.out / "recording.rec.jsonl"
                ) as port:
                    self._converse(run, port)
            else:
                self._converse(run, FAKE_PORT)
        copy_newest(".qwen/projects/*/chats/*.jsonl", run.box.home, run.out / "chat.jsonl")
        logs = {"chat": "chat.jsonl"}
        if run.scenario.via_proxy:
            logs = {"recording": "recording.rec.jsonl", **logs}
        run.write_case(
            {"/context -d": "context_detail.txt"},
            logs,
            "recording.rec.jsonl" if run.scenario.via_proxy else "fake.jsonl",
        )

    def _converse(self, run: Run, port: int) -> None:
        sink = f"http://127.0.0.1:{SINK_PORT}"
        env = run.env(
            OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1",
            OPENAI_API_KEY=OPENAI_KEY,
            OPENAI_MODEL="qwen3-coder-plus",
            QWEN_CODE_DISABLE_PRECONNECT="1",
            HTTPS_PROXY=sink,
            HTTP_PROXY=sink,
            https_proxy=sink,
            http_proxy=sink,
        )
        qwen = [*run.command, "-y"]
        for i, prompt in enumerate(TURNS, 1):
            cont = ["-c"] if i > 1 else []
            rc = processes.run(
                [*qwen, *cont, "-o", "stream-json", prompt],
                env,
                run.box.proj,
                run.out / f"turn{i}.stream.jsonl",
            )
            run.step(f"turn {i}", rc)
        for command, file in (("/context", "context.txt"), ("/context -d", "context_detail.txt")):
            rc = processes.run([*qwen, "-c", command], env, run.box.proj, run.out / file)
            run.step(command, rc)
