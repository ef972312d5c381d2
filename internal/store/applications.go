package store

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ApplicationQuery selects a page of the applications list.
type ApplicationQuery struct {
	// Search keeps the applications whose name holds one of these texts
	// (case-insensitive); empty keeps all.
	Search []string
	// Offset and Limit choose the page, in name order (Descending: Z to A).
	Offset, Limit int
	Descending    bool
}

// ApplicationSummary is an application of the list: an application name
// any SDK instance has registered or reported with.
type ApplicationSummary struct {
	AppName   string    `json:"appName"`
	CreatedAt time.Time `json:"createdAt"`
	// Strategies are the strategy names its instances registered with.
	Strategies []string `json:"strategies"`
	// Usage lists the projects, and their environments, that its tokens
	// gave it.
	Usage []ApplicationUsage `json:"usage"`
}

// ApplicationUsage is a project an application was used in, with the
// environments.
type ApplicationUsage struct {
	Project      string   `json:"project"`
	Environments []string `json:"environments"`
}

// Applications returns one page of the applications and how many match.
func (q Q) Applications(aq ApplicationQuery) ([]ApplicationSummary, int, error) {
	var (
		where []string
		args  []any
	)
	for _, s := range aq.Search {
		args = append(args, "%"+escapeLike(strings.ToLower(s))+"%")
		where = append(where, fmt.Sprintf(`LOWER(app_name) LIKE $%d ESCAPE '\'`, len(args)))
	}
	cond := "1 = 1"
	if len(where) > 0 {
		cond = "(" + strings.Join(where, " OR ") + ")"
	}
	var total int
	if err := q.row([]any{&total}, `SELECT COUNT(*) FROM applications WHERE `+cond, args...); err != nil {
		return nil, 0, err
	}
	order := "ASC"
	if aq.Descending {
		order = "DESC"
	}
	args = append(args, aq.Limit, aq.Offset)
	apps, err := collect(q, func(row scanner) (ApplicationSummary, error) {
		var a ApplicationSummary
		var created int64
		err := row.Scan(&a.AppName, &created)
		a.CreatedAt, a.Strategies, a.Usage = FromMillis(created), []string{}, []ApplicationUsage{}
		return a, err
	}, fmt.Sprintf(`SELECT app_name, created_at FROM applications WHERE %s ORDER BY app_name %s LIMIT $%d OFFSET $%d`,
		cond, order, len(args)-1, len(args)), args...)
	if err != nil || len(apps) == 0 {
		return apps, total, err
	}
	index := map[string]int{}
	names := make([]any, len(apps))
	marks := make([]string, len(apps))
	for i, a := range apps {
		index[a.AppName], names[i], marks[i] = i, a.AppName, fmt.Sprintf("$%d", i+1)
	}
	in := "(" + strings.Join(marks, ",") + ")"
	err = q.eachRow(func(row scanner) error {
		var app, project, env string
		if err := row.Scan(&app, &project, &env); err != nil {
			return err
		}
		a := &apps[index[app]]
		if n := len(a.Usage); n > 0 && a.Usage[n-1].Project == project {
			a.Usage[n-1].Environments = append(a.Usage[n-1].Environments, env)
		} else {
			a.Usage = append(a.Usage, ApplicationUsage{Project: project, Environments: []string{env}})
		}
		return nil
	}, `SELECT app_name, project, environment FROM application_usage WHERE app_name IN `+in+` ORDER BY app_name, project, environment`, names...)
	if err != nil {
		return nil, 0, err
	}
	err = q.eachRow(func(row scanner) error {
		var app, raw string
		if err := row.Scan(&app, &raw); err != nil {
			return err
		}
		var strategies []string
		if err := decodeJSON(raw, &strategies); err != nil {
			return err
		}
		a := &apps[index[app]]
		for _, s := range strategies {
			if !slices.Contains(a.Strategies, s) {
				a.Strategies = append(a.Strategies, s)
			}
		}
		return nil
	}, `SELECT app_name, strategies FROM client_applications WHERE app_name IN `+in+` AND strategies != '[]' ORDER BY app_name, last_seen DESC`, names...)
	return apps, total, err
}

// ApplicationInstance is an SDK instance of an application.
type ApplicationInstance struct {
	AppName     string    `json:"appName"`
	InstanceID  string    `json:"instanceId"`
	SDKVersion  *string   `json:"sdkVersion"`
	SDKType     *string   `json:"sdkType"`
	ClientIP    *string   `json:"clientIp"`
	LastSeen    time.Time `json:"lastSeen"`
	CreatedAt   time.Time `json:"createdAt"`
	Environment string    `json:"environment"`
}

