"""The columns of the team dataset's tables, and how its files are partitioned.

Types are named once here, in a small vocabulary that the Parquet writer and the
query command each map to their own types (pyarrow, DuckDB); docs/parquet.md lists
every column with the same type names (``tests/core/test_parquet_docs.py`` checks).
"""

from __future__ import annotations

from dataclasses import dataclass

STRING = "string"
INT = "int64"
FLOAT = "float64"
BOOL = "bool"
TIMESTAMP = "timestamp"  # microseconds, UTC
DATE = "date"
STRINGS = "list<string>"
STRUCTS = "list<struct>"  # a list of records: ``Column.fields`` names their fields


@dataclass(frozen=True)
class Column:
    """One column of a table: its name and type (and, for a list of records, their fields)."""

    name: str
    type: str
    fields: tuple[tuple[str, str], ...] = ()

    @property
    def type_name(self) -> str:
        """The type as docs/parquet.md writes it."""
        if self.type != STRUCTS:
            return self.type
        return "list<struct<" + ", ".join(f"{n}: {t}" for n, t in self.fields) + ">>"


# the hive-style partition of every table: agent=<id>/date=<YYYY-MM-DD>/ (not stored in the
# files: an engine reads them from the path)
PARTITION = (Column("agent", STRING), Column("date", DATE))
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"  # a session without a date (Hive's, Spark's null)

KEY = Column("session_key", STRING)

SESSIONS = (
    KEY,
    Column("session_number", INT),
    Column("path", STRING),
    Column("format", STRING),
    Column("agent_label", STRING),
    Column("project", STRING),
    Column("model", STRING),
    Column("start_timestamp", STRING),
    Column("end_timestamp", STRING),
    Column("requests", INT),
    Column("main_requests", INT),
    Column("peak_prompt_tokens", INT),
    Column("peak_request", INT),
    Column("window_tokens", INT),
    Column("peak_share", FLOAT),
    Column("compactions_observed", INT),
    Column("compactions_predicted", INT),
    Column("cost_usd", FLOAT),
    Column("cache_hit_rate", FLOAT),
    Column("top_categories", STRUCTS, (("name", STRING), ("tokens", INT))),
    Column(
        "subagent_runs",
        STRUCTS,
        (
            ("agent_id", STRING),
            ("agent_type", STRING),
            ("requests", INT),
            ("peak_prompt_tokens", INT),
            ("cost_usd", FLOAT),
        ),
    ),
    Column("skipped_records", INT),
    Column(
        "top_sources",
        STRUCTS,
        (("kind", STRING), ("name", STRING), ("token_requests", INT), ("cost_usd", FLOAT)),
    ),
)

# ``session_summary.SessionSummary.as_dict()`` keys stored under another name: END and
# WINDOW are reserved words of SQL, and start goes with end
RENAMED = {"start": "start_timestamp", "end": "end_timestamp", "window": "window_tokens"}

REQUESTS = (
    KEY,
    Column("index", INT),
    Column("timestamp", STRING),
    Column("sent_at", TIMESTAMP),
    Column("model", STRING),
    Column("role", STRING),
    Column("sidechain", BOOL),
    Column("subagent_id", STRING),
    Column("api_prompt_tokens", INT),
    Column("estimated_prompt_tokens", INT),
    Column("output_tokens", INT),
    Column("cache_read_input_tokens", INT),
    Column("cache_creation_input_tokens", INT),
    Column("tier", STRING),
    Column("events", STRINGS),
    Column("failure", STRING),
    Column("attributed_exact", INT),
    Column("estimated", INT),
    Column("unattributed", INT),
    Column("compaction_observed", BOOL),
    Column("compaction_trigger", STRING),
    Column("compaction_predicted", BOOL),
    Column("breakdown_mode", STRING),
    Column("window_tokens", INT),
    Column("price", STRING),
    Column("has_usage", BOOL),
    Column("input_tokens", INT),
    Column("cache_write_5m_tokens", INT),
    Column("cache_write_1h_tokens", INT),
    Column("uncached_input_usd", FLOAT),
    Column("cache_write_usd", FLOAT),
    Column("cache_read_usd", FLOAT),
    Column("output_usd", FLOAT),
    Column("cost_usd", FLOAT),
    Column("no_cache_usd", FLOAT),
    Column("price_input_per_mtok", FLOAT),
    Column("price_cache_write_5m_per_mtok", FLOAT),
    Column("price_cache_write_1h_per_mtok", FLOAT),
    Column("price_cache_read_per_mtok", FLOAT),
    Column("price_output_per_mtok", FLOAT),
)

CATEGORIES = (
    KEY,
    Column("request", INT),
    Column("position", INT),
    Column("category", STRING),
    Column("tokens", INT),
    Column("estimated", INT),
    Column("basis", STRING),
)

ITEMS = (
    KEY,
    Column("request", INT),
    Column("category", STRING),
    Column("position", INT),
    Column("name", STRING),
    Column("kind", STRING),
    Column("parent", STRING),
    Column("tokens", INT),
    Column("leaf", BOOL),
)

TABLES: dict[str, tuple[Column, ...]] = {
    "sessions": SESSIONS,
    "requests": REQUESTS,
    "categories": CATEGORIES,
    "items": ITEMS,
}
