-- +goose Up
CREATE TABLE projects (
    id                 TEXT PRIMARY KEY,
    name               TEXT    NOT NULL,
    description        TEXT,
    mode               TEXT    NOT NULL DEFAULT 'open',
    default_stickiness TEXT    NOT NULL DEFAULT 'default',
    health             INTEGER NOT NULL DEFAULT 100,
    created_at         BIGINT  NOT NULL,
    updated_at         BIGINT
);

CREATE TABLE environments (
    name       TEXT PRIMARY KEY,
    type       TEXT    NOT NULL,
    sort_order INTEGER NOT NULL DEFAULT 0,
    enabled    BOOLEAN NOT NULL DEFAULT TRUE,
    protected  BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT  NOT NULL
);

CREATE TABLE project_environments (
    project_id       TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    environment_name TEXT NOT NULL REFERENCES environments (name) ON DELETE CASCADE,
    default_strategy TEXT,
    PRIMARY KEY (project_id, environment_name)
);

CREATE TABLE feature_types (
    id            TEXT PRIMARY KEY,
    name          TEXT    NOT NULL,
    description   TEXT    NOT NULL,
    lifetime_days INTEGER,
    sort_order    INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE strategy_types (
    name         TEXT PRIMARY KEY,
    display_name TEXT,
    title        TEXT,
    description  TEXT,
    built_in     BOOLEAN NOT NULL DEFAULT FALSE,
    deprecated   BOOLEAN NOT NULL DEFAULT FALSE,
    sort_order   INTEGER NOT NULL DEFAULT 9999,
    parameters   TEXT    NOT NULL DEFAULT '[]',
    created_at   BIGINT  NOT NULL
);

CREATE TABLE features (
    name              TEXT PRIMARY KEY,
    project_id        TEXT    NOT NULL REFERENCES projects (id),
    type              TEXT    NOT NULL DEFAULT 'release',
    description       TEXT,
    stale             BOOLEAN NOT NULL DEFAULT FALSE,
    potentially_stale BOOLEAN NOT NULL DEFAULT FALSE,
    impression_data   BOOLEAN NOT NULL DEFAULT FALSE,
    archived_at       BIGINT,
    created_at        BIGINT  NOT NULL,
    created_by        TEXT,
    last_seen_at      BIGINT
);
CREATE INDEX features_project ON features (project_id);

CREATE TABLE feature_environments (
    feature_name TEXT    NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    environment  TEXT    NOT NULL REFERENCES environments (name) ON DELETE CASCADE,
    enabled      BOOLEAN NOT NULL DEFAULT FALSE,
    variants     TEXT    NOT NULL DEFAULT '[]',
    last_seen_at BIGINT,
    PRIMARY KEY (feature_name, environment)
);

CREATE TABLE segments (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT   NOT NULL UNIQUE,
    description TEXT,
    project     TEXT REFERENCES projects (id) ON DELETE CASCADE,
    constraints TEXT   NOT NULL DEFAULT '[]',
    created_by  TEXT,
    created_at  BIGINT NOT NULL
);

CREATE TABLE feature_strategies (
    id            TEXT PRIMARY KEY,
    feature_name  TEXT    NOT NULL,
    environment   TEXT    NOT NULL,
    strategy_name TEXT    NOT NULL,
    title         TEXT,
    disabled      BOOLEAN NOT NULL DEFAULT FALSE,
    sort_order    INTEGER NOT NULL DEFAULT 0,
    parameters    TEXT    NOT NULL DEFAULT '{}',
    constraints   TEXT    NOT NULL DEFAULT '[]',
    variants      TEXT    NOT NULL DEFAULT '[]',
    created_at    BIGINT  NOT NULL,
    FOREIGN KEY (feature_name, environment) REFERENCES feature_environments (feature_name, environment) ON DELETE CASCADE
);
CREATE INDEX feature_strategies_feature ON feature_strategies (feature_name, environment);

CREATE TABLE feature_strategy_segments (
    strategy_id TEXT    NOT NULL REFERENCES feature_strategies (id) ON DELETE CASCADE,
    segment_id  INTEGER NOT NULL REFERENCES segments (id),
    PRIMARY KEY (strategy_id, segment_id)
);
CREATE INDEX feature_strategy_segments_segment ON feature_strategy_segments (segment_id);

CREATE TABLE feature_dependencies (
    child    TEXT    NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    parent   TEXT    NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    enabled  BOOLEAN NOT NULL DEFAULT TRUE,
    variants TEXT    NOT NULL DEFAULT '[]',
    PRIMARY KEY (child, parent)
);
CREATE INDEX feature_dependencies_parent ON feature_dependencies (parent);

CREATE TABLE users (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    username   TEXT UNIQUE,
    name       TEXT,
    email      TEXT,
    root_role  TEXT    NOT NULL DEFAULT 'Viewer',
    is_service BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT  NOT NULL
);

CREATE TABLE user_tokens (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    secret_hash TEXT    NOT NULL UNIQUE,
    user_id     INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    description TEXT,
    hint        TEXT    NOT NULL,
    expires_at  BIGINT,
    created_at  BIGINT  NOT NULL,
    seen_at     BIGINT
);

CREATE TABLE api_tokens (
    secret_hash TEXT PRIMARY KEY,
    token_name  TEXT   NOT NULL,
    type        TEXT   NOT NULL,
    environment TEXT   NOT NULL,
    projects    TEXT   NOT NULL DEFAULT '["*"]',
    hint        TEXT   NOT NULL,
    expires_at  BIGINT,
    created_at  BIGINT NOT NULL,
    seen_at     BIGINT
);

CREATE TABLE events (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    type               TEXT   NOT NULL,
    created_by         TEXT   NOT NULL,
    created_by_user_id BIGINT,
    created_at         BIGINT NOT NULL,
    data               TEXT,
    pre_data           TEXT,
    tags               TEXT   NOT NULL DEFAULT '[]',
    feature_name       TEXT,
    project            TEXT,
    environment        TEXT
);
CREATE INDEX events_type ON events (type, id);
CREATE INDEX events_project ON events (project, id);
CREATE INDEX events_feature ON events (feature_name, id);

CREATE TABLE client_applications (
    app_name    TEXT   NOT NULL,
    instance_id TEXT   NOT NULL,
    environment TEXT   NOT NULL DEFAULT '',
    sdk_version TEXT,
    strategies  TEXT   NOT NULL DEFAULT '[]',
    interval_ms BIGINT NOT NULL DEFAULT 0,
    started_at  BIGINT,
    created_at  BIGINT NOT NULL,
    last_seen   BIGINT NOT NULL,
    PRIMARY KEY (app_name, instance_id)
);

CREATE TABLE client_metrics_hourly (
    feature_name TEXT   NOT NULL,
    app_name     TEXT   NOT NULL,
    environment  TEXT   NOT NULL,
    hour         BIGINT NOT NULL,
    yes          BIGINT NOT NULL DEFAULT 0,
    no           BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (feature_name, app_name, environment, hour)
);

CREATE TABLE client_metrics_variants_hourly (
    feature_name TEXT   NOT NULL,
    app_name     TEXT   NOT NULL,
    environment  TEXT   NOT NULL,
    hour         BIGINT NOT NULL,
    variant      TEXT   NOT NULL,
    count        BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (feature_name, app_name, environment, hour, variant)
);

-- +goose Down
DROP TABLE client_metrics_variants_hourly;
DROP TABLE client_metrics_hourly;
DROP TABLE client_applications;
DROP TABLE events;
DROP TABLE api_tokens;
DROP TABLE user_tokens;
DROP TABLE users;
DROP TABLE feature_dependencies;
DROP TABLE feature_strategy_segments;
DROP TABLE feature_strategies;
DROP TABLE segments;
DROP TABLE feature_environments;
DROP TABLE features;
DROP TABLE strategy_types;
DROP TABLE feature_types;
DROP TABLE project_environments;
DROP TABLE environments;
DROP TABLE projects;
