"""What every agent's runner shares: its npm install, its scenarios, the case it leaves behind.

A scenario is one conversation with one agent, directly against a fake server or through
``ctxviewer proxy``. It leaves a folder with ``case.json`` (see ``conformance.cases``), the
agent's own log (transcript, rollout or chat file), its own ``/context`` or ``/status``
text, the fake's request log and, through the proxy, ctxviewer's recording.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from conformance.sandbox import Sandbox

# dummy keys: the fakes accept anything and every recorder redacts them anyway
ANTHROPIC_KEY = "sk-ant-dummy-key-for-local-fake-server-000000"
OPENAI_KEY = "sk-dummy-key-for-local-fake-server-000000"
GEMINI_KEY = "fake-gemini-key-000"


@dataclass(frozen=True)
class Scenario:
    name: str
    via_proxy: bool
    what: str  # one line for the table's heading


@dataclass
class Run:
    """One scenario's run: where things are and what happened."""

    agent: str
    version: str
    scenario: Scenario
    box: Sandbox
    out: Path
    command: list[str]  # the agent's executable (and its interpreter)
    ctxviewer: list[str]
    steps: list[dict[str, object]] = field(default_factory=list)

    def env(self, **extra: str) -> dict[str, str]:
        """A clean environment: the sandbox's HOME, no real credentials, loopback only.

        HTTP(S)_PROXY points at a port nothing listens on, so a request to any other host
        fails at once (the namespace has no route out anyway)."""
        home = str(self.box.home)
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": home,
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "XDG_CONFIG_HOME": f"{home}/.config",
            "XDG_CACHE_HOME": f"{home}/.cache",
            "XDG_DATA_HOME": f"{home}/.local/share",
            "XDG_STATE_HOME": f"{home}/.local/state",
            "HTTPS_PROXY": "http://127.0.0.1:9",
            "HTTP_PROXY": "http://127.0.0.1:9",
            "NO_PROXY": "127.0.0.1,localhost",
        }
        env |= {k.lower(): env[k] for k in ("HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY")}
        return env | extra

    def step(self, name: str, rc: int) -> None:
        self.steps.append({"step": name, "rc": rc})

    def write_case(
        self,
        outputs: dict[str, str],
        logs: dict[str, str],
        wire: str | None,
        notes: list[str] | None = None,
    ) -> None:
        """``outputs``: the agent's own numbers (command -> file); ``logs``: what ctxviewer
        reads (kind -> file); ``wire``: the requests as sent (ctxviewer recording or the
        fake's log), for the checks of what went over the wire."""
        present = {k: v for k, v in logs.items() if (self.out / v).is_file()}
        case = {
            "agent": self.agent,
            "version": self.version,
            "scenario": self.scenario.name,
            "via": "proxy" if self.scenario.via_proxy else "direct",
            "what": self.scenario.what,
            "outputs": {k: v for k, v in outputs.items() if (self.out / v).is_file()},
            "logs": present,
            "wire": wire if wire and (self.out / wire).is_file() else None,
            "steps": self.steps,
            "notes": notes or [],
        }
        (self.out / "case.json").write_text(json.dumps(case, indent=2) + "\n", "utf-8")


class Agent(Protocol):
    name: str
    package: str
    default_version: str
    scenarios: tuple[Scenario, ...]

    def command(self, prefix: Path) -> list[str]:
        """How to start the installed agent (its native binary or ``node …js``)."""
        ...

    def installed_version(self, prefix: Path) -> str | None: ...

    def run(self, run: Run) -> None:
        """Drive one scenario inside the network namespace and write its case."""
        ...


def npm_install(package: str, version: str, prefix: Path) -> None:
    """``npm install --prefix PREFIX PACKAGE@VERSION``: always the named version (a bare
    package name has been seen to install an old release)."""
    prefix.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            "npm",
            "install",
            "--no-fund",
            "--no-audit",
            "--prefix",
            str(prefix),
            f"{package}@{version}",
        ],
        check=True,
        timeout=900,
    )


def first_line(cmd: list[str]) -> str | None:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.strip().splitlines()
    return lines[-1].strip() if done.returncode == 0 and lines else None


def copy_newest(pattern: str, root: Path, dest: Path) -> str | None:
    """Copy the newest file matching ``pattern`` under ``root`` (an agent's own log) to
    ``dest``; its original path, or None when the agent wrote none."""
    found = sorted((p for p in root.glob(pattern) if p.is_file()), key=lambda p: p.stat().st_mtime)
    if not found:
        return None
    shutil.copyfile(found[-1], dest)
    return str(found[-1])
