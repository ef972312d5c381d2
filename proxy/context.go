// A request's context, once parsed (internal/wire), is completed the
// same way on every route that evaluates (/proxy, OFREP).

package proxy

import (
	"net/http"

	"github.com/bunting-flags/bunting/engine"
)

// completeContext fills what the request does not say: the remote
// address, the default appName and environment (or the forced one), then
// runs the enrichers.
func (p *Proxy) completeContext(r *http.Request, ctx *engine.Context) error {
	if ctx.RemoteAddress == "" {
		ctx.RemoteAddress = p.clientIP(r)
	}
	if ctx.AppName == "" {
		ctx.AppName = p.cfg.UpstreamAppName
	}
	for i, e := range p.enrichers {
		out, err := e.Enrich(*ctx)
		if err != nil {
			p.log.Warn("context enricher failed; skipped", "enricher", i, "err", err)
			continue
		}
		*ctx = out
	}
	if p.cfg.Environment != "" {
		ctx.Environment = p.cfg.Environment
	} else if ctx.Environment == "" {
		ctx.Environment = "default"
	}
	return nil
}
