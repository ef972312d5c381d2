-- +goose Up
-- Server extras: tag types, tags, feature tags and context fields, with the
-- built-in tag type and context fields of a fresh database.
CREATE TABLE tag_types (
    name        TEXT PRIMARY KEY,
    description TEXT,
    icon        TEXT,
    color       TEXT,
    created_at  BIGINT NOT NULL
);

CREATE TABLE tags (
    type       TEXT   NOT NULL REFERENCES tag_types (name) ON DELETE CASCADE,
    value      TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (type, value)
);

CREATE TABLE feature_tags (
    feature_name       TEXT   NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    tag_type           TEXT   NOT NULL,
    tag_value          TEXT   NOT NULL,
    created_by_user_id BIGINT,
    created_at         BIGINT NOT NULL,
    PRIMARY KEY (feature_name, tag_type, tag_value),
    FOREIGN KEY (tag_type, tag_value) REFERENCES tags (type, value) ON DELETE CASCADE
);
CREATE INDEX feature_tags_tag ON feature_tags (tag_type, tag_value);

CREATE TABLE context_fields (
    name         TEXT PRIMARY KEY,
    description  TEXT,
    stickiness   BOOLEAN NOT NULL DEFAULT FALSE,
    sort_order   INTEGER NOT NULL DEFAULT 10,
    legal_values TEXT    NOT NULL DEFAULT '[]',
    created_at   BIGINT  NOT NULL
);

INSERT INTO tag_types (name, description, icon, color, created_at)
VALUES ('simple', 'Used to simplify filtering of features', '#', '#FFFFFF', (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT);

INSERT INTO context_fields (name, description, stickiness, sort_order, created_at) VALUES
    ('environment', 'The environment the application is running in', FALSE, 0, (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT),
    ('userId', 'An identifier of the current user', FALSE, 1, (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT),
    ('appName', 'The name of the application', FALSE, 2, (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT),
    ('currentTime', 'The time of the evaluation, for date constraints', FALSE, 3, (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT),
    ('sessionId', 'An identifier of the current session', TRUE, 4, (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT);

-- +goose Down
DROP TABLE context_fields;
DROP TABLE feature_tags;
DROP TABLE tags;
DROP TABLE tag_types;
