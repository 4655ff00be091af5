-- Key usage counts (issue 25): filled in by the usage change.
SELECT 1;
