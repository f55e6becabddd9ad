"""Command line: ``ctxviewer [FILE]`` opens the GUI, subcommands print analysis.

Every subcommand exits 0 on success, 2 on bad input (one line on stderr,
never a traceback) and 1 on an internal error. Each subcommand lives in its
own module, listed in ``COMMANDS``: under ``ctxviewer.commands`` (the core, no
Qt), except ``snapshot``, the window's own command, beside this one. The GUI is
imported only when it is opened.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from ctxviewer import __version__
from ctxviewer.errors import Cancelled, LibraryError, LoadError, UsageError

# subcommand name -> its module, in the order --help lists them: the everyday ones first
COMMANDS: dict[str, str] = {
    "report": "ctxviewer.commands.report",
    "insights": "ctxviewer.commands.insights",
    "findings": "ctxviewer.commands.findings",
    "compare": "ctxviewer.commands.compare",
    "compact": "ctxviewer.commands.compact",
    "tail": "ctxviewer.commands.tail",
    "sessions": "ctxviewer.commands.sessions",
    "library": "ctxviewer.commands.library",
    "proxy": "ctxviewer.commands.proxy",
    "otel": "ctxviewer.commands.otel",
    "snapshot": "ctxviewer.snapshot_cli",  # renders the window: Qt, so not in the core
    "formats": "ctxviewer.commands.formats",
    "export": "ctxviewer.commands.export",  # a team's dataset (the `team` extra)
    "query": "ctxviewer.commands.query",
}


WINDOW_HELP = """the window:
  ctxviewer [FILE]            open FILE in the window (without FILE: the session library,
                              or the bundled demo session when it holds none)
  ctxviewer FILE --new-instance
                              a separate app instead of handing FILE to the one running
  ctxviewer [FILE] --theme auto|light|dark
                              the system's colours, or light or dark ones
  ctxviewer --install-desktop / --uninstall-desktop
                              menu entry, file associations and icons for this user
"""


def _columns() -> int:
    """``shutil.get_terminal_size().columns``, without importing shutil (with bz2 and
    lzma, 2 ms of every command's start-up: argparse makes a formatter per option)."""
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    if sys.__stdout__ is None:
        return 80
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


def _fewer_collections() -> None:
    """The cyclic garbage collector's first generation every 20,000 new objects, not 700:
    a command makes hundreds of thousands of long-lived objects (modules, classes, a
    session's records) and hardly any cycle, and at 700 the collector ran a thousand
    times in a report of a 3.5 MB transcript. Objects without cycles are freed as
    always; a long-running command (proxy, tail) still collects, less often."""
    import gc

    if gc.get_threshold()[0] < 20_000:
        gc.set_threshold(20_000, *gc.get_threshold()[1:])


class _Parser(argparse.ArgumentParser):
    def _get_formatter(self) -> argparse.HelpFormatter:
        make: Callable[..., argparse.HelpFormatter] = self.formatter_class
        return make(prog=self.prog, width=_columns() - 2)

    def error(self, message: str) -> NoReturn:  # one line, exit 2 ("ctxviewer: " is added once)
        where = self.prog.removeprefix("ctxviewer").strip()
        raise UsageError(f"{where}: {message}" if where else message)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The CLI parser; with ``only``, just that subcommand is imported (fast start)."""
    parser = _Parser(
        prog="ctxviewer",
        description="Inspect the context window of LLM coding agents.",
        epilog=WINDOW_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ctxviewer {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, module_name in COMMANDS.items():
        if only is not None and name != only:
            continue
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def _gui_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ctxviewer", description="Open the ctxviewer window.")
    parser.add_argument(
        "file",
        nargs="?",
        help="session log or API trace (default: the session library, or the "
        "demo session when it holds none)",
    )
    parser.add_argument("--version", action="version", version=f"ctxviewer {__version__}")
    parser.add_argument(
        "--new-instance",
        action="store_true",
        help="open a separate app instead of handing FILE to the running one",
    )
    parser.add_argument(
        "--theme",
        choices=("auto", "light", "dark"),
        default="auto",
        help="colours: the system's (auto, the default), light or dark",
    )
    desktop = parser.add_mutually_exclusive_group()
    desktop.add_argument(
        "--install-desktop",
        action="store_true",
        help="install the menu entry, file associations and icons for this user",
    )
    desktop.add_argument(
        "--uninstall-desktop", action="store_true", help="remove what --install-desktop installed"
    )
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


def _check_not_a_command(args: list[str]) -> None:
    """``ctxviewer reprot FILE`` or ``ctxviewer nosuchcommand``: a mistyped command says
    so instead of opening the window. A path that is not there opens the window, which
    says so and lands on the library."""
    values = {i + 1 for i, a in enumerate(args) if a == "--theme"}  # an option's value
    at = next((i for i, a in enumerate(args) if not a.startswith("-") and i not in values), None)
    if at is None or os.path.exists(args[at]):
        return
    first = args[at]
    import difflib  # only for a mistyped command

    close = difflib.get_close_matches(first, COMMANDS, n=1)
    more = [a for a in args[at + 1 :] if not a.startswith("-")]  # `reprot FILE`: a command
    if close or more or ("/" not in first and "." not in first and os.sep not in first):
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise UsageError(
            f"unknown command {first!r}{hint}; commands: "
            f"{', '.join(COMMANDS)}; ctxviewer FILE opens a file in the window"
        )


def _check_display() -> None:
    """Without a display, Qt aborts the process: say so in one line instead."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return
    raise UsageError(
        "no display (neither DISPLAY nor WAYLAND_DISPLAY is set): the window "
        f"needs one; these commands need none: {', '.join(COMMANDS)}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    _fewer_collections()
    try:
        if args_list and (args_list[0] in COMMANDS or args_list[0] in ("-h", "--help")):
            only = args_list[0] if args_list[0] in COMMANDS else None
            args = build_parser(only).parse_args(args_list)
            return int(args._run(args) or 0)
        _check_not_a_command(args_list)
        gui_args = _gui_parser().parse_args(args_list)
        if gui_args.install_desktop or gui_args.uninstall_desktop:
            return _desktop(gui_args.install_desktop)
        _check_display()
        from ctxviewer.gui.app import run_app  # lazy: the CLI never needs Qt

        return run_app(gui_args)
    except (UsageError, LoadError) as e:
        print(f"ctxviewer: {e}", file=sys.stderr)
        return 2
    except LibraryError as e:  # the library's index cannot be used (a read-only folder…)
        print(f"ctxviewer: {e}", file=sys.stderr)
        return 1
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
