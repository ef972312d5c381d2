package sdkapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// flexibleTime accepts an RFC 3339 string or unix milliseconds.
type flexibleTime struct{ t *time.Time }

// UnmarshalJSON accepts an RFC 3339 string, a number of milliseconds or null.
func (f *flexibleTime) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return apierr.Validation("%q is not an RFC 3339 date-time", s)
		}
		f.t = &t
		return nil
	}
	ms, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return apierr.Validation("%s is neither a date-time nor a number of milliseconds", b)
	}
	// Only years 0–9999 can be written back as RFC 3339 (as the
	// applications list does).
	if ms < minMillis || ms > maxMillis {
		return apierr.Validation("%s milliseconds is outside the years 0 to 9999", b)
	}
	t := time.UnixMilli(int64(ms)).UTC()
	f.t = &t
	return nil
}

// The unix milliseconds of 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z.
const (
	minMillis = -62167219200000
	maxMillis = 253402300799999
)

// metricsBody is the body of POST /api/client/metrics.
type metricsBody struct {
	AppName    string `json:"appName"`
	InstanceID string `json:"instanceId"`
	SDKVersion string `json:"sdkVersion"`
	Bucket     *struct {
		Start   flexibleTime              `json:"start"`
		Stop    flexibleTime              `json:"stop"`
		Toggles map[string]reportedToggle `json:"toggles"`
	} `json:"bucket"`
}

// reportedToggle is one flag's counts in a metrics body.
type reportedToggle struct {
	Yes      int64            `json:"yes"`
	No       int64            `json:"no"`
	Variants map[string]int64 `json:"variants"`
}

func (s *API) clientMetrics(w http.ResponseWriter, r *http.Request) error {
	if err := s.recordMetrics(r); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusAccepted)
}

// recordMetrics stores the usage an SDK (server-side or front-end) posts,
// for the flags its token sees, and records the SDK instance.
func (s *API) recordMetrics(r *http.Request) error {
	var body metricsBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	if err := checkReporter(body.AppName, body.InstanceID, body.SDKVersion); err != nil {
		return err
	}
	env := domain.PrincipalFrom(r.Context()).Environment
	at := s.store.Now()
	usage := map[string]store.FlagUsage{}
	if b := body.Bucket; b != nil {
		if b.Stop.t != nil {
			at = *b.Stop.t
		}
		var err error
		if usage, err = s.knownUsage(r, b.Toggles); err != nil {
			return err
		}
	}
	q := s.store.Q(r.Context())
	if err := q.RecordUsage(body.AppName, env, at, usage); err != nil {
		return err
	}
	app := store.ClientApplication{AppName: body.AppName, InstanceID: cmpOr(body.InstanceID, "default"), Environment: env, SDKVersion: body.SDKVersion}
	return s.seeApplication(r, app)
}

func cmpOr(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

// registerBody is the body of POST /api/client/register.
type registerBody struct {
	AppName    string       `json:"appName"`
	InstanceID string       `json:"instanceId"`
	SDKVersion string       `json:"sdkVersion"`
	Strategies []string     `json:"strategies"`
	Started    flexibleTime `json:"started"`
	Interval   *int64       `json:"interval"`
}

func (s *API) clientRegister(w http.ResponseWriter, r *http.Request) error {
	var body registerBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	app, err := body.application(r, true)
	if err != nil {
		return err
	}
	if err := s.seeApplication(r, app); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusAccepted)
}

// application validates a registration and turns it into the application
// record of the calling token's environment. Server SDKs must list their
// strategies; front-end SDKs need not.
func (b registerBody) application(r *http.Request, requireStrategies bool) (store.ClientApplication, error) {
	missing := ""
	switch {
	case b.AppName == "":
		missing = "appName"
	case b.Interval == nil:
		missing = "interval"
	case b.Started.t == nil:
		missing = "started"
	case requireStrategies && b.Strategies == nil:
		missing = "strategies"
	}
	if missing != "" {
		return store.ClientApplication{}, apierr.Validation("The `%s` property is required. It was not present on the data you sent.", missing)
	}
	if err := checkRegistration(b); err != nil {
		return store.ClientApplication{}, err
	}
	return store.ClientApplication{AppName: b.AppName, InstanceID: cmpOr(b.InstanceID, "default"),
		Environment: domain.PrincipalFrom(r.Context()).Environment, SDKVersion: b.SDKVersion,
		Strategies: b.Strategies, Interval: *b.Interval, StartedAt: b.Started.t}, nil
}

// seeApplication records an SDK instance; an application seen for the
// first time gets an application-created event.
func (s *API) seeApplication(r *http.Request, app store.ClientApplication) error {
	known, err := s.store.Q(r.Context()).ApplicationKnown(app.AppName)
	if err != nil {
		return err
	}
	if known {
		return s.store.Q(r.Context()).SeenApplication(app)
	}
	return s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if known, err := tx.ApplicationKnown(app.AppName); err != nil || known {
			return err
		}
		if err := tx.SeenApplication(app); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "application-created", Actor: domain.SystemActor,
			Data: map[string]any{"appName": app.AppName, "instanceId": app.InstanceID, "strategies": app.Strategies, "sdkVersion": app.SDKVersion}})
	})
}
