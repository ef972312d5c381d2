package proxy

import (
	"context"
	"net/http"
	"strings"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/ofrep"
	"github.com/bunting-flags/bunting/internal/wire"
)

// routeOFREP is the metrics route label of the OpenFeature endpoints.
const routeOFREP = "ofrep"

// newOFREP mounts OpenFeature's remote evaluation protocol under
// {base}/ofrep: client keys (in the configured header, as
// "Authorization: Bearer …" or as X-API-Key), the served snapshot, the
// context completed as for /proxy and usage counted as for /proxy; its
// event stream wakes after every new snapshot (install).
func (p *Proxy) newOFREP() {
	p.ofrepChanges = ofrep.NewBroadcaster()
	p.ofrep = ofrep.New(ofrep.Options{
		BasePath: p.cfg.ProxyBasePath + "/ofrep",
		Authenticate: func(r *http.Request) (string, error) {
			if p.ofrepKey(r) {
				return "", nil
			}
			return "", apierr.Unauthenticated("Unauthorized: send a valid client key in the %q header, as \"Authorization: Bearer <key>\" or as X-API-Key", p.cfg.ClientKeysHeaderName)
		},
		Snapshot:        func(r *http.Request, _ string) (*engine.Snapshot, error) { return p.currentSnapshot(r) },
		Complete:        p.completeContext,
		RecordEveryFlag: func(s *engine.Snapshot, ids []engine.VariantID) { p.frontend.Counter(s).RecordIDs(ids) },
		Record:          func(s *engine.Snapshot, res engine.Result) { p.frontend.Counter(s).Record([]engine.Result{res}) },
		MaxBodyBytes:    p.cfg.MaxBodyBytes,
		Logger:          p.log,
		Changes:         func(context.Context, string) <-chan struct{} { return p.ofrepChanges.Wait() },
		WriteBody:       wire.WriteCoalesced,
	})
}

// ofrepKey reports whether the request carries a client key in one of the
// forms OFREP providers send it.
func (p *Proxy) ofrepKey(r *http.Request) bool {
	if p.hasKey(r, p.clientKeys) {
		return true
	}
	for _, k := range []string{bearerToken(r.Header.Get("Authorization")), r.Header.Get("X-API-Key")} {
		if _, ok := p.clientKeys[k]; ok && k != "" {
			return true
		}
	}
	return false
}

// bearerToken strips a "Bearer " prefix (any case).
func bearerToken(h string) string {
	h = strings.TrimSpace(h)
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// serveOFREP answers the OpenFeature routes (see the route table).
func (p *Proxy) serveOFREP(w http.ResponseWriter, r *http.Request) error {
	p.ofrep.ServeHTTP(w, r)
	return nil
}
