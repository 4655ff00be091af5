-- Bans (issue 23): filled in by the bans change.
SELECT 1;
