-- +goose Up
-- One table for the leases that make one instance at a time do a
-- background job (signal processing, integration deliveries, scheduled
-- change requests), a row per job, in place of a table per job.
CREATE TABLE leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT,
    expires_at BIGINT NOT NULL DEFAULT 0
);
INSERT INTO leases (name, holder, expires_at)
    SELECT name, holder, expires_at FROM signal_processing_lease
    UNION ALL SELECT name, holder, expires_at FROM integration_lease
    UNION ALL SELECT name, holder, expires_at FROM change_request_lease;
DROP TABLE signal_processing_lease;
DROP TABLE integration_lease;
DROP TABLE change_request_lease;

-- +goose Down
CREATE TABLE signal_processing_lease (
    name       TEXT PRIMARY KEY,
    holder     TEXT,
    expires_at BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE integration_lease (
    name       TEXT PRIMARY KEY,
    holder     TEXT,
    expires_at BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE change_request_lease (
    name       TEXT PRIMARY KEY,
    holder     TEXT,
    expires_at BIGINT NOT NULL DEFAULT 0
);
INSERT INTO signal_processing_lease (name, holder, expires_at) VALUES ('actions', NULL, 0);
INSERT INTO integration_lease (name, holder, expires_at) VALUES ('deliveries', NULL, 0);
INSERT INTO change_request_lease (name, holder, expires_at) VALUES ('schedules', NULL, 0);
UPDATE signal_processing_lease SET holder = (SELECT holder FROM leases WHERE name = 'actions'),
    expires_at = COALESCE((SELECT expires_at FROM leases WHERE name = 'actions'), 0);
UPDATE integration_lease SET holder = (SELECT holder FROM leases WHERE name = 'deliveries'),
    expires_at = COALESCE((SELECT expires_at FROM leases WHERE name = 'deliveries'), 0);
UPDATE change_request_lease SET holder = (SELECT holder FROM leases WHERE name = 'schedules'),
    expires_at = COALESCE((SELECT expires_at FROM leases WHERE name = 'schedules'), 0);
DROP TABLE leases;
