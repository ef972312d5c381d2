package store

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What SDKs report (usage counts, the instances that report) is written in
// batches by internal/usage. The writes below are additive or idempotent,
// so several server instances may flush the same keys: every flush adds
// its own counts, and none overwrites another's. Each writer sorts its
// rows by key, so that two instances flushing the same keys at once lock
// them in the same order (PostgreSQL), instead of deadlocking.

// Telemetry returns a query runner on tx for statements that record what
// SDKs report: they are statistics, not changes, so they need no event of
// their own and do not move the generation that caches of the
// configuration key on.
func (tx *Tx) Telemetry() Q { return Q{ctx: tx.ctx, q: tx.q, s: tx.s} }

// UsageCount is one flag's yes/no counts from one application in one
// environment and hour.
type UsageCount struct {
	Feature, App, Environment string
	// Hour is the start of the hour, in unix milliseconds.
	Hour    int64
	Yes, No int64
}

// VariantCount is how often one variant of a flag was chosen by one
// application in one environment and hour.
type VariantCount struct {
	Feature, App, Environment string
	Hour                      int64
	Variant                   string
	Count                     int64
}

// FlagSeen says that a flag was used in an environment at a time.
type FlagSeen struct {
	Feature, Environment string
	At                   time.Time
}

// Instance is an SDK instance as it registers or reports.
type Instance struct {
	AppName     string
	InstanceID  string
	Environment string
	SDKVersion  string
	// SDKType is "backend" (client API) or "frontend" (frontend API).
	SDKType  string
	ClientIP string
	// Strategies, Interval and StartedAt come from registrations; a report
	// leaves the stored ones as they are.
	Strategies []string
	Interval   int64
	StartedAt  *time.Time
	LastSeen   time.Time
}

// AppUsage is a project and environment an application's token gave it.
type AppUsage struct {
	App, Project, Environment string
}

// rowsPerStatement bounds a multi-row statement, far below the parameter
// limits of both databases (SQLite 32,766, PostgreSQL 65,535).
const rowsPerStatement = 500

