"""Entry point of the frozen app (PyInstaller): the same as `ctxviewer`."""

import sys

from ctxviewer.cli import main

if __name__ == "__main__":
    sys.exit(main())
