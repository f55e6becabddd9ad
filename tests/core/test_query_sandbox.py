"""``ctxviewer query`` runs a shared query file boxed in (issue #33): it reads its dataset
and nothing else, writes nothing, fetches nothing, and cannot unlock itself."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest
from team_data import run

from ctxviewer.resources import demo_session_path


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a dataset (``ds``), a sibling dataset whose name begins like it
    (``ds-other``) and a private file beside them."""
    root = tmp_path_factory.mktemp("box")
    assert run("export", str(demo_session_path()), "--parquet", str(root / "ds"))[0] == 0
    shutil.copytree(root / "ds", root / "ds-other")
    (root / "private.txt").write_text("PRIVATE-CONTENT\n")
    return root


def _files(root: Path) -> set[Path]:
    return set(root.rglob("*"))


ATTACKS = [
    "COPY (SELECT 1 AS a) TO '{root}/out.csv'",
    "COPY (SELECT 1 AS a) TO '{root}/out.csv';\nSELECT 1",  # the SELECT's output alone shows
    "SELECT 1;\nCOPY (SELECT 1 AS a) TO '{root}/out.csv'",
    "COPY (SELECT 1 AS a) TO '{root}/ds/out.csv'",  # inside the dataset: still no writing
    "EXPORT DATABASE '{root}/exported'",
    "ATTACH '{root}/new.db'",
    "ATTACH '{root}/ds/new.db'",
    "CREATE TABLE t AS SELECT 1",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SELECT * FROM read_csv('/etc/passwd', sep = ':')",
    "SELECT * FROM read_text('{root}/private.txt')",
    "SELECT * FROM read_text('{root}/ds/../private.txt')",
    "SELECT * FROM read_blob('/proc/self/environ')",
    "SELECT * FROM glob('/*')",
    "SELECT * FROM glob('{root}/*')",
    "SELECT COUNT(*) FROM read_parquet('{root}/ds-other/requests/**/*.parquet')",
    "SELECT * FROM sniff_csv('/etc/passwd')",
    "SET enable_external_access = true;\nSELECT * FROM read_text('{root}/private.txt')",
    "SET allowed_directories = ['/'];\nSELECT * FROM read_text('{root}/private.txt')",
    "SET lock_configuration = false;\nSELECT 1",
    "SET temp_directory = '{root}/spill';\nSELECT 1",
    "PRAGMA database_list",
    "CALL pragma_version()",
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_query_cannot_write_read_or_fetch_outside_its_dataset(
    place: Path, tmp_path: Path, attack: str
) -> None:
    sql = tmp_path / "attack.sql"
    sql.write_text(attack.format(root=place))
    before = _files(place)
    status, out, err = run("query", str(sql), str(place / "ds"))
    assert status == 2 and out == ""
    assert err.startswith(f"ctxviewer: {sql}: ") and err.count("\n") == 1
    assert "PRIVATE-CONTENT" not in err and "root:" not in err
    assert _files(place) == before  # nothing written, inside the dataset or out


def test_a_url_is_never_fetched(place: Path, tmp_path: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.2)
        port = listener.getsockname()[1]
        sql = tmp_path / "fetch.sql"
        sql.write_text(f"SELECT * FROM read_csv('http://127.0.0.1:{port}/data.csv')")
        status, _, err = run("query", str(sql), str(place / "ds"))
        assert status == 2 and "disabled" in err
        with pytest.raises(TimeoutError):
            listener.accept()


def test_the_dataset_reads_and_computing_settings_still_apply(place: Path, tmp_path: Path) -> None:
    sql = tmp_path / "ok.sql"
    sql.write_text(
        "SET integer_division = true;\nSELECT 7 / 2 AS half, COUNT(*) AS requests FROM requests;"
    )
    status, out, err = run("query", str(sql), str(place / "ds"), "--csv")
    assert (status, err) == (0, "")
    assert out.splitlines() == ["half,requests", "3,55"]
    sql.write_text("DESCRIBE requests")
    status, out, _ = run("query", str(sql), str(place / "ds"))
    assert status == 0 and "cost_usd" in out
