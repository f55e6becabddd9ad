"""Command line: ``ctxviewer [FILE]`` opens the GUI, subcommands print analysis.

Every subcommand exits 0 on success, 2 on bad input (one line on stderr,
never a traceback) and 1 on an internal error. Each subcommand lives in its
own module under ``ctxviewer.commands`` and is listed in ``COMMANDS``; the GUI
is imported only when it is opened.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ctxviewer import __version__
from ctxviewer.commands.common import UsageError
from ctxviewer.ingest.base import Cancelled, LoadError

# subcommand name -> module under ctxviewer.commands
COMMANDS: dict[str, str] = {
    "report": "report",
    "compact": "compact",
    "formats": "formats",
    "proxy": "proxy",
    "snapshot": "snapshot",
    "compare": "compare",
    "tail": "tail",
    "sessions": "sessions",
    "insights": "insights",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        raise UsageError(f"{self.prog}: {message}")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The CLI parser; with ``only``, just that subcommand is imported (fast start)."""
    parser = _Parser(
        prog="ctxviewer",
        description="Inspect the context window of LLM coding agents.",
    )
    parser.add_argument("--version", action="version", version=f"ctxviewer {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, module_name in COMMANDS.items():
        if only is not None and name != only:
            continue
        module = importlib.import_module(f"ctxviewer.commands.{module_name}")
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def _gui_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ctxviewer", description="Open the ctxviewer window.")
    parser.add_argument("file", nargs="?", help="session log or API trace (default: demo session)")
    parser.add_argument("--version", action="version", version=f"ctxviewer {__version__}")
    parser.add_argument("--new-instance", action="store_true",
                        help="open a separate app instead of handing FILE to the running one")
    desktop = parser.add_mutually_exclusive_group()
    desktop.add_argument("--install-desktop", action="store_true",
                         help="install the menu entry, file associations and icons for this user")
    desktop.add_argument("--uninstall-desktop", action="store_true",
                         help="remove what --install-desktop installed")
    return parser


def _desktop(install: bool) -> int:
    from ctxviewer import desktop

    result = desktop.install() if install else desktop.uninstall()
    for path in result.written:
        print(f"installed {path}")
    for path in result.removed:
        print(f"removed {path}")
    if result.refreshed:
        print(f"refreshed: {', '.join(result.refreshed)}")
    if result.missing_tools:
        print(f"not found (databases not refreshed): {', '.join(result.missing_tools)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        if args_list and (args_list[0] in COMMANDS or args_list[0] in ("-h", "--help")):
            only = args_list[0] if args_list[0] in COMMANDS else None
            args = build_parser(only).parse_args(args_list)
            return int(args._run(args) or 0)
        gui_args = _gui_parser().parse_args(args_list)
        if gui_args.install_desktop or gui_args.uninstall_desktop:
            return _desktop(gui_args.install_desktop)
        from ctxviewer.gui.app import run_app  # lazy: the CLI never needs Qt

        return run_app(gui_args)
    except (UsageError, LoadError) as e:
        print(f"ctxviewer: {e}", file=sys.stderr)
        return 2
    except Cancelled:
        print("ctxviewer: cancelled", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except SystemExit as e:  # argparse --help / --version
        return int(e.code or 0)
    except Exception as e:  # noqa: BLE001 - the contract is one line, exit 1
        print(f"ctxviewer: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
