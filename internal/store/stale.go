package store

import "time"

// StaleCandidate is a flag whose potentially-stale mark must change.
type StaleCandidate struct {
	Name    string
	Project string
	// PotentiallyStale is the new value.
	PotentiallyStale bool
}

// PotentiallyStaleChanges lists the live, non-stale flags whose stored
// potentially-stale mark differs from "older than its type's lifetime" at now.
// Types without a lifetime never make a flag potentially stale.
func (q Q) PotentiallyStaleChanges(now time.Time) ([]StaleCandidate, error) {
	var out []StaleCandidate
	nowMs := Millis(now)
	err := q.eachRow(func(row scanner) error {
		var (
			c       StaleCandidate
			current bool
			created int64
			days    *int64
		)
		if err := row.Scan(&c.Name, &c.Project, &current, &created, &days); err != nil {
			return err
		}
		c.PotentiallyStale = days != nil && *days > 0 && nowMs > created+*days*24*int64(time.Hour/time.Millisecond)
		if c.PotentiallyStale != current {
			out = append(out, c)
		}
		return nil
	}, `SELECT f.name, f.project_id, f.potentially_stale, f.created_at, t.lifetime_days
		FROM features f LEFT JOIN feature_types t ON t.id = f.type
		WHERE f.archived_at IS NULL AND NOT f.stale`)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetPotentiallyStale stores a flag's potentially-stale mark and reports
// whether it changed (another instance may have stored it first).
func (q Q) SetPotentiallyStale(name string, value bool) (bool, error) {
	n, err := q.exec(`UPDATE features SET potentially_stale = $2 WHERE name = $1 AND potentially_stale <> $2`, name, value)
	return n > 0, err
}

// SetStale stores a flag's stale mark and reports whether it changed. A
// stale flag is no longer potentially stale.
func (q Q) SetStale(name string, value bool) (bool, error) {
	n, err := q.exec(`UPDATE features SET stale = $2, potentially_stale = CASE WHEN $2 THEN FALSE ELSE potentially_stale END
		WHERE name = $1 AND stale <> $2`, name, value)
	return n > 0, err
}

// StrategyTypeInUse reports whether any flag strategy uses the strategy type.
func (q Q) StrategyTypeInUse(name string) (bool, error) {
	var n int
	err := q.row([]any{&n}, `SELECT COUNT(*) FROM feature_strategies WHERE strategy_name = $1`, name)
	return n > 0, err
}
