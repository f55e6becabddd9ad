"""A built wheel works alone: installed into a fresh environment and run from another
folder, it finds its demo session, prices, icons and desktop files.

The wheel is built offline from a clean copy of this checkout (``pip wheel --no-build-isolation``
with the test environment's setuptools) and unpacked into a fresh venv's
site-packages; the fresh venv sees the test environment's dependencies (PySide6,
orjson...) through a path entry, but not this checkout nor its editable install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    pytest.importorskip("setuptools", minversion="77")
    work = tmp_path_factory.mktemp("wheel")
    # pip builds in the source tree, and setuptools keeps its build/ folder: a module
    # moved or removed since an earlier build would still be in the wheel. Build from a
    # clean copy of the checkout.
    source = work / "source"
    shutil.copytree(
        REPO,
        source,
        symlinks=True,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"
        ),
    )
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(work / "dist"),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = (work / "dist").glob("ctxviewer-*.whl")
    env_dir = work / "env"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    deps = sysconfig.get_paths()["purelib"]  # the test environment's packages, no .pth run
    (site / "zz-test-dependencies.pth").write_text(deps + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["HOME"] = str(work / "home")
    env["XDG_DATA_HOME"] = str(work / "home" / ".local" / "share")
    return python, env


def _run(installed: tuple[Path, dict[str, str]], *args: str, cwd: Path) -> str:
    python, env = installed
    done = subprocess.run(
        [str(python), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120
    )
    assert done.returncode == 0, (args, done.stdout[-1000:], done.stderr[-1000:])
    return done.stdout


def test_the_wheel_holds_its_resources_and_not_the_checkout(installed, tmp_path):
    out = _run(
        installed,
        "-c",
        "import ctxviewer, ctxviewer.resources as r; "
        "print(ctxviewer.__file__); print(r.demo_session_path()); "
        "print(r.resource('prices.json').is_file())",
        cwd=tmp_path,
    )
    package, demo, prices = out.split("\n")[:3]
    assert not package.startswith(str(REPO))  # the installed copy, not this checkout
    assert Path(demo).is_file() and not demo.startswith(str(REPO)) and prices == "True"


def test_every_command_runs_from_the_installed_wheel(installed, tmp_path):
    demo = _run(
        installed,
        "-c",
        "import ctxviewer.resources as r; print(r.demo_session_path())",
        cwd=tmp_path,
    ).strip()
    assert "Timeline:" in _run(installed, "-m", "ctxviewer", "report", demo, cwd=tmp_path)
    assert "$" in _run(installed, "-m", "ctxviewer", "insights", demo, cwd=tmp_path)
    assert "requests scored" in _run(installed, "-m", "ctxviewer", "compare", demo, cwd=tmp_path)
    assert "strategy qwen" in _run(
        installed, "-m", "ctxviewer", "compact", demo, "--strategy", "qwen", cwd=tmp_path
    )
    assert "claude-code" in _run(installed, "-m", "ctxviewer", "formats", cwd=tmp_path)
    installed_files = _run(installed, "-m", "ctxviewer", "--install-desktop", cwd=tmp_path)
    assert "ctxviewer.desktop" in installed_files and "ctxviewer.svg" in installed_files
