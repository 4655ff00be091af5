-- Versioned read-only views for data engineers (issue 25): filled in by the SQL change.
SELECT 1;
