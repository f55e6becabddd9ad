#!/usr/bin/env python3
"""Run real coding agents against fake servers and hold ctxviewer's numbers against their own.

    python tools/conformance/run.py                          # every agent, default versions
    python tools/conformance/run.py --agent claude-code --version 2.1.332 --version 2.1.197
    python tools/conformance/run.py --agent codex --scenario proxy --save
    python tools/conformance/run.py --compare tests/data/agents   # tables of saved captures

Installs each agent from npm at a named version into WORK/npm/, then, inside ``unshare -n``
(a network namespace with only loopback), runs its scenarios against fake servers on
127.0.0.1, directly and through ``ctxviewer proxy``, and prints every row of the agent's own
``/context`` or ``/status`` beside ctxviewer's number for the same conversation. Needs root
(or user namespaces), npm, node, tmux and git. docs/conformance.md says more.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance import cases, compare, sandbox
from conformance.agents import AGENTS
from conformance.agents.base import Run, npm_install

ROOT = Path(__file__).resolve().parents[2]
TEST_DATA = ROOT / "tests" / "data" / "agents"
FAKE_PACKAGES = ("aiohttp", "zstandard")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--agent",
        action="append",
        choices=sorted(AGENTS),
        help="an agent to run (repeatable; default: all)",
    )
    ap.add_argument(
        "--version",
        action="append",
        help="its npm version (repeatable: one per --agent, or several for one)",
    )
    ap.add_argument("--scenario", action="append", help="only these scenarios (default: all)")
    ap.add_argument(
        "--work",
        type=Path,
        default=Path("/tmp/ctxviewer-conformance"),
        help="scratch folder: npm installs, sandboxes, captures (never a repository)",
    )
    ap.add_argument(
        "--ctxviewer",
        default=str(Path(sys.executable).parent / "ctxviewer"),
        help="the ctxviewer whose proxy records (default: this Python's)",
    )
    ap.add_argument(
        "--save",
        action="store_true",
        help="copy the captures (of this run, or under --compare DIR) into "
        "tests/data/agents/<agent>-<version>/<scenario>/",
    )
    ap.add_argument(
        "--compare",
        type=Path,
        metavar="DIR",
        help="run nothing: print the tables of the captures under DIR",
    )
    ap.add_argument(
        "--known-off",
        action="store_true",
        help="with --compare: print the rows off that tools/conformance/known_off.py "
        "does not explain, as its entries (the reason left to write)",
    )
    ap.add_argument(
        "--inner", nargs=3, metavar=("AGENT", "VERSION", "SCENARIOS"), help=argparse.SUPPRESS
    )
    args = ap.parse_args(argv)
    if args.inner:
        return inner(args, *args.inner)
    if args.compare and args.known_off:
        return print_known_off(cases.find(args.compare))
    if args.compare:
        found = cases.find(args.compare)
    else:
        found = [
            c
            for agent, version in pairs(args.agent, args.version)
            for c in capture(args, agent, version)
        ]
    if args.save:
        save(found)
    return print_tables(found)


def save(found: list[cases.Case]) -> None:
    for case in found:
        dest = TEST_DATA / f"{case.agent}-{case.version}" / case.scenario
        if dest.resolve() == case.folder.resolve():
            continue
        size = sum(p.stat().st_size for p in cases.save(case, dest))
        print(f"saved {dest.relative_to(ROOT)} ({size / 1024:.0f} KB)")


def pairs(agents: list[str] | None, versions: list[str] | None) -> list[tuple[str, str]]:
    names = agents or list(AGENTS)
    if not versions:
        return [(a, AGENTS[a].default_version) for a in names]
    if len(names) == 1:
        return [(names[0], v) for v in versions]
    if len(versions) != len(names):
        raise SystemExit("give one --version per --agent, or several versions for one agent")
    return list(zip(names, versions, strict=True))


def capture(args: argparse.Namespace, name: str, version: str) -> list[cases.Case]:
    """Install, run every scenario in a network namespace, return what was captured."""
    agent = AGENTS[name]
    prefix = args.work / "npm" / f"{name}-{version}"
    if agent.installed_version(prefix) != version:
        npm_install(agent.package, version, prefix)
    got = agent.installed_version(prefix)
    if got != version:
        print(f"{name}: npm installed {got!r}, not {version}: skipped", file=sys.stderr)
        return []
    fakes_venv(args.work)
    scenarios = [s.name for s in agent.scenarios if not args.scenario or s.name in args.scenario]
    out = args.work / "captures" / f"{name}-{version}"
    print(f"== {name} {version}: {', '.join(scenarios)} (captures in {out})", flush=True)
    cmd = [
        "unshare",
        "-n",
        sys.executable,
        __file__,
        "--work",
        str(args.work),
        "--ctxviewer",
        args.ctxviewer,
        "--inner",
        name,
        version,
        ",".join(scenarios),
    ]
    try:
        subprocess.run(cmd, check=False, timeout=300 * len(scenarios))
    except subprocess.TimeoutExpired:
        print(f"{name} {version}: timed out", file=sys.stderr)
    return [c for c in cases.find(out) if c.scenario in scenarios]


def fakes_venv(work: Path) -> str:
    """A venv for the fake servers (aiohttp; zstandard for Codex's compressed bodies)."""
    python = work / "venv" / "bin" / "python"
    if not python.exists():
        venv.create(work / "venv", with_pip=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", *FAKE_PACKAGES], check=True, timeout=900
        )
    return str(python)


def inner(args: argparse.Namespace, name: str, version: str, scenarios: str) -> int:
    """Inside the namespace: bring loopback up, run each scenario in a fresh sandbox."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=False)
    agent = AGENTS[name]
    command = agent.command(args.work / "npm" / f"{name}-{version}")
    python = str(args.work / "venv" / "bin" / "python")
    for scenario in agent.scenarios:
        if scenario.name not in scenarios.split(","):
            continue
        out = args.work / "captures" / f"{name}-{version}" / scenario.name
        box = sandbox.build(args.work / "sandbox" / f"{name}-{version}" / scenario.name, python)
        if out.exists():
            subprocess.run(["rm", "-rf", str(out)], check=True)
        out.mkdir(parents=True)
        run = Run(name, version, scenario, box, out, command, [args.ctxviewer])
        print(f"   {scenario.name}: {scenario.what}", flush=True)
        try:
            agent.run(run)
        except Exception as e:  # one scenario's failure must not lose the others
            run.step(f"error: {e}", 1)
            run.write_case({}, {}, None, [repr(e)])
        for step in run.steps:
            if step["rc"]:
                print(f"   {scenario.name}: {step['step']} failed (rc {step['rc']})", flush=True)
    return 0


def print_tables(found: list[cases.Case]) -> int:
    """Every table, then the summary; the exit code is 0 when every row of every table is
    within tolerance or off for a reason known_off.py gives (and no reason is stale)."""
    tables = [t for case in found for t in compare.tables(case)]
    for case in found:
        if case.failed_steps:
            print(f"{case.key}: steps that failed: {', '.join(case.failed_steps)}")
    for table in tables:
        print(compare.render(table))
    print(compare.summary(tables))
    ok = sum(t.ok for t in tables)
    known = sum(t.as_known for t in tables)
    print(
        f"{ok} of {len(tables)} tables within tolerance; {known} of {len(tables)} within "
        "tolerance but for the rows known to be off"
    )
    return 0 if tables and known == len(tables) else 1


def print_known_off(found: list[cases.Case]) -> int:
    """The rows off that known_off.py does not explain, as its entries (lines of 100)."""
    for case in found:
        for table in compare.tables(case):
            rows = table.unexplained or ([] if table.rows else ["(no rows: " + table.note + ")"])
            if not rows:
                continue
            print(f"    {table.key!r}: {{")
            for row in rows:
                print(textwrap.indent(f"{row!r}: '?',", " " * 8))
            print("    },")
    return 0


if __name__ == "__main__":
    sys.exit(main())
