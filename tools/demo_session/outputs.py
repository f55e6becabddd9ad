"""Command output the story shows: pytest runs, git diffs, and the dashboard picture the user pastes."""

from __future__ import annotations

import base64
import difflib
import hashlib
import struct
import zlib

from .calls import FILES, ORIGINAL


def _png(width: int, height: int, pixels: list[bytearray]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    raw = b"".join(b"\x00" + bytes(row) for row in pixels)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def dashboard_png() -> str:
    """A 192x96 'requests per second' panel: dark background, grid, a spike."""
    w, h = 192, 96
    bg, grid, line, warn = (24, 27, 31), (44, 48, 54), (115, 191, 105), (242, 73, 92)
    rows = [bytearray(bg * w) for _ in range(h)]

    def put(x: int, y: int, c: tuple[int, int, int]) -> None:
        if 0 <= x < w and 0 <= y < h:
            rows[y][3 * x : 3 * x + 3] = bytes(c)

    for y in range(0, h, 16):
        for x in range(w):
            put(x, y, grid)
    for x in range(0, w, 32):
        for y in range(h):
            put(x, y, grid)
    prev = None
    for x in range(w):
        base = 78 - int(6 * ((x * 7919) % 13) / 13)
        y = base - (62 if 118 <= x <= 146 else 0) + (3 if 118 <= x <= 146 and x % 3 == 0 else 0)
        if prev is not None:
            for yy in range(min(prev, y), max(prev, y) + 1):
                put(x, yy, warn if 118 <= x <= 146 else line)
        put(x, y, warn if 118 <= x <= 146 else line)
        prev = y
    for x in range(w):  # the 429 threshold the user drew in
        if x % 6 < 3:
            put(x, 40, (250, 222, 42))
    return base64.b64encode(_png(w, h, rows)).decode()


def _rule(title: str, char: str = "_", width: int = 80) -> str:
    title = f" {title} "
    left = (width - len(title)) // 2
    return char * left + title + char * (width - left - len(title))


def pytest_failure(
    path: str,
    test: str,
    fixtures: list[str],
    fail_at: str,
    errors: list[str],
    kind: str = "AssertionError",
) -> str:
    """One failure block of pytest's output, quoting the test's source up to the failing line."""
    source = FILES[path].split("\n")
    name = test.split("[")[0]
    start = next(
        i for i, line in enumerate(source) if line.lstrip().startswith(f"async def {name}(")
    )
    end = next(i for i in range(start, len(source)) if fail_at in source[i])
    body = []
    for i in range(start, end + 1):
        prefix = ">   " if i == end else "    "
        body.append(prefix + source[i])
    body += ["E       " + e if e else "E" for e in errors]
    return "\n".join([_rule(test), "", *fixtures, "", *body, "", f"{path}:{end + 1}: {kind}"])


def pytest_quiet(
    marks: str, failures: list[str], summary: list[str], tail: str, seconds: float
) -> str:
    """``pytest -q`` output: progress marks in lines of 72, failures, short summary."""
    lines = []
    for i in range(0, len(marks), 72):
        chunk = marks[i : i + 72]
        pct = round(100 * (i + len(chunk)) / len(marks))
        lines.append(chunk.ljust(72) + f" [{pct:>3}%]")
    if failures:
        lines += [_rule("FAILURES", "=")]
        for f in failures:
            lines += [f, ""]
        lines.append(_rule("short test summary info", "="))
        lines += summary
    lines.append(f"{tail} in {seconds:.2f}s")
    return "\n".join(lines)


def _blob(content: str) -> str:
    data = content.encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()[:7]


def git_diff(paths: list[str]) -> str:
    """``git diff`` of ``paths`` between ORIGINAL and FILES (new files from /dev/null)."""
    out: list[str] = []
    for path in paths:
        old, new = ORIGINAL.get(path), FILES[path]
        out.append(f"diff --git a/{path} b/{path}")
        if old is None:
            out += [
                "new file mode 100644",
                f"index 0000000..{_blob(new)}",
                "--- /dev/null",
                f"+++ b/{path}",
            ]
            lines = new.splitlines()
            out.append(f"@@ -0,0 +1,{len(lines)} @@")
            out += ["+" + line for line in lines]
            continue
        out += [f"index {_blob(old)}..{_blob(new)} 100644", f"--- a/{path}", f"+++ b/{path}"]
        diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3))
        out += diff[2:]
    return "\n".join(out)


def diff_stat(paths: list[str]) -> str:
    rows = []
    total_add = total_del = 0
    for path in paths:
        old = (ORIGINAL.get(path) or "").splitlines()
        new = FILES[path].splitlines()
        add = dele = 0
        for line in difflib.unified_diff(old, new, lineterm="", n=0):
            if line.startswith("+") and not line.startswith("+++"):
                add += 1
            elif line.startswith("-") and not line.startswith("---"):
                dele += 1
        total_add += add
        total_del += dele
        rows.append((path, add, dele))
    width = max(len(p) for p, _, _ in rows)
    lines = [
        f" {p.ljust(width)} | {a + d:>3} {'+' * min(a, 40)}{'-' * min(d, 10)}" for p, a, d in rows
    ]
    lines.append(f" {len(rows)} files changed, {total_add} insertions(+), {total_del} deletions(-)")
    return "\n".join(lines)


def line_of(path: str, needle: str) -> int:
    return next(i for i, line in enumerate(FILES[path].split("\n"), 1) if needle in line)
