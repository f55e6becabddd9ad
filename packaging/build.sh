#!/usr/bin/env bash
# Build the one-folder app with PyInstaller into dist/ctxviewer/ and smoke-test it.
#   bash packaging/build.sh            (uses .venv, creating it if needed)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q -e . pyinstaller
.venv/bin/pyinstaller --noconfirm --clean --distpath dist --workpath build packaging/ctxviewer.spec
./dist/ctxviewer/ctxviewer --version
./dist/ctxviewer/ctxviewer formats
echo "built: dist/ctxviewer/ctxviewer"
