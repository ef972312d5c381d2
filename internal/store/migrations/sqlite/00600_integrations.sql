-- +goose Up
-- Integrations (Unleash's addons): each one's provider, filters and
-- parameters. Secret parameters are kept apart, encrypted (integrations
-- package); the plain ones are a JSON object.
CREATE TABLE integrations (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    provider     TEXT    NOT NULL,
    description  TEXT,
    enabled      BOOLEAN NOT NULL DEFAULT TRUE,
    parameters   TEXT    NOT NULL DEFAULT '{}',
    secrets      TEXT    NOT NULL DEFAULT '',
    events       TEXT    NOT NULL DEFAULT '[]',
    projects     TEXT    NOT NULL DEFAULT '[]',
    environments TEXT    NOT NULL DEFAULT '[]',
    created_at   BIGINT  NOT NULL
);

-- The outbox: one row per (integration, event) still to deliver. The
-- trigger below writes it in the transaction that writes the event, so a
-- committed change always has its deliveries and a rolled-back one none.
CREATE TABLE integration_outbox (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    integration_id  BIGINT  NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
    event_id        BIGINT  NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT  NOT NULL,
    created_at      BIGINT  NOT NULL
);
CREATE INDEX integration_outbox_lane ON integration_outbox (integration_id, id);

-- The delivery log: one row per attempt (and per test send).
CREATE TABLE integration_events (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    integration_id BIGINT  NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
    delivery_id    TEXT    NOT NULL,
    event_id       BIGINT,
    event          TEXT,
    attempt        INTEGER NOT NULL,
    state          TEXT    NOT NULL,
    state_details  TEXT    NOT NULL,
    details        TEXT    NOT NULL DEFAULT '{}',
    created_at     BIGINT  NOT NULL
);
CREATE INDEX integration_events_integration ON integration_events (integration_id, id);
CREATE INDEX integration_events_created ON integration_events (created_at);

-- Which instance delivers (one at a time), as signal_processing_lease.
CREATE TABLE integration_lease (
    name       TEXT PRIMARY KEY,
    holder     TEXT,
    expires_at BIGINT NOT NULL DEFAULT 0
);
INSERT INTO integration_lease (name, holder, expires_at) VALUES ('deliveries', NULL, 0);

-- The key that encrypts secret parameters when INTEGRATION_SECRET_KEY is
-- not set (made on first use).
CREATE TABLE integration_keys (
    id         INTEGER PRIMARY KEY,
    secret     TEXT   NOT NULL,
    created_at BIGINT NOT NULL
);

-- An empty list matches everything; "*" in projects or environments too,
-- as in Unleash. Events without a project or an environment pass those
-- filters.
-- +goose StatementBegin
CREATE TRIGGER events_integration_outbox AFTER INSERT ON events
BEGIN
    INSERT INTO integration_outbox (integration_id, event_id, attempts, next_attempt_at, created_at)
    SELECT i.id, NEW.id, 0, NEW.created_at, NEW.created_at FROM integrations i
    WHERE i.enabled
      AND (i.events = '[]' OR EXISTS (SELECT 1 FROM json_each(i.events) WHERE value = NEW.type))
      AND (NEW.project IS NULL OR i.projects = '[]' OR EXISTS (SELECT 1 FROM json_each(i.projects) WHERE value IN (NEW.project, '*')))
      AND (NEW.environment IS NULL OR i.environments = '[]' OR EXISTS (SELECT 1 FROM json_each(i.environments) WHERE value IN (NEW.environment, '*')));
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER events_integration_outbox;
DROP TABLE integration_keys;
DROP TABLE integration_lease;
DROP TABLE integration_events;
DROP TABLE integration_outbox;
DROP TABLE integrations;
