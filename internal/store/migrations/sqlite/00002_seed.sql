-- +goose Up
-- What a fresh database holds: project default, environments development and
-- production, the built-in strategy types and the five feature types.
INSERT INTO projects (id, name, description, mode, default_stickiness, health, created_at)
VALUES ('default', 'Default', 'Default project', 'open', 'default', 100, CAST(strftime('%s', 'now') AS BIGINT) * 1000);

INSERT INTO environments (name, type, sort_order, enabled, protected, created_at) VALUES
    ('development', 'development', 2, TRUE, FALSE, CAST(strftime('%s', 'now') AS BIGINT) * 1000),
    ('production', 'production', 3, TRUE, FALSE, CAST(strftime('%s', 'now') AS BIGINT) * 1000);

INSERT INTO project_environments (project_id, environment_name) VALUES
    ('default', 'development'),
    ('default', 'production');

INSERT INTO feature_types (id, name, description, lifetime_days, sort_order) VALUES
    ('release', 'Release', 'Ships new or unfinished work gradually. Expected to be removed after about 40 days.', 40, 1),
    ('experiment', 'Experiment', 'Compares variants of a feature (A/B or multivariate tests). Expected to be removed after about 40 days.', 40, 2),
    ('operational', 'Operational', 'Switches between technical implementations during a migration. Expected to be removed after about 7 days.', 7, 3),
    ('kill-switch', 'Kill switch', 'Turns a capability off quickly when it misbehaves. Kept permanently.', NULL, 4),
    ('permission', 'Permission', 'Grants a feature to selected users or plans. Kept permanently.', NULL, 5);

INSERT INTO strategy_types (name, display_name, title, description, built_in, deprecated, sort_order, parameters, created_at) VALUES
    ('flexibleRollout', 'Gradual rollout', NULL,
     'Turns the flag on for a stable percentage of users: the same user gets the same answer every time.',
     TRUE, FALSE, 0,
     '[{"name":"rollout","type":"percentage","description":"","required":false},{"name":"stickiness","type":"string","description":"Context field that keeps a user in the same bucket: default, userId, sessionId, random or a custom field","required":true},{"name":"groupId","type":"string","description":"Bucket group; flags sharing a groupId put the same users in the same buckets","required":true}]',
     CAST(strftime('%s', 'now') AS BIGINT) * 1000),
    ('default', 'Standard', NULL,
     'On for everyone while the environment is on. A gradual rollout at 100% does the same and can be dialled down later.',
     TRUE, FALSE, 1, '[]', CAST(strftime('%s', 'now') AS BIGINT) * 1000),
    ('remoteAddress', 'IPs', NULL, 'On for requests coming from the listed IP addresses or CIDR ranges.',
     TRUE, FALSE, 3,
     '[{"name":"IPs","type":"list","description":"Comma-separated IP addresses or CIDR ranges","required":true}]',
     CAST(strftime('%s', 'now') AS BIGINT) * 1000),
    ('applicationHostname', 'Hosts', NULL, 'On for SDK instances running on the listed host names.',
     TRUE, FALSE, 4,
     '[{"name":"hostNames","type":"list","description":"Comma-separated host names","required":false}]',
     CAST(strftime('%s', 'now') AS BIGINT) * 1000);

-- +goose Down
DELETE FROM strategy_types;
DELETE FROM feature_types;
DELETE FROM project_environments;
DELETE FROM environments;
DELETE FROM projects;
