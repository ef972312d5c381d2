-- +goose Up
-- Fast event search: exact totals per (type, project, flag), composite
-- indexes for combined filters, and a trigram full-text index for the
-- free-text query.
CREATE TABLE event_counts (
    type         TEXT   NOT NULL,
    project      TEXT   NOT NULL DEFAULT '',
    feature_name TEXT   NOT NULL DEFAULT '',
    n            BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (type, project, feature_name)
);
CREATE INDEX event_counts_project ON event_counts (project);
CREATE INDEX event_counts_feature ON event_counts (feature_name);
INSERT INTO event_counts (type, project, feature_name, n)
    SELECT type, COALESCE(project, ''), COALESCE(feature_name, ''), COUNT(*) FROM events
    GROUP BY type, COALESCE(project, ''), COALESCE(feature_name, '');

CREATE INDEX events_project_type ON events (project, type, id);
CREATE INDEX events_feature_type ON events (feature_name, type, id);

CREATE VIRTUAL TABLE events_fts USING fts5(body, content='', tokenize='trigram');
INSERT INTO events_fts (rowid, body)
    SELECT id, type || ' ' || created_by || ' ' || COALESCE(data, '') || ' ' || COALESCE(pre_data, '') || ' ' || tags FROM events;

-- +goose Down
DROP TABLE events_fts;
DROP INDEX events_feature_type;
DROP INDEX events_project_type;
DROP TABLE event_counts;
