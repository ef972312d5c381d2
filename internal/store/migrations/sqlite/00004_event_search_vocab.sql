-- +goose Up
-- Per-trigram document counts of the event text index, for inspecting it
-- (search itself matches the whole phrase; see events.go).
CREATE VIRTUAL TABLE events_fts_vocab USING fts5vocab(events_fts, 'row');

-- +goose Down
DROP TABLE events_fts_vocab;
