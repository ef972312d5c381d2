// The handlers of the proxy's own routes (see the route table), besides
// the front-end evaluation (internal/frontend), the client metrics
// (clientmetrics.go), streaming (streaming.go) and OFREP (ofrep.go).

package proxy

import (
	"encoding/json"
	"net/http"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/frontend"
	"github.com/bunting-flags/bunting/internal/httpgzip"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/wire"
)

// serveToggles answers /proxy: the enabled flags of every flag evaluated,
// or the flags the request names.
func (p *Proxy) serveToggles(w http.ResponseWriter, r *http.Request) error {
	return p.frontend.Serve(w, r, false)
}

// serveAllEndpoint answers /proxy/all (when enableAllEndpoint allows it):
// as /proxy, with the disabled flags listed too.
func (p *Proxy) serveAllEndpoint(w http.ResponseWriter, r *http.Request) error {
	return p.frontend.Serve(w, r, true)
}

var headerHTML = []string{"text/html; charset=utf-8"}

func (p *Proxy) serveHealth(w http.ResponseWriter, r *http.Request) error {
	h := w.Header()
	h["Content-Type"] = headerHTML
	h["Content-Length"] = headerLengthOK
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(bodyOK)
	}
	return nil
}

// The health answer's body and its length, shared by every request (never
// modified), so that answering allocates nothing.
var (
	bodyOK         = []byte("ok")
	headerLengthOK = []string{"2"}
)

// readJSON reads a JSON object body within the body limit, by the
// server's content-type rule (a body without a type is JSON here) and
// decoder.
func (p *Proxy) readJSON(w http.ResponseWriter, r *http.Request, into any) error {
	if err := httpjson.CheckContentType(r, frontend.BodyContentRule); err != nil {
		return err
	}
	body, err := wire.ReadBody(w, r, p.cfg.MaxBodyBytes, nil)
	if err != nil {
		return err
	}
	return httpjson.DecodeUnstored(body, into)
}

// serveRegister accepts an SDK registration; there is nothing to keep.
func (p *Proxy) serveRegister(w http.ResponseWriter, r *http.Request) error {
	var reg struct {
		AppName *string `json:"appName"`
	}
	if err := p.readJSON(w, r, &reg); err != nil {
		return err
	}
	if reg.AppName == nil || *reg.AppName == "" {
		return apierr.Validation("appName is required")
	}
	p.log.Debug("client registered", "appName", *reg.AppName)
	return httpjson.WriteOK(w)
}

// serveFeatures gives server-side SDKs the configuration, segments
// included (the route table lets only expServerSideSdkConfig.tokens in).
func (p *Proxy) serveFeatures(w http.ResponseWriter, r *http.Request) error {
	snap := p.snapshot.Load()
	fb := p.features.Load()
	if fb == nil || fb.snap != snap {
		cf := *snap.Features()
		if cf.Version == 0 {
			cf.Version = 2
		}
		body, err := json.Marshal(&cf)
		if err != nil {
			return apierr.Internal(err)
		}
		fb = &featuresBody{snap: snap, body: httpgzip.NewCached(body), etag: wire.WeakETag(body)}
		p.features.Store(fb)
	}
	wire.WriteCachedJSON(w, r, fb.body, fb.etag)
	return nil
}

func (p *Proxy) servePrometheus(w http.ResponseWriter, r *http.Request) error {
	p.metrics.handler.ServeHTTP(w, r)
	return nil
}
