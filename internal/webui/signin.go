package webui

import (
	"bytes"
	"encoding/json"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// login shows the sign-in page. Its form is signed in by the page's
// script (the JSON sign-in route, then the checked next); without script
// the browser posts the same form to loginForm, so a password never goes
// into a URL.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, "login", page{Title: "Sign in", Data: map[string]any{"Next": LocalNext(h.base, r.URL.Query().Get("next"))}})
}

// loginForm signs in from the sign-in form posted without script: the
// same sign-in the script makes (POST /auth/simple/login, in process, with
// the browser's address, Origin and scheme, so the same limits, checks and
// cookie apply), then a 303 to the checked next; on failure the page
// again with the error and the name typed. A post that does not come from
// a page of this server (Origin, or Referer when a browser sends no
// Origin) is refused, so another site cannot sign a visitor in to an
// account of its choosing.
func (h *Handler) loginForm(w http.ResponseWriter, r *http.Request) {
	// A browser gets the sign-in page again with the error; anything else
	// the API's error body, as for every other path.
	browser := strings.Contains(r.Header.Get("Accept"), "text/html")
	fail := func(err *apierr.Error, username, next string) {
		if !browser {
			apierr.Write(w, r, h.log, err)
			return
		}
		if err.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(err.RetryAfter))
		}
		h.renderStatus(w, r, err.Status(), "login", page{Title: "Sign in", Data: map[string]any{"Next": next, "Username": username, "Error": err.Message}})
	}
	if !postedFromHere(r) {
		fail(apierr.Forbidden("Sign-in from another site was refused. Open this server's sign-in page and try again."), "", h.base+"/flags")
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		fail(apierr.UnsupportedMediaType("The sign-in form must be posted as application/x-www-form-urlencoded."), "", h.base+"/flags")
		return
	}
	if err := r.ParseForm(); err != nil {
		e := apierr.From(err)
		if e.Kind == apierr.KindInternal {
			e = apierr.Validation("The sign-in form could not be read: it is not valid form encoding.")
		}
		fail(e, "", h.base+"/flags")
		return
	}
	username, next := r.PostForm.Get("username"), LocalNext(h.base, r.PostForm.Get("next"))
	body, _ := json.Marshal(map[string]string{"username": username, "password": r.PostForm.Get("password")})
	req := httptest.NewRequestWithContext(r.Context(), http.MethodPost, "/auth/simple/login", bytes.NewReader(body))
	req.Host, req.RemoteAddr, req.TLS = r.Host, r.RemoteAddr, r.TLS
	req.Header.Set("Content-Type", "application/json")
	for _, k := range []string{"Origin", "X-Forwarded-Proto"} {
		if v := r.Header.Get(k); v != "" {
			req.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	h.api.ServeHTTP(rec, req)
	if rec.Code == http.StatusOK {
		w.Header()["Set-Cookie"] = rec.Header()["Set-Cookie"]
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	if !browser {
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	var e struct{ Message string }
	_ = json.Unmarshal(rec.Body.Bytes(), &e)
	if ra := rec.Header().Get("Retry-After"); ra != "" {
		w.Header().Set("Retry-After", ra)
	}
	h.renderStatus(w, r, rec.Code, "login", page{Title: "Sign in", Data: map[string]any{"Next": next, "Username": username, "Error": e.Message}})
}

// postedFromHere reports whether a form post comes from a page of this
// server: its Origin names this host, or, from a browser that sends no
// Origin, its Referer does. An opaque origin ("null") is refused.
func postedFromHere(r *http.Request) bool {
	from := r.Header.Get("Origin")
	if from == "" {
		from = r.Header.Get("Referer")
	}
	u, err := url.Parse(from)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// LocalNext is where the sign-in page sends a person once signed in: next
// when it is a page of this server under base, else the flags list. A
// browser given a URL turns \ into /, drops TAB, LF and CR anywhere and
// trims control characters and spaces at both ends, so next is first read
// that way; the result, and each percent-decoding of it, must then start
// with base + "/" (so it has no scheme and no host: one leading slash, no
// second), with no "//", "." or ".." segment in its path. The page's
// script checks the same before navigating (localPath in app.js). It is
// the one check of a destination after sign-in, for every way of signing
// in that takes one.
func LocalNext(base, next string) string {
	if p, ok := checkLocal(base, next); ok {
		return p
	}
	return base + "/flags"
}

// checkLocal returns next as a browser reads it, and whether that is a
// path of this server under base (LocalNext).
func checkLocal(base, next string) (string, bool) {
	if len(next) > 4096 {
		return "", false
	}
	view := asBrowserReads(next)
	s := view
	for range 5 {
		if !underBase(base, s) {
			return "", false
		}
		d, err := url.PathUnescape(s)
		if err != nil {
			return "", false
		}
		if d = asBrowserReads(d); d == s {
			return view, true
		}
		s = d
	}
	return "", false // still changing after five decodings
}

// asBrowserReads trims control characters and spaces at both ends,
// removes the other control characters (browsers drop TAB, LF and CR;
// the rest has no business in a path) and turns \ into /.
func asBrowserReads(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f })
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\\':
			return '/'
		case r < ' ' || r == 0x7f:
			return -1
		}
		return r
	}, s)
}

// underBase reports whether s's path (before any ? or #) starts with
// base + "/" and has no empty, "." or ".." segment.
func underBase(base, s string) bool {
	p := s
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if !strings.HasPrefix(p, base+"/") || strings.Contains(p, "//") {
		return false
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return true
}
