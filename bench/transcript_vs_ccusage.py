"""``ctxviewer report --json`` on a Claude Code transcript against ``ccusage session --json``.

    python bench/transcript_vs_ccusage.py [TRANSCRIPT] [--ccusage PATH] [--repeat 7]

ccusage (version 20 ships a native binary, ``@ccusage/ccusage-linux-x64``) only
sums each session's usage; ctxviewer reads the same file, joins its
sub-agents and builds the whole analysis. Both run as fresh processes, as a
user starts them, on the transcript laid out the way Claude Code keeps it (a
temporary ``CLAUDE_CONFIG_DIR/projects/<project>/`` with the session's
``subagents/`` files next to it when they are found beside TRANSCRIPT, named
``<session>_subagents_agent-*.jsonl``, as in the test corpus). Without
TRANSCRIPT the spotter transcript of ``../shared/corpus/claude-code`` is used.

Start-up is reported apart: ``python -c pass`` and the import of what
``report`` needs. Times are the best of ``--repeat`` runs, the commands run in
turns (one of each per round) so that the machine's load meets them alike.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPOTTER = "marot__spotter__test_fixtures_transcripts_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
CORPUS = HERE.parent.parent / "shared" / "corpus" / "claude-code"


def interleaved(
    commands: list[tuple[str, list[str], dict[str, str] | None]], repeat: int
) -> list[tuple[str, float]]:
    """The best time of each command, run in turns (one of each per round), so that a
    change in the machine's load meets them all alike."""
    times: dict[str, list[float]] = {name: [] for name, _, _ in commands}
    for _ in range(repeat):
        for name, cmd, env in commands:
            t = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
            times[name].append(time.perf_counter() - t)
    return [(name, min(times[name])) for name, _, _ in commands]


def lay_out(transcript: Path, root: Path) -> Path:
    """``root/projects/-bench/<session>.jsonl`` plus its sub-agent files."""
    session = transcript.stem.rsplit("_", 1)[-1]
    project = root / "projects" / "-bench"
    (project / session / "subagents").mkdir(parents=True)
    main = project / f"{session}.jsonl"
    shutil.copy(transcript, main)
    for sub in transcript.parent.glob(f"{transcript.stem}_subagents_agent-*.jsonl"):
        name = sub.name.split("_subagents_", 1)[1]
        shutil.copy(sub, project / session / "subagents" / name)
    return main


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("transcript", nargs="?", default=str(CORPUS / SPOTTER))
    p.add_argument(
        "--ccusage",
        action="append",
        default=[],
        help="a ccusage command: the npm one (a node wrapper that starts the "
        "native binary) and/or the native binary itself; repeatable "
        "(default: ccusage on PATH)",
    )
    p.add_argument("--repeat", type=int, default=7)
    args = p.parse_args(argv)
    if not args.ccusage and shutil.which("ccusage"):
        args.ccusage = [shutil.which("ccusage")]
    transcript = Path(args.transcript)
    if not transcript.is_file():
        raise SystemExit(f"no such transcript: {transcript}")
    import compileall

    compileall.compile_dir(str(HERE.parent / "ctxviewer"), quiet=1)  # as pip install does
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="ctxviewer-bench-") as folder:
        main_file = lay_out(transcript, Path(folder))
        size = main_file.stat().st_size
        commands = [
            ("python -c pass", [py, "-c", "pass"], None),
            (
                "import for report",
                [py, "-c", "import ctxviewer.cli, ctxviewer.commands.report"],
                None,
            ),
            ("ctxviewer report", [py, "-m", "ctxviewer", "report", str(main_file), "--json"], None),
        ]
        env = dict(os.environ, CLAUDE_CONFIG_DIR=folder)
        for cmd in args.ccusage:
            commands.append(
                (
                    f"ccusage ({Path(cmd).name if len(args.ccusage) == 1 else cmd})",
                    [cmd, "session", "--json", "--offline"],
                    env,
                )
            )
        rows = interleaved(commands, args.repeat)
    print(f"transcript: {transcript.name}  {size / 1e6:.1f} MB (+ its sub-agents)")
    for name, secs in rows:
        print(f"{secs:6.3f} s  {name}")
    report = rows[2][1]
    for name, cc in rows[3:]:
        print(f"target report <= {name}: {report / cc:.2f}x  {'OK' if report <= cc else 'MISSED'}")
    if not args.ccusage:
        print("ccusage not found (pass --ccusage PATH): no comparison")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
