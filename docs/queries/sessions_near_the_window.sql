-- The sessions that came closest to (or past) their context window: the largest prompt
-- the API counted, as a share of the window (top 20).
-- Rounding goes through a decimal, ROUND(CAST(x AS DECIMAL(38, 8)), n), so that DuckDB
-- and Spark round a half alike (docs/parquet.md, "Rounding").
SELECT agent,
       date,
       project,
       path,
       session_number,
       requests,
       peak_prompt_tokens,
       window_tokens,
       peak_share,
       compactions_observed,
       ROUND(CAST(cost_usd AS DECIMAL(38, 8)), 4) AS cost_usd
FROM sessions
WHERE peak_prompt_tokens IS NOT NULL
ORDER BY peak_share DESC, path, session_number
LIMIT 20