// Application is one application with its instances.
type Application struct {
	AppName   string
	CreatedAt time.Time
	// Strategies are the strategy names its instances registered with,
	// the most recently seen instance's first.
	Strategies []string
	// Instances are those seen since the time asked for, the most recently
	// seen first.
	Instances []ApplicationInstance
}

// Application returns an application with the instances seen since
// seenSince (NotFound for a name never seen).
func (q Q) Application(name string, seenSince time.Time) (Application, error) {
	a := Application{AppName: name, Strategies: []string{}}
	var created int64
	if err := q.row([]any{&created}, `SELECT created_at FROM applications WHERE app_name = $1`, name); err != nil {
		return a, err
	}
	a.CreatedAt = FromMillis(created)
	var err error
	a.Instances, err = collect(q, func(row scanner) (ApplicationInstance, error) {
		var (
			i                     ApplicationInstance
			sdk, sdkType, address sql.NullString
			seen, created         int64
		)
		err := row.Scan(&i.AppName, &i.InstanceID, &sdk, &sdkType, &address, &seen, &created, &i.Environment)
		i.SDKVersion, i.SDKType, i.ClientIP, i.LastSeen, i.CreatedAt = strPtr(sdk), strPtr(sdkType), strPtr(address), FromMillis(seen), FromMillis(created)
		return i, err
	}, `SELECT app_name, instance_id, sdk_version, sdk_type, client_ip, last_seen, created_at, environment
		FROM client_applications WHERE app_name = $1 AND last_seen >= $2 ORDER BY last_seen DESC, instance_id`, name, Millis(seenSince))
	if err != nil {
		return a, err
	}
	err = q.eachRow(func(row scanner) error {
		var raw string
		if err := row.Scan(&raw); err != nil {
			return err
		}
		var strategies []string
		if err := decodeJSON(raw, &strategies); err != nil {
			return err
		}
		for _, s := range strategies {
			if !slices.Contains(a.Strategies, s) {
				a.Strategies = append(a.Strategies, s)
			}
		}
		return nil
	}, `SELECT strategies FROM client_applications WHERE app_name = $1 AND strategies != '[]' ORDER BY last_seen DESC`, name)
	return a, err
}

// FlagsReportedBy returns the names of the flags an application reported
// usage of since a time, in name order.
func (q Q) FlagsReportedBy(app string, since time.Time) ([]string, error) {
	return collect(q, scanString, `SELECT DISTINCT feature_name FROM client_metrics_hourly
		WHERE app_name = $1 AND hour >= $2 ORDER BY feature_name`, app, Millis(since))
}

// FlagApplication is an application that reported a flag's usage in one
// environment, with the SDK versions of its instances there.
type FlagApplication struct {
	AppName     string   `json:"appName"`
	Environment string   `json:"environment"`
	SDKVersions []string `json:"sdkVersions"`
	Yes         int64    `json:"yes"`
	No          int64    `json:"no"`
}

// FlagApplications returns the applications that reported usage of a flag
// in the hours since a time, by application and environment, with the SDK
// versions of their instances in that environment seen since seenSince.
func (q Q) FlagApplications(feature string, since, seenSince time.Time) ([]FlagApplication, error) {
	out, err := collect(q, func(row scanner) (FlagApplication, error) {
		a := FlagApplication{SDKVersions: []string{}}
		err := row.Scan(&a.AppName, &a.Environment, &a.Yes, &a.No)
		return a, err
	}, `SELECT app_name, environment, SUM(yes), SUM(no) FROM client_metrics_hourly
		WHERE feature_name = $1 AND hour >= $2 GROUP BY app_name, environment ORDER BY app_name, environment`, feature, Millis(since))
	if err != nil || len(out) == 0 {
		return out, err
	}
	index := map[[2]string]int{}
	for i, a := range out {
		index[[2]string{a.AppName, a.Environment}] = i
	}
	err = q.eachRow(func(row scanner) error {
		var app, env, sdk string
		if err := row.Scan(&app, &env, &sdk); err != nil {
			return err
		}
		if i, ok := index[[2]string{app, env}]; ok {
			out[i].SDKVersions = append(out[i].SDKVersions, sdk)
		}
		return nil
	}, `SELECT DISTINCT c.app_name, c.environment, c.sdk_version FROM client_applications c
		WHERE c.sdk_version IS NOT NULL AND c.last_seen >= $3 AND c.app_name IN (
			SELECT DISTINCT app_name FROM client_metrics_hourly WHERE feature_name = $1 AND hour >= $2)
		ORDER BY c.app_name, c.environment, c.sdk_version`, feature, Millis(since), Millis(seenSince))
	return out, err
}
