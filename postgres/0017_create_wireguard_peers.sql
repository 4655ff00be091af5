-- WireGuard peers (issue 23): filled in by the WireGuard change.
SELECT 1;
