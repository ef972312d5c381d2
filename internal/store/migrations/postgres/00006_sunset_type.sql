-- +goose Up
-- The sunset flag type of Unleash 8.0.
INSERT INTO feature_types (id, name, description, lifetime_days, sort_order) VALUES
    ('sunset', 'Sunset', 'Guards a feature while it is being retired, until its code is removed. Expected to be removed after about 90 days.', 90, 6);

-- +goose Down
DELETE FROM feature_types WHERE id = 'sunset';
