-- Admin portal (issue 26): sessions and audit log; filled in by the portal change.
SELECT 1;
