-- +goose Up
-- One row per application name, written the first time any instance of it
-- registers or reports. Inserting it decides which flush writes the
-- application-created event, so there is one event per application even
-- when several server instances see a new application at once.
CREATE TABLE applications (
    app_name   TEXT   NOT NULL PRIMARY KEY,
    created_at BIGINT NOT NULL
);
INSERT INTO applications (app_name, created_at)
    SELECT app_name, MIN(created_at) FROM client_applications GROUP BY app_name;

-- The projects and environments an application's API tokens gave it
-- (Unleash's "usage" of an application).
CREATE TABLE application_usage (
    app_name    TEXT NOT NULL,
    project     TEXT NOT NULL,
    environment TEXT NOT NULL,
    PRIMARY KEY (app_name, project, environment)
);

-- client_applications holds one row per SDK instance; these say which
-- kind of SDK it is (backend or frontend) and where it connected from.
ALTER TABLE client_applications ADD COLUMN sdk_type TEXT;
ALTER TABLE client_applications ADD COLUMN client_ip TEXT;
-- Stale instances are left out of answers and deleted by last_seen.
CREATE INDEX client_applications_last_seen ON client_applications (last_seen);
-- The flags an application reported lately.
CREATE INDEX client_metrics_hourly_app ON client_metrics_hourly (app_name, hour);

-- +goose Down
DROP INDEX client_metrics_hourly_app;
DROP INDEX client_applications_last_seen;
ALTER TABLE client_applications DROP COLUMN client_ip;
ALTER TABLE client_applications DROP COLUMN sdk_type;
DROP TABLE application_usage;
DROP TABLE applications;
