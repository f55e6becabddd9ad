import sys

from ctxviewer.cli import main

sys.exit(main())