// rowsStatement runs one statement per chunk of n rows: head is the
// statement up to the rows' VALUES list, tail what follows it (which must
// hold no parameter); args(i) gives row i's values, one per column of
// casts, which names the SQL type a column's parameter is cast to ("" for
// none; PostgreSQL cannot tell the types of parameters in a VALUES list
// that is not inserted). each, when not nil, receives each returned row.
func (q Q) rowsStatement(head, tail string, n int, casts []string, args func(i int) []any, each func(row scanner) error) error {
	// SQLite looks each $N up in a list of the names seen so far, which
	// makes parsing a statement of thousands of them quadratic; its plain
	// ? is numbered in order without a lookup.
	sqlite := q.s.dialect.Name == "sqlite"
	for start := 0; start < n; start += rowsPerStatement {
		end := min(start+rowsPerStatement, n)
		var b strings.Builder
		b.WriteString(head)
		b.WriteString(" VALUES ")
		vals := make([]any, 0, (end-start)*len(casts))
		for i := start; i < end; i++ {
			if i > start {
				b.WriteByte(',')
			}
			b.WriteByte('(')
			for c, cast := range casts {
				if c > 0 {
					b.WriteByte(',')
				}
				if cast != "" {
					b.WriteString("CAST(")
				}
				if sqlite {
					b.WriteByte('?')
				} else {
					b.WriteByte('$')
					b.WriteString(strconv.Itoa(len(vals) + c + 1))
				}
				if cast != "" {
					b.WriteString(" AS " + cast + ")")
				}
			}
			b.WriteByte(')')
			vals = append(vals, args(i)...)
		}
		b.WriteByte(' ')
		b.WriteString(tail)
		var err error
		if each != nil {
			err = q.eachRow(each, b.String(), vals...)
		} else {
			_, err = q.exec(b.String(), vals...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// columns is n columns without casts.
func columns(n int) []string { return make([]string, n) }

// AddUsage adds counts to the hourly usage of each flag, saturating at
// the largest count instead of overflowing.
func (q Q) AddUsage(counts []UsageCount) error {
	slices.SortFunc(counts, func(a, b UsageCount) int {
		return cmp.Or(strings.Compare(a.Feature, b.Feature), strings.Compare(a.App, b.App),
			strings.Compare(a.Environment, b.Environment), cmp.Compare(a.Hour, b.Hour))
	})
	return q.rowsStatement(`INSERT INTO client_metrics_hourly (feature_name, app_name, environment, hour, yes, no)`,
		`ON CONFLICT (feature_name, app_name, environment, hour) DO UPDATE SET
			yes = `+saturatingSum("client_metrics_hourly.yes", "excluded.yes")+`,
			no = `+saturatingSum("client_metrics_hourly.no", "excluded.no"),
		len(counts), columns(6), func(i int) []any {
			c := counts[i]
			return []any{c.Feature, c.App, c.Environment, c.Hour, c.Yes, c.No}
		}, nil)
}

// AddVariantUsage adds counts to the hourly counts of variants.
func (q Q) AddVariantUsage(counts []VariantCount) error {
	slices.SortFunc(counts, func(a, b VariantCount) int {
		return cmp.Or(strings.Compare(a.Feature, b.Feature), strings.Compare(a.App, b.App),
			strings.Compare(a.Environment, b.Environment), cmp.Compare(a.Hour, b.Hour), strings.Compare(a.Variant, b.Variant))
	})
	return q.rowsStatement(`INSERT INTO client_metrics_variants_hourly (feature_name, app_name, environment, hour, variant, count)`,
		`ON CONFLICT (feature_name, app_name, environment, hour, variant) DO UPDATE SET
			count = `+saturatingSum("client_metrics_variants_hourly.count", "excluded.count"),
		len(counts), columns(6), func(i int) []any {
			c := counts[i]
			return []any{c.Feature, c.App, c.Environment, c.Hour, c.Variant, c.Count}
		}, nil)
}

// saturatingSum is SQL adding two non-negative BIGINT counts, stopping at
// the largest one: SDKs report any count up to it, and an overflowing sum
// fails on PostgreSQL (and turns into a float on SQLite).
func saturatingSum(stored, added string) string {
	return "CASE WHEN " + stored + " > 9223372036854775807 - " + added + " THEN 9223372036854775807 ELSE " + stored + " + " + added + " END"
}

// MarkSeen moves the lastSeenAt of each flag, and of the flag in each
// environment, forward to the time it was seen (never back: another
// instance may have written a later time). It is one statement per table,
// so that the flag rows it locks (PostgreSQL) are held for as short a
// time as the flush's commit allows.
func (q Q) MarkSeen(seen []FlagSeen) error {
	slices.SortFunc(seen, func(a, b FlagSeen) int {
		return cmp.Or(strings.Compare(a.Feature, b.Feature), strings.Compare(a.Environment, b.Environment))
	})
	latest := map[string]int64{}
	for _, s := range seen {
		latest[s.Feature] = max(latest[s.Feature], Millis(s.At))
	}
	if err := q.rowsStatement(`UPDATE feature_environments SET last_seen_at = v.column3 FROM (`,
		`) AS v WHERE feature_environments.feature_name = v.column1 AND feature_environments.environment = v.column2
			AND (feature_environments.last_seen_at IS NULL OR feature_environments.last_seen_at < v.column3)`,
		len(seen), []string{"", "", "BIGINT"}, func(i int) []any { return []any{seen[i].Feature, seen[i].Environment, Millis(seen[i].At)} }, nil); err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(latest))
	return q.rowsStatement(`UPDATE features SET last_seen_at = v.column2 FROM (`,
		`) AS v WHERE features.name = v.column1 AND (features.last_seen_at IS NULL OR features.last_seen_at < v.column2)`,
		len(names), []string{"", "BIGINT"}, func(i int) []any { return []any{names[i], latest[names[i]]} }, nil)
}

// SeeInstances records SDK instances: new ones are added, known ones get
// the reported SDK version, kind, address and environment, the
// registration's strategies, interval and start when they come from a
// registration, and the later of the two last-seen times.
func (q Q) SeeInstances(instances []Instance) error {
	slices.SortFunc(instances, func(a, b Instance) int {
		return cmp.Or(strings.Compare(a.AppName, b.AppName), strings.Compare(a.InstanceID, b.InstanceID))
	})
	const t = "client_applications"
	return q.rowsStatement(`INSERT INTO client_applications (app_name, instance_id, environment, sdk_version, sdk_type, client_ip, strategies, interval_ms, started_at, created_at, last_seen)`,
		`ON CONFLICT (app_name, instance_id) DO UPDATE SET environment = excluded.environment,
			sdk_version = COALESCE(excluded.sdk_version, `+t+`.sdk_version),
			sdk_type = COALESCE(excluded.sdk_type, `+t+`.sdk_type),
			client_ip = COALESCE(excluded.client_ip, `+t+`.client_ip),
			strategies = CASE WHEN excluded.strategies = '[]' THEN `+t+`.strategies ELSE excluded.strategies END,
			interval_ms = CASE WHEN excluded.interval_ms = 0 THEN `+t+`.interval_ms ELSE excluded.interval_ms END,
			started_at = COALESCE(excluded.started_at, `+t+`.started_at),
			last_seen = CASE WHEN excluded.last_seen > `+t+`.last_seen THEN excluded.last_seen ELSE `+t+`.last_seen END`,
		len(instances), columns(11), func(i int) []any {
			a := instances[i]
			var started any
			if a.StartedAt != nil {
				started = Millis(*a.StartedAt)
			}
			strategies, _ := json.Marshal(nonNil(a.Strategies))
			seen := Millis(a.LastSeen)
			return []any{a.AppName, a.InstanceID, a.Environment, nullString(a.SDKVersion), nullString(a.SDKType), nullString(a.ClientIP),
				string(strategies), a.Interval, started, seen, seen}
		}, nil)
}

// AddApplications records application names, first seen at the given
// times, and returns those that were not known before (in no particular
// order). Only one transaction can insert a name, so of several instances
// flushing a new application at once, exactly one learns that it is new.
func (q Q) AddApplications(firstSeen map[string]time.Time) ([]string, error) {
	names := slices.Sorted(maps.Keys(firstSeen))
	var added []string
	err := q.rowsStatement(`INSERT INTO applications (app_name, created_at)`, `ON CONFLICT (app_name) DO NOTHING RETURNING app_name`,
		len(names), columns(2), func(i int) []any { return []any{names[i], Millis(firstSeen[names[i]])} },
		func(row scanner) error {
			name, err := scanString(row)
			added = append(added, name)
			return err
		})
	return added, err
}

// AddApplicationUsage records the projects and environments that
// applications' tokens gave them.
func (q Q) AddApplicationUsage(usage []AppUsage) error {
	slices.SortFunc(usage, func(a, b AppUsage) int {
		return cmp.Or(strings.Compare(a.App, b.App), strings.Compare(a.Project, b.Project), strings.Compare(a.Environment, b.Environment))
	})
	return q.rowsStatement(`INSERT INTO application_usage (app_name, project, environment)`, `ON CONFLICT DO NOTHING`,
		len(usage), columns(3), func(i int) []any { u := usage[i]; return []any{u.App, u.Project, u.Environment} }, nil)
}

// DeleteInstancesSeenBefore deletes the SDK instances not seen since t and
// returns how many it deleted.
func (q Q) DeleteInstancesSeenBefore(t time.Time) (int64, error) {
	return q.exec(`DELETE FROM client_applications WHERE last_seen < $1`, Millis(t))
}
