-- +goose Up
CREATE TABLE signal_endpoints (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    name               TEXT    NOT NULL UNIQUE,
    description        TEXT,
    enabled            BOOLEAN NOT NULL DEFAULT TRUE,
    created_at         BIGINT  NOT NULL,
    created_by_user_id BIGINT
);

CREATE TABLE signal_endpoint_tokens (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    endpoint_id        BIGINT  NOT NULL REFERENCES signal_endpoints (id) ON DELETE CASCADE,
    name               TEXT    NOT NULL,
    secret_hash        TEXT    NOT NULL UNIQUE,
    created_at         BIGINT  NOT NULL,
    created_by_user_id BIGINT
);
CREATE INDEX signal_endpoint_tokens_endpoint ON signal_endpoint_tokens (endpoint_id);

CREATE TABLE signals (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    source      TEXT    NOT NULL,
    source_id   BIGINT  NOT NULL REFERENCES signal_endpoints (id) ON DELETE CASCADE,
    token_id    BIGINT,
    token_name  TEXT,
    payload     TEXT    NOT NULL,
    created_at  BIGINT  NOT NULL,
    claimed_by  TEXT,
    claimed_at  BIGINT,
    processed_at BIGINT
);
CREATE INDEX signals_source ON signals (source_id, id);
CREATE INDEX signals_unclaimed ON signals (claimed_by, id);

CREATE TABLE signal_endpoint_rate (
    endpoint_id  BIGINT NOT NULL,
    window_start BIGINT NOT NULL,
    hits         BIGINT NOT NULL,
    PRIMARY KEY (endpoint_id, window_start)
);

CREATE TABLE signal_processing_lease (
    name       TEXT PRIMARY KEY,
    holder     TEXT,
    expires_at BIGINT NOT NULL DEFAULT 0
);
INSERT INTO signal_processing_lease (name, holder, expires_at) VALUES ('actions', NULL, 0);

CREATE TABLE action_sets (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    project            TEXT    NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name               TEXT    NOT NULL,
    description        TEXT,
    enabled            BOOLEAN NOT NULL DEFAULT TRUE,
    actor_id           BIGINT  NOT NULL,
    source             TEXT    NOT NULL,
    source_id          BIGINT  NOT NULL REFERENCES signal_endpoints (id),
    payload_filters    TEXT    NOT NULL DEFAULT '{}',
    created_at         BIGINT  NOT NULL,
    created_by_user_id BIGINT
);
CREATE INDEX action_sets_source ON action_sets (source_id, id);

CREATE TABLE actions (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    action_set_id      BIGINT  NOT NULL REFERENCES action_sets (id) ON DELETE CASCADE,
    action             TEXT    NOT NULL,
    sort_order         INTEGER NOT NULL,
    execution_params   TEXT    NOT NULL DEFAULT '{}',
    created_at         BIGINT  NOT NULL,
    created_by_user_id BIGINT
);
CREATE INDEX actions_set ON actions (action_set_id, sort_order);

CREATE TABLE action_set_events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    action_set_id BIGINT  NOT NULL REFERENCES action_sets (id) ON DELETE CASCADE,
    signal_id     BIGINT  NOT NULL,
    state         TEXT    NOT NULL,
    signal        TEXT    NOT NULL,
    action_set    TEXT    NOT NULL,
    created_at    BIGINT  NOT NULL
);
CREATE INDEX action_set_events_set ON action_set_events (action_set_id, id);

-- +goose Down
DROP TABLE action_set_events;
DROP TABLE actions;
DROP TABLE action_sets;
DROP TABLE signal_processing_lease;
DROP TABLE signal_endpoint_rate;
DROP TABLE signals;
DROP TABLE signal_endpoint_tokens;
DROP TABLE signal_endpoints;
