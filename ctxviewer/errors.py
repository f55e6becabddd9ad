"""The errors every layer may raise and the CLI and the window report, in one place.

- ``UsageError``: bad input from the user; one line, exit status 2.
- ``LoadError``: a file that cannot be read as a session; one line for users.
- ``Cancelled``: the caller cancelled a load or a computation.
- ``LibraryError``: the library's index cannot be used (a read-only folder, a damaged
  index another process holds open); one line for users.
"""

from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


class LoadError(Exception):
    """A file that cannot be read as a session. The message is one line for users."""


class Cancelled(Exception):
    """Loading was cancelled by the caller."""


class LibraryError(Exception):
    """The library's index cannot be used. The message is one line for users."""
