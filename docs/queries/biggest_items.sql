-- The largest single overheads: each tool, MCP server, skill, memory file and system
-- prompt block, by the tokens it carried over every request the API counted (top 25).
-- An MCP server is one row (its tools are the rows whose parent names it).
--   requests        requests that carried it
--   avg_tokens      its tokens per request that carried it
--   tokens_carried  over all those requests
--   usd             its part of their prompts' cost (as in biggest_overheads.sql)
-- Rounding goes through a decimal, ROUND(CAST(x AS DECIMAL(38, 8)), n), so that DuckDB
-- and Spark round a half alike (docs/parquet.md, "Rounding").
SELECT i.category,
       i.name,
       COUNT(*) AS requests,
       ROUND(CAST(AVG(CAST(i.tokens AS DOUBLE)) AS DECIMAL(38, 8)), 0) AS avg_tokens,
       SUM(i.tokens) AS tokens_carried,
       ROUND(CAST(SUM(i.tokens * (r.uncached_input_usd + r.cache_write_usd + r.cache_read_usd)
                 / r.api_prompt_tokens) AS DECIMAL(38, 8)), 4) AS usd
FROM items i
JOIN requests r ON r.session_key = i.session_key AND r.index = i.request
WHERE i.parent IS NULL
  AND r.api_prompt_tokens > 0
GROUP BY i.category, i.name
ORDER BY tokens_carried DESC, i.category, i.name
LIMIT 25
