-- Outbound webhooks (issue 24): filled in by the webhooks change.
SELECT 1;
