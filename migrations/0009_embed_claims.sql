-- Embedding drains claim the rows they embed, so that drains of one project running at once (a
-- drain job per second of writes, a backfill call) take disjoint batches instead of embedding the
-- same rows twice. A claim older than a few minutes (a drain that crashed) lapses.
ALTER TABLE memories ADD COLUMN embed_claimed_at timestamptz;
