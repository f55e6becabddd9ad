"""Write ``profiles.json``, the parsed copy of the agent profile table.

    python tools/agent_tables.py [--out FILE]

``ctxviewer/analysis/agents/profiles.toml`` is the table people edit; every
command reads its parsed copy beside it instead (importing ``tomllib`` and
parsing would cost each start 6 ms). The copy carries the CRC-32 of the TOML it
was made from: a stale copy is ignored (the TOML is parsed instead) and
``tests/core/test_agents.py`` fails until this script is run again.
"""

from __future__ import annotations

import argparse
import tomllib
import zlib
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
TOML = ROOT / "ctxviewer" / "analysis" / "agents" / "profiles.toml"


def render(toml: Path = TOML) -> bytes:
    raw = toml.read_bytes()
    doc = {
        "generated_by": "tools/agent_tables.py from profiles.toml: do not edit",
        "toml_crc32": zlib.crc32(raw),
        "data": tomllib.loads(raw.decode("utf-8")),
    }
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--out",
        type=Path,
        default=TOML.with_suffix(".json"),
        help="where to write (default: beside profiles.toml)",
    )
    args = p.parse_args(argv)
    args.out.write_bytes(render())
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
