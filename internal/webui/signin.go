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
	"github.com/bunting-flags/bunting/internal/localpath"
)

// login shows the sign-in page. Its form is signed in by the page's
// script (the JSON sign-in route, then the checked next); without script
// the browser posts the same form to loginForm, so a password never goes
// into a URL.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, "login", page{Title: "Sign in", Data: h.signInData(r, LocalNext(h.base, r.URL.Query().Get("next")))})
}

// signInData is what the sign-in page shows besides its form: the checked
// next, and for single sign-on the providers to offer, whether password
// sign-in is off, and the message of a refused sign-in (?sso_error=).
func (h *Handler) signInData(r *http.Request, next string) map[string]any {
	data := map[string]any{"Next": next}
	var opts struct {
		PasswordSignIn bool `json:"passwordSignIn"`
		Options        []struct {
			Message string `json:"message"`
			Path    string `json:"path"`
		} `json:"options"`
		Error string `json:"error"`
	}
	if err := h.call(r, nil, "GET", "/auth/options?sso_error="+url.QueryEscape(r.URL.Query().Get("sso_error")), nil, &opts); err == nil {
		data["SSO"] = opts
	} else {
		h.log.Warn("sign-in options", "err", err)
	}
	return data
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
		data := h.signInData(r, next)
		data["Username"], data["Error"] = username, err.Message
		h.renderStatus(w, r, err.Status(), "login", page{Title: "Sign in", Data: data})
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
// when it is a page of this server under base (localpath.Check), else the
// flags list.
func LocalNext(base, next string) string {
	if p, ok := localpath.Check(base, next); ok {
		return p
	}
	return base + "/flags"
}
