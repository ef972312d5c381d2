package store

import "time"

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
