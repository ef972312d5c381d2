-- +goose Up
-- Identity and access: roles (the five predefined ones and custom ones),
-- the permissions custom roles hold, groups with their members and SSO
-- mappings, and who holds which role in which project. The predefined
-- roles' permissions are not stored: internal/access defines them.
CREATE TABLE roles (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT   NOT NULL,
    description TEXT   NOT NULL DEFAULT '',
    type        TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    created_by  TEXT
);
CREATE UNIQUE INDEX roles_name_lower ON roles (lower(name));

INSERT INTO roles (id, name, description, type, created_at) VALUES
    (1, 'Admin', 'Holds every permission: people, roles, API tokens and every project, including private ones.', 'root', CAST(strftime('%s', 'now') AS BIGINT) * 1000),
    (2, 'Editor', 'Creates projects, segments, strategy types, context fields and tag types, and works on flags in every project it can see, except protected projects it is not a member of (no new flags there). No API tokens, people or roles.', 'root', CAST(strftime('%s', 'now') AS BIGINT) * 1000),
    (3, 'Viewer', 'Reads what is not private. Gets more rights only through project roles.', 'root', CAST(strftime('%s', 'now') AS BIGINT) * 1000),
    (4, 'Owner', 'Everything in the project: its flags in every environment, its settings and who has access.', 'project', CAST(strftime('%s', 'now') AS BIGINT) * 1000),
    (5, 'Member', 'Works on the project''s flags in every environment; cannot change the project''s settings or access.', 'project', CAST(strftime('%s', 'now') AS BIGINT) * 1000);

CREATE TABLE role_permissions (
    role_id     BIGINT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    permission  TEXT   NOT NULL,
    environment TEXT   NOT NULL DEFAULT '',
    PRIMARY KEY (role_id, permission, environment)
);

ALTER TABLE users ADD COLUMN root_role_id BIGINT NOT NULL DEFAULT 3;
UPDATE users SET root_role_id = CASE root_role WHEN 'Admin' THEN 1 WHEN 'Editor' THEN 2 ELSE 3 END;
ALTER TABLE users DROP COLUMN root_role;
CREATE INDEX users_root_role ON users (root_role_id);

CREATE TABLE groups (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT   NOT NULL,
    description  TEXT,
    mappings_sso TEXT   NOT NULL DEFAULT '[]',
    root_role_id BIGINT REFERENCES roles (id),
    created_by   TEXT,
    created_at   BIGINT NOT NULL
);
CREATE UNIQUE INDEX groups_name ON groups (name);
CREATE INDEX groups_root_role ON groups (root_role_id);

CREATE TABLE group_users (
    group_id   BIGINT NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
    user_id    BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_by TEXT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (group_id, user_id)
);
CREATE INDEX group_users_user ON group_users (user_id);

-- Project roles held by people (and service accounts) and by groups.
CREATE TABLE project_user_roles (
    project    TEXT   NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id    BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role_id    BIGINT NOT NULL REFERENCES roles (id),
    created_at BIGINT NOT NULL,
    PRIMARY KEY (project, user_id, role_id)
);
CREATE INDEX project_user_roles_user ON project_user_roles (user_id);
CREATE INDEX project_user_roles_role ON project_user_roles (role_id);

CREATE TABLE project_group_roles (
    project    TEXT   NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    group_id   BIGINT NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
    role_id    BIGINT NOT NULL REFERENCES roles (id),
    created_by TEXT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (project, group_id, role_id)
);
CREATE INDEX project_group_roles_group ON project_group_roles (group_id);
CREATE INDEX project_group_roles_role ON project_group_roles (role_id);

-- +goose Down
DROP TABLE project_group_roles;
DROP TABLE project_user_roles;
DROP TABLE group_users;
DROP TABLE groups;
DROP INDEX users_root_role;
ALTER TABLE users ADD COLUMN root_role TEXT NOT NULL DEFAULT 'Viewer';
UPDATE users SET root_role = CASE root_role_id WHEN 1 THEN 'Admin' WHEN 2 THEN 'Editor' ELSE 'Viewer' END;
ALTER TABLE users DROP COLUMN root_role_id;
DROP TABLE role_permissions;
DROP TABLE roles;
