-- A counter bumped by every statement that can change an address label (address_labels, and the
-- registered tokens whose symbols label their contracts). API processes keep labels in memory and
-- read this one row at most every EVENTS_PAGE_CACHE_MS: a new value drops what they kept.
CREATE TABLE IF NOT EXISTS label_generation (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  generation bigint NOT NULL DEFAULT 0
);
INSERT INTO label_generation (id, generation) VALUES (true, 0) ON CONFLICT (id) DO NOTHING;

CREATE OR REPLACE FUNCTION bump_label_generation() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE label_generation SET generation = generation + 1; RETURN NULL; END $$;

DROP TRIGGER IF EXISTS address_labels_generation ON address_labels;
CREATE TRIGGER address_labels_generation AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON address_labels
  FOR EACH STATEMENT EXECUTE FUNCTION bump_label_generation();

DROP TRIGGER IF EXISTS tokens_label_generation ON tokens;
CREATE TRIGGER tokens_label_generation
  AFTER INSERT OR DELETE OR TRUNCATE OR UPDATE OF contract_address, symbol, name, logo_uri, registered, deleted ON tokens
  FOR EACH STATEMENT EXECUTE FUNCTION bump_label_generation();
