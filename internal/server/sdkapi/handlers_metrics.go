package sdkapi

import (
	"net"
	"net/http"
	"sync"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/usage"
	"github.com/bunting-flags/bunting/internal/wire"
)

// The metrics and registration routes decode the body and hand it to
// internal/usage, which validates it, counts it in memory and writes it
// in batches; the answer does not wait for the database.

func (s *API) clientMetrics(w http.ResponseWriter, r *http.Request) error {
	if err := s.recordMetrics(w, r, sdkBackend); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusAccepted)
}

func (s *API) clientRegister(w http.ResponseWriter, r *http.Request) error {
	if err := s.register(r, sdkBackend, true); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusAccepted)
}

// The kinds of SDK, by the API they post to (Unleash's sdkType).
const (
	sdkBackend  = "backend"
	sdkFrontend = "frontend"
)

// recordMetrics counts the usage an SDK (server-side or front-end) posts,
// for the flags its token sees, and records the SDK instance.
func (s *API) recordMetrics(w http.ResponseWriter, r *http.Request, sdkType string) error {
	// The body is read into a recycled buffer: AddMetrics keeps nothing of it.
	bp := bodyPool.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxPooledBody {
			bodyPool.Put(bp)
		}
	}()
	body, err := wire.ReadBody(w, r, s.cfg.BodyLimit, (*bp)[:0])
	*bp = body
	if err != nil {
		return err
	}
	cs, err := s.client.config(r)
	if err != nil {
		return err
	}
	return s.usage.AddMetrics(body, source(r, sdkType), knownFlags{s.flagIndexOf(cs), domain.PrincipalFrom(r.Context())})
}

// bodyPool recycles the buffers metrics reports are read into; one larger
// than maxPooledBody is left to the garbage collector.
var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

const maxPooledBody = 128 << 10

// register records an SDK instance's registration; server SDKs must list
// their strategies (requireStrategies).
func (s *API) register(r *http.Request, sdkType string, requireStrategies bool) error {
	var body usage.RegisterBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	return s.usage.AddRegistration(&body, source(r, sdkType), requireStrategies)
}

// source is who reports: the token's environment and projects, and the
// connection's address.
func source(r *http.Request, sdkType string) usage.Source {
	p := domain.PrincipalFrom(r.Context())
	ip, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		ip = r.RemoteAddr
	}
	return usage.Source{Environment: p.Environment, Projects: p.Projects, SDKType: sdkType, ClientIP: ip}
}
