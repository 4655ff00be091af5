-- The output moves of holder_moves (+ amount at the output's block time) from every row written to holder_outputs,
-- by the engine: the holders pass no longer builds, serialises and sends a second copy of each output row
-- (holder_moves took 144,446 rows in bench:pipeline's 4,000 blocks, 75,603 of them copies of holder_outputs rows).
-- A retraction's flip of holder_outputs (main_chain false, the retraction's seq) flips the same moves here, as
-- the pass's flip of holder_moves does: the two rows are the same row of the ReplacingMergeTree.
-- Rows written before this migration already have their moves (the pass wrote them).
CREATE MATERIALIZED VIEW IF NOT EXISTS holder_output_moves_mv TO holder_moves AS
SELECT token_id, address, ts, key, 'output' AS kind, block_hash, amount, main_chain, version
FROM holder_outputs;
