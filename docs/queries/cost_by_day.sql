-- Cost per day and agent: sessions started that day (the partition's date, UTC), their
-- requests and what they cost. Sessions without a price for any request add no cost.
-- Rounding goes through a decimal, ROUND(CAST(x AS DECIMAL(38, 8)), n), so that DuckDB
-- and Spark round a half alike (docs/parquet.md, "Rounding").
SELECT date,
       agent,
       COUNT(*) AS sessions,
       SUM(requests) AS requests,
       SUM(compactions_observed) AS compactions,
       ROUND(CAST(SUM(cost_usd) AS DECIMAL(38, 8)), 4) AS cost_usd,
       MAX(peak_prompt_tokens) AS peak_prompt_tokens
FROM sessions
GROUP BY date, agent
ORDER BY date NULLS LAST, agent
