-- +goose Up
-- Change requests (internal/changerequests). change_request_settings says,
-- per project and environment, whether a direct change of that
-- environment's configuration needs a change request and how many
-- approvals one needs; removing the environment from the project removes
-- its row.
CREATE TABLE change_request_settings (
    project            TEXT    NOT NULL,
    environment        TEXT    NOT NULL,
    enabled            BOOLEAN NOT NULL,
    required_approvals INTEGER NOT NULL,
    PRIMARY KEY (project, environment),
    FOREIGN KEY (project, environment) REFERENCES project_environments (project_id, environment_name) ON DELETE CASCADE
);

-- A request: its state ('Draft', 'In review', 'Approved', 'Scheduled',
-- 'Applied', 'Cancelled', 'Rejected'), who drafted it (author_key: the
-- user id or the admin token's name, to tell the author apart from an
-- approver), the time each state was last entered (a JSON object) and,
-- when scheduled, when (scheduled_at), the schedule's status ('pending',
-- 'suspended', 'failed') with its reason and who scheduled it.
CREATE TABLE change_requests (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    project            TEXT    NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    environment        TEXT    NOT NULL,
    title              TEXT,
    state              TEXT    NOT NULL,
    min_approvals      INTEGER NOT NULL,
    author_key         TEXT    NOT NULL,
    created_by         TEXT    NOT NULL,
    created_by_user_id BIGINT,
    created_at         BIGINT  NOT NULL,
    state_timestamps   TEXT    NOT NULL DEFAULT '{}',
    scheduled_at       BIGINT,
    schedule_status    TEXT,
    schedule_reason    TEXT,
    scheduled_by       TEXT
);
CREATE INDEX change_requests_project ON change_requests (project, state);
CREATE INDEX change_requests_due ON change_requests (state, scheduled_at);
-- One open draft per person per environment.
CREATE UNIQUE INDEX change_requests_one_draft ON change_requests (project, environment, author_key) WHERE state = 'Draft';

-- One change of a request: a flag's (feature) or a segment's (segment_id),
-- its action and payload (JSON, as the matching admin route takes it) and
-- the version of what it changes when it was drafted ('' when nothing is
-- versioned: the change only needs the flag to exist).
CREATE TABLE change_request_changes (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    change_request_id  BIGINT  NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
    feature            TEXT,
    segment_id         BIGINT,
    action             TEXT    NOT NULL,
    payload            TEXT    NOT NULL,
    version            TEXT    NOT NULL,
    created_by         TEXT    NOT NULL,
    created_by_user_id BIGINT,
    created_at         BIGINT  NOT NULL
);
CREATE INDEX change_request_changes_request ON change_request_changes (change_request_id, id);
CREATE INDEX change_request_changes_feature ON change_request_changes (feature);

-- Approvals and rejections (rejected), one per reviewer.
CREATE TABLE change_request_reviews (
    change_request_id  BIGINT  NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
    reviewer_key       TEXT    NOT NULL,
    created_by         TEXT    NOT NULL,
    created_by_user_id BIGINT,
    rejected           BOOLEAN NOT NULL,
    created_at         BIGINT  NOT NULL,
    PRIMARY KEY (change_request_id, reviewer_key)
);

CREATE TABLE change_request_comments (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    change_request_id  BIGINT  NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
    text               TEXT    NOT NULL,
    created_by         TEXT    NOT NULL,
    created_by_user_id BIGINT,
    created_at         BIGINT  NOT NULL
);
CREATE INDEX change_request_comments_request ON change_request_comments (change_request_id, id);

-- Which instance applies scheduled requests (one at a time), as
-- signal_processing_lease.
CREATE TABLE change_request_lease (
    name       TEXT PRIMARY KEY,
    holder     TEXT,
    expires_at BIGINT NOT NULL DEFAULT 0
);
INSERT INTO change_request_lease (name, holder, expires_at) VALUES ('schedules', NULL, 0);

-- +goose Down
DROP TABLE change_request_lease;
DROP TABLE change_request_comments;
DROP TABLE change_request_reviews;
DROP TABLE change_request_changes;
DROP TABLE change_requests;
DROP TABLE change_request_settings;
