-- Cost by MCP server: what carrying each server's tool definitions cost, over every
-- request the API counted. Only logs that record the request bodies (proxy recordings,
-- claude-trace) list MCP tools; a transcript does not.
--   sessions, requests  that carried the server's tools
--   tools               the most tools it had in one request
--   avg_tokens          its tokens per request
--   tokens_carried      over all those requests
--   usd                 its part of their prompts' cost, priced as each request's prompt
--                       was billed (in proportion: tokens / prompt tokens x prompt cost);
--                       requests of a model without a price add nothing
-- Rounding goes through a decimal, ROUND(CAST(x AS DECIMAL(38, 8)), n), so that DuckDB
-- and Spark round a half alike (docs/parquet.md, "Rounding").
WITH tools AS (
    SELECT session_key, request, parent AS server, COUNT(*) AS tools
    FROM items
    WHERE category = 'mcp_tools' AND parent IS NOT NULL
    GROUP BY session_key, request, parent
)
SELECT i.name AS server,
       COUNT(DISTINCT i.session_key) AS sessions,
       COUNT(*) AS requests,
       MAX(t.tools) AS tools,
       ROUND(CAST(AVG(CAST(i.tokens AS DOUBLE)) AS DECIMAL(38, 8)), 0) AS avg_tokens,
       SUM(i.tokens) AS tokens_carried,
       ROUND(CAST(SUM(i.tokens * (r.uncached_input_usd + r.cache_write_usd + r.cache_read_usd)
                 / r.api_prompt_tokens) AS DECIMAL(38, 8)), 6) AS usd
FROM items i
JOIN requests r ON r.session_key = i.session_key AND r.index = i.request
LEFT JOIN tools t ON t.session_key = i.session_key AND t.request = i.request
                 AND t.server = i.name
WHERE i.category = 'mcp_tools' AND i.parent IS NULL
  AND r.api_prompt_tokens > 0
GROUP BY i.name
ORDER BY usd DESC NULLS LAST, tokens_carried DESC, server
