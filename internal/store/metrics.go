package store

import (
	"database/sql"
	"encoding/json"
	"time"
)

// FlagUsage is one flag's counts in a metrics report.
type FlagUsage struct {
	Yes      int64
	No       int64
	Variants map[string]int64
}

// ClientApplication is an SDK instance as it registers or reports.
type ClientApplication struct {
	AppName     string
	InstanceID  string
	Environment string
	SDKVersion  string
	Strategies  []string
	Interval    int64
	StartedAt   *time.Time
}

// RecordUsage adds a metrics report to the hourly counts of each flag in
// env for app, and updates each used flag's lastSeenAt. Usage is telemetry,
// not a change, so it writes no event.
func (q Q) RecordUsage(app, env string, at time.Time, usage map[string]FlagUsage) error {
	hour := at.UTC().Truncate(time.Hour).UnixMilli()
	now := q.now()
	for name, u := range usage {
		if _, err := q.exec(`INSERT INTO client_metrics_hourly (feature_name, app_name, environment, hour, yes, no)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (feature_name, app_name, environment, hour) DO UPDATE SET
				yes = `+saturatingSum("client_metrics_hourly.yes", "excluded.yes")+`,
				no = `+saturatingSum("client_metrics_hourly.no", "excluded.no"),
			name, app, env, hour, u.Yes, u.No); err != nil {
			return err
		}
		for variant, n := range u.Variants {
			if _, err := q.exec(`INSERT INTO client_metrics_variants_hourly (feature_name, app_name, environment, hour, variant, count)
				VALUES ($1, $2, $3, $4, $5, $6)
				ON CONFLICT (feature_name, app_name, environment, hour, variant) DO UPDATE SET
					count = `+saturatingSum("client_metrics_variants_hourly.count", "excluded.count"),
				name, app, env, hour, variant, n); err != nil {
				return err
			}
		}
		if u.Yes == 0 && u.No == 0 {
			continue
		}
		if _, err := q.exec(`UPDATE feature_environments SET last_seen_at = $3 WHERE feature_name = $1 AND environment = $2`, name, env, now); err != nil {
			return err
		}
		if _, err := q.exec(`UPDATE features SET last_seen_at = $2 WHERE name = $1`, name, now); err != nil {
			return err
		}
	}
	return nil
}

// saturatingSum is SQL adding two non-negative BIGINT counts, stopping at
// the largest one: SDKs report any count up to it, and an overflowing sum
// fails on PostgreSQL (and turns into a float on SQLite).
func saturatingSum(stored, added string) string {
	return "CASE WHEN " + stored + " > 9223372036854775807 - " + added + " THEN 9223372036854775807 ELSE " + stored + " + " + added + " END"
}

// ApplicationKnown reports whether an application name has been seen.
func (q Q) ApplicationKnown(app string) (bool, error) {
	var known int
	err := q.row([]any{&known}, `SELECT COUNT(*) FROM client_applications WHERE app_name = $1`, app)
	return known > 0, err
}

// SeenApplication upserts an SDK instance.
func (q Q) SeenApplication(a ClientApplication) error {
	var started any
	if a.StartedAt != nil {
		started = Millis(*a.StartedAt)
	}
	strategies, _ := json.Marshal(nonNil(a.Strategies))
	now := q.now()
	_, err := q.exec(`INSERT INTO client_applications (app_name, instance_id, environment, sdk_version, strategies, interval_ms, started_at, created_at, last_seen)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
		ON CONFLICT (app_name, instance_id) DO UPDATE SET environment = excluded.environment,
			sdk_version = COALESCE(excluded.sdk_version, client_applications.sdk_version),
			strategies = CASE WHEN excluded.strategies = '[]' THEN client_applications.strategies ELSE excluded.strategies END,
			interval_ms = CASE WHEN excluded.interval_ms = 0 THEN client_applications.interval_ms ELSE excluded.interval_ms END,
			started_at = COALESCE(excluded.started_at, client_applications.started_at),
			last_seen = excluded.last_seen`,
		a.AppName, a.InstanceID, a.Environment, nullString(a.SDKVersion), string(strategies), a.Interval, started, now)
	return err
}

// UsageRow is one hour of a flag's usage by one application in one environment.
type UsageRow struct {
	FeatureName string           `json:"featureName"`
	AppName     string           `json:"appName"`
	Environment string           `json:"environment"`
	Timestamp   time.Time        `json:"timestamp"`
	Yes         int64            `json:"yes"`
	No          int64            `json:"no"`
	Variants    map[string]int64 `json:"variants"`
}

// FeatureUsage returns a flag's hourly usage since a time, newest first.
func (q Q) FeatureUsage(feature string, since time.Time) ([]UsageRow, error) {
	out := []UsageRow{}
	index := map[[3]string]int{}
	key := func(app, env string, hour int64) [3]string {
		return [3]string{app, env, FromMillis(hour).Format(time.RFC3339)}
	}
	err := q.eachRow(func(row scanner) error {
		var r UsageRow
		var hour int64
		if err := row.Scan(&r.FeatureName, &r.AppName, &r.Environment, &hour, &r.Yes, &r.No); err != nil {
			return err
		}
		r.Timestamp, r.Variants = FromMillis(hour), map[string]int64{}
		index[key(r.AppName, r.Environment, hour)] = len(out)
		out = append(out, r)
		return nil
	}, `SELECT feature_name, app_name, environment, hour, yes, no FROM client_metrics_hourly
		WHERE feature_name = $1 AND hour >= $2 ORDER BY hour DESC, environment, app_name`, feature, Millis(since))
	if err != nil {
		return nil, err
	}
	err = q.eachRow(func(row scanner) error {
		var app, env, variant string
		var hour, n int64
		if err := row.Scan(&app, &env, &hour, &variant, &n); err != nil {
			return err
		}
		if i, ok := index[key(app, env, hour)]; ok {
			out[i].Variants[variant] = n
		}
		return nil
	}, `SELECT app_name, environment, hour, variant, count FROM client_metrics_variants_hourly
		WHERE feature_name = $1 AND hour >= $2`, feature, Millis(since))
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ApplicationInstance is a registered SDK instance as read back.
type ApplicationInstance struct {
	AppName     string     `json:"appName"`
	InstanceID  string     `json:"instanceId"`
	Environment string     `json:"environment"`
	SDKVersion  *string    `json:"sdkVersion"`
	Strategies  []string   `json:"strategies"`
	Interval    int64      `json:"interval"`
	StartedAt   *time.Time `json:"started"`
	LastSeen    time.Time  `json:"lastSeen"`
}

// Applications lists the registered SDK instances by app and instance.
func (q Q) Applications() ([]ApplicationInstance, error) {
	return collect(q, func(row scanner) (ApplicationInstance, error) {
		var (
			a          ApplicationInstance
			sdk        sql.NullString
			strategies string
			started    sql.NullInt64
			lastSeen   int64
		)
		if err := row.Scan(&a.AppName, &a.InstanceID, &a.Environment, &sdk, &strategies, &a.Interval, &started, &lastSeen); err != nil {
			return a, err
		}
		a.SDKVersion, a.StartedAt, a.LastSeen = strPtr(sdk), timePtr(started), FromMillis(lastSeen)
		a.Strategies = []string{}
		return a, decodeJSON(strategies, &a.Strategies)
	}, `SELECT app_name, instance_id, environment, sdk_version, strategies, interval_ms, started_at, last_seen
		FROM client_applications ORDER BY app_name, instance_id`)
}
