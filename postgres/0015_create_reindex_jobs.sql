-- Reindex jobs (issue 23): filled in by the jobs change.
SELECT 1;
