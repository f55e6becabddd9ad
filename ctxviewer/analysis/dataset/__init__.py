"""The team dataset (docs/parquet.md): every session as rows of four tables,
``sessions``, ``requests``, ``categories`` and ``items``, in plain Python.

``schema`` names the columns and their types; ``rows`` computes a session's rows
from the ``Analysis`` that ``report`` prints, so the numbers agree with it. Writing
them as Parquet (pyarrow) and querying them (DuckDB) is the commands' part
(``commands.export``, ``commands.query``): this package imports neither.
"""
