package proxy

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/rs/cors"
)

// withCORS answers CORS for every route: rs/cors adds the headers of
// actual requests (allowed origin, exposed headers, credentials), and every
// OPTIONS request gets the preflight headers the reference Node proxy's
// cors middleware sends, before the route answers it with
// optionsSuccessStatus (see dispatch).
func (p *Proxy) withCORS(h http.Handler) http.Handler {
	c := p.cfg.CORS
	rc := cors.New(cors.Options{
		AllowedOrigins:   c.Origin,
		AllowedMethods:   c.Methods,
		ExposedHeaders:   c.ExposedHeaders,
		AllowCredentials: c.Credentials,
	})
	actual := rc.Handler(h)
	pf := newPreflight(c, rc)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			pf.headers(w.Header(), r)
			h.ServeHTTP(w, r)
			return
		}
		actual.ServeHTTP(w, r)
	})
}

// preflight holds the configured preflight header values. As the
// reference's: Allow-Methods is the configured list, whatever the request
// asks for; Allow-Headers is the configured list, or the request's own
// Access-Control-Request-Headers mirrored when none is configured.
type preflight struct {
	cors          *cors.Cors
	anyOrigin     bool
	credentials   []string
	methods       []string
	allowHeaders  []string // nil: mirror the request's
	maxAge        []string
	exposeHeaders []string
}

func newPreflight(c CORSConfig, rc *cors.Cors) *preflight {
	pf := &preflight{
		cors:      rc,
		anyOrigin: len(c.Origin) == 1 && c.Origin[0] == "*",
		methods:   []string{strings.Join(c.Methods, ", ")},
		maxAge:    []string{strconv.Itoa(c.MaxAge)},
	}
	if c.Credentials {
		pf.credentials = []string{"true"}
	}
	if len(c.AllowedHeaders) > 0 {
		pf.allowHeaders = []string{strings.Join(c.AllowedHeaders, ", ")}
	}
	if len(c.ExposedHeaders) > 0 {
		pf.exposeHeaders = []string{strings.Join(c.ExposedHeaders, ", ")}
	}
	return pf
}

// headers sets the preflight headers for r.
func (pf *preflight) headers(h http.Header, r *http.Request) {
	switch {
	case pf.anyOrigin:
		h["Access-Control-Allow-Origin"] = []string{"*"}
	case pf.cors.OriginAllowed(r):
		h["Access-Control-Allow-Origin"] = r.Header["Origin"][:1]
		h.Add("Vary", "Origin")
	default:
		h.Add("Vary", "Origin")
	}
	if pf.credentials != nil {
		h["Access-Control-Allow-Credentials"] = pf.credentials
	}
	h["Access-Control-Allow-Methods"] = pf.methods
	if pf.allowHeaders != nil {
		h["Access-Control-Allow-Headers"] = pf.allowHeaders
	} else {
		if requested := r.Header.Get("Access-Control-Request-Headers"); requested != "" {
			h["Access-Control-Allow-Headers"] = []string{requested}
		}
		h.Add("Vary", "Access-Control-Request-Headers")
	}
	h["Access-Control-Max-Age"] = pf.maxAge
	if pf.exposeHeaders != nil {
		h["Access-Control-Expose-Headers"] = pf.exposeHeaders
	}
}
