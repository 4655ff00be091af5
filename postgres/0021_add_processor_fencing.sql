-- Scale-out per topic (issue 22): fencing or keyed state; filled in by the scale-out change.
SELECT 1;
