-- +goose Up
-- event_counts rows are updated with every event; vacuum them often so
-- dead row versions never pile up behind the totals of event search.
ALTER TABLE event_counts SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
    autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 1000);

-- +goose Down
ALTER TABLE event_counts RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold,
    autovacuum_analyze_scale_factor, autovacuum_analyze_threshold);
