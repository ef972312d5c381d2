// People who sign in with a password, and their browser sessions: the
// first admin, sign-in with its rate limit, sessions stored in the
// database, CSRF checks, sign-out here and everywhere, and the admin API
// for managing people.

package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

const (
	// SessionCookie names the cookie that carries a browser session.
	SessionCookie = "bunting_session"
	// CSRFHeader carries the session's CSRF token on every change.
	CSRFHeader = "X-CSRF-Token"
	// sessionTTL is how long a session lasts after sign-in.
	sessionTTL = 7 * 24 * time.Hour

	minPasswordLength = 8
	maxPasswordLength = 256
)

// argon2id parameters: OWASP's second recommended set (19 MiB, 2 passes).
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
)

// HashPassword returns an argon2id hash in the PHC string format.
func HashPassword(password string) string {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// checkPassword reports whether password matches a PHC argon2id hash.
func checkPassword(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || m > 1<<20 || t == 0 || t > 10 || p == 0 {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	key, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(key) == 0 || len(key) > 128 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(key)))
	return subtle.ConstantTimeCompare(got, key) == 1
}

// dummyHash is checked against when the login names nobody, so that an
// unknown name takes as long as a wrong password (made on first use, not
// at start).
var dummyHash = sync.OnceValue(func() string { return HashPassword("not a password anyone has") })

func validatePassword(pw string) error {
	if len(pw) < minPasswordLength || len(pw) > maxPasswordLength {
		return apierr.Validation("The `password` property must have %d to %d characters.", minPasswordLength, maxPasswordLength)
	}
	return nil
}

// BootstrapAdminUser creates the first person, with the Admin role, when
// the database holds nobody yet: named by INIT_ADMIN_USER (default admin)
// with INIT_ADMIN_PASSWORD, or with a generated password, which it returns
// so the caller prints it once. It returns the name of the created admin
// ("" when people already existed).
func (s *Server) BootstrapAdminUser(ctx context.Context) (name, generatedPassword string, err error) {
	err = s.store.Tx(ctx, func(tx *store.Tx) error {
		n, err := tx.CountAccounts()
		if err != nil || n > 0 {
			return err
		}
		name = s.cfg.InitAdminUser
		if name == "" {
			name = "admin"
		}
		password := s.cfg.InitAdminPassword
		if password == "" {
			generatedPassword = RandomHex(12)
			password = generatedPassword
		}
		u := store.User{RootRole: domain.RoleAdmin, CreatedAt: tx.Now()}
		if strings.Contains(name, "@") {
			u.Email = &name
		} else {
			u.Username = &name
		}
		id, err := tx.InsertUser(u)
		if err != nil {
			return err
		}
		u.ID = id
		if err := tx.SetPasswordHash(id, HashPassword(password)); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "user-created", Actor: domain.SystemActor, Data: accountEventData(store.Account{User: u, HasPassword: true})})
	})
	if err != nil {
		name, generatedPassword = "", ""
	}
	return name, generatedPassword, err
}

func accountName(u store.User) string {
	switch {
	case u.Username != nil:
		return *u.Username
	case u.Email != nil:
		return *u.Email
	}
	return "user"
}

// accountEventData is what events record about a person (never the hash).
func accountEventData(a store.Account) map[string]any {
	return map[string]any{"id": a.ID, "username": a.Username, "email": a.Email, "name": a.Name, "rootRole": a.RootRole, "deactivated": a.Deactivated}
}

// sessionPrincipal authenticates a request by its session cookie. ok is
// false when the request carries none. Changes (every method but GET,
// HEAD and OPTIONS) must send the session's CSRF token in X-CSRF-Token.
func (s *Server) sessionPrincipal(r *http.Request) (p *domain.Principal, ok bool, err error) {
	c, cerr := r.Cookie(SessionCookie)
	if cerr != nil || c.Value == "" {
		return nil, false, nil
	}
	sess, err := s.store.Q(r.Context()).SessionByHash(store.HashSecret(c.Value))
	if apierr.IsKind(err, apierr.KindNotFound) {
		return nil, true, apierr.Unauthenticated("Your session has ended. Sign in again.")
	}
	if err != nil {
		return nil, true, err
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if !secretsEqual(r.Header.Get(CSRFHeader), sess.CSRF) {
			return nil, true, apierr.Forbidden("This change was refused: it did not carry this session's CSRF token in the %s header. Reload the page and try again.", CSRFHeader)
		}
	}
	u := sess.Account.User
	id := u.ID
	return &domain.Principal{Kind: domain.KindUser, Name: accountName(u), UserID: &id, RootRole: u.RootRole, User: &u}, true, nil
}

// loginLimiter counts failed sign-ins per login name and per client
// address in a sliding window; past the limit it refuses for the rest of
// the window, even a right password. It lives in this process.
type loginLimiter struct {
	mu       sync.Mutex
	failures map[string][]time.Time
	now      func() time.Time
}

const (
	loginWindow       = 5 * time.Minute
	loginPerName      = 5
	loginPerAddress   = 20
	loginLimiterCap   = 100000
	loginLimiterSweep = 10000
)

func newLoginLimiter() *loginLimiter {
	return &loginLimiter{failures: map[string][]time.Time{}, now: time.Now}
}

// blocked returns how long key must wait (0: not blocked).
func (l *loginLimiter) blocked(key string, limit int) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	fs := l.recent(key, now)
	if len(fs) < limit {
		return 0
	}
	return fs[len(fs)-limit].Add(loginWindow).Sub(now)
}

func (l *loginLimiter) recent(key string, now time.Time) []time.Time {
	fs := l.failures[key]
	i := 0
	for i < len(fs) && now.Sub(fs[i]) >= loginWindow {
		i++
	}
	fs = fs[i:]
	if len(fs) == 0 {
		delete(l.failures, key)
	} else {
		l.failures[key] = fs
	}
	return fs
}

func (l *loginLimiter) fail(keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if len(l.failures) > loginLimiterCap {
		n := 0
		for k := range l.failures {
			if n++; n > loginLimiterSweep {
				break
			}
			l.recent(k, now)
		}
	}
	for _, k := range keys {
		l.failures[k] = append(l.recent(k, now), now)
	}
}

func (l *loginLimiter) reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.failures, key)
}

// clientAddress is the request's remote IP (without port).
func clientAddress(r *http.Request) string {
	addr := r.RemoteAddr
	if i := strings.LastIndexByte(addr, ':'); i > 0 && !strings.HasSuffix(addr, "]") {
		addr = addr[:i]
	}
	return strings.Trim(addr, "[]")
}

type loginBody struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// sessionView is what sign-in and GET /api/admin/user/session answer.
type sessionView struct {
	User        map[string]any `json:"user"`
	CSRFToken   string         `json:"csrfToken,omitempty"`
	Permissions []string       `json:"permissions"`
}

// allPermissions lists every permission name, for sessionView.
var allPermissions = []string{
	domain.PermAdmin, domain.PermCreateFeature, domain.PermUpdateFeature, domain.PermDeleteFeature, domain.PermUpdateFeatureDependency,
	domain.PermCreateFeatureStrategy, domain.PermUpdateFeatureStrategy, domain.PermDeleteFeatureStrategy, domain.PermUpdateFeatureEnvironment,
	domain.PermUpdateEnvVariants, domain.PermCreateProject, domain.PermUpdateProject, domain.PermDeleteProject, domain.PermCreateSegment, domain.PermUpdateSegment,
	domain.PermDeleteSegment, domain.PermCreateStrategy, domain.PermUpdateStrategy, domain.PermDeleteStrategy, domain.PermCreateContextField,
	domain.PermUpdateContextField, domain.PermDeleteContextField, domain.PermCreateTagType, domain.PermUpdateTagType, domain.PermDeleteTagType,
	domain.PermReadClientToken, domain.PermCreateClientToken, domain.PermDeleteClientToken, domain.PermReadFrontendToken, domain.PermCreateFrontendToken,
	domain.PermDeleteFrontendToken,
}

func viewSession(p *domain.Principal, csrf string) sessionView {
	v := sessionView{CSRFToken: csrf, Permissions: []string{}}
	v.User = map[string]any{"name": p.Name, "rootRole": p.RootRole}
	if p.UserID != nil {
		v.User["id"] = *p.UserID
	}
	for _, perm := range allPermissions {
		if p.Can(perm, "", "") {
			v.Permissions = append(v.Permissions, perm)
		}
	}
	return v
}

// login signs a person in: it checks the rate limits, then the password,
// then stores a session and sets its cookie.
func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" && o != "null" && !sameOrigin(o, r) {
		return apierr.Forbidden("Sign-in from another site was refused.")
	}
	var body loginBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	name := strings.TrimSpace(body.Username)
	if name == "" || len(name) > 200 {
		return apierr.Validation("The `username` property is required: your username or email.")
	}
	if body.Password == "" || len(body.Password) > maxPasswordLength {
		return apierr.Validation("The `password` property is required.")
	}
	nameKey, addrKey := "name:"+strings.ToLower(name), "addr:"+clientAddress(r)
	for _, k := range []struct {
		key   string
		limit int
		what  string
	}{{nameKey, loginPerName, "for this user"}, {addrKey, loginPerAddress, "from your address"}} {
		if wait := s.logins.blocked(k.key, k.limit); wait > 0 {
			secs := int(wait.Round(time.Second) / time.Second)
			if secs < 1 {
				secs = 1
			}
			return apierr.RateLimited(secs, "Too many failed sign-in attempts %s. Try again in %s.", k.what, humanWait(secs))
		}
	}
	q := s.store.Q(r.Context())
	acct, hash, err := q.AccountByLogin(name)
	if err != nil && !apierr.IsKind(err, apierr.KindNotFound) {
		return err
	}
	if err != nil || hash == "" {
		checkPassword(dummyHash(), body.Password)
		s.logins.fail(nameKey, addrKey)
		return apierr.Unauthenticated("Wrong username or password.")
	}
	if !checkPassword(hash, body.Password) {
		s.logins.fail(nameKey, addrKey)
		return apierr.Unauthenticated("Wrong username or password.")
	}
	if acct.Deactivated {
		return apierr.Unauthenticated("This account is deactivated. Ask an admin to reactivate it.")
	}
	s.logins.reset(nameKey)
	id, csrf := RandomHex(32), RandomHex(24)
	now := s.store.Now()
	if _, err := q.DeleteExpiredSessions(); err != nil {
		return err
	}
	if err := q.InsertSession(store.HashSecret(id), acct.ID, csrf, now, now.Add(sessionTTL)); err != nil {
		return err
	}
	http.SetCookie(w, s.sessionCookie(r, id, int(sessionTTL/time.Second)))
	uid := acct.ID
	u := acct.User
	return httpjson.Write(w, http.StatusOK, viewSession(&domain.Principal{Kind: domain.KindUser, Name: accountName(u), UserID: &uid, RootRole: u.RootRole, User: &u}, csrf))
}

func humanWait(secs int) string {
	if secs >= 90 {
		return fmt.Sprintf("%d minutes", (secs+59)/60)
	}
	if secs == 1 {
		return "1 second"
	}
	return fmt.Sprintf("%d seconds", secs)
}

// sameOrigin reports whether an Origin header names this request's host.
func sameOrigin(origin string, r *http.Request) bool {
	_, rest, ok := strings.Cut(origin, "://")
	return ok && strings.EqualFold(rest, r.Host)
}

// sessionCookie builds the session cookie (maxAge < 0 deletes it).
func (s *Server) sessionCookie(r *http.Request, value string, maxAge int) *http.Cookie {
	path := s.cfg.BasePath
	if path == "" {
		path = "/"
	}
	return &http.Cookie{
		Name: SessionCookie, Value: value, Path: path, MaxAge: maxAge, HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https"),
	}
}

// currentSession answers who is signed in, with the CSRF token the page
// sends back on changes and the permissions the person holds.
func (s *Server) currentSession(w http.ResponseWriter, r *http.Request) error {
	p := domain.PrincipalFrom(r.Context())
	csrf := ""
	if c, err := r.Cookie(SessionCookie); err == nil && p.Kind == domain.KindUser && r.Header.Get("Authorization") == "" {
		sess, err := s.store.Q(r.Context()).SessionByHash(store.HashSecret(c.Value))
		if err != nil {
			return err
		}
		csrf = sess.CSRF
	}
	w.Header().Set("Cache-Control", "no-store")
	return httpjson.Write(w, http.StatusOK, viewSession(p, csrf))
}

// logout ends this browser's session.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) error {
	c, err := r.Cookie(SessionCookie)
	if err != nil || r.Header.Get("Authorization") != "" {
		return apierr.Validation("Only a browser session can sign out; this request used an API token.")
	}
	if err := s.store.Q(r.Context()).DeleteSession(store.HashSecret(c.Value)); err != nil {
		return err
	}
	http.SetCookie(w, s.sessionCookie(r, "", -1))
	return httpjson.WriteStatus(w, http.StatusNoContent)
}

// logoutEverywhere ends every session of the calling person.
func (s *Server) logoutEverywhere(w http.ResponseWriter, r *http.Request) error {
	u, err := domain.CallingUser(domain.PrincipalFrom(r.Context()))
	if err != nil {
		return err
	}
	n, err := s.store.Q(r.Context()).DeleteUserSessions(u.ID)
	if err != nil {
		return err
	}
	http.SetCookie(w, s.sessionCookie(r, "", -1))
	return httpjson.Write(w, http.StatusOK, map[string]int64{"sessionsEnded": n})
}

// accountBody creates or updates a person.
type accountBody struct {
	Username    *string         `json:"username"`
	Email       *string         `json:"email"`
	Name        *string         `json:"name"`
	RootRole    json.RawMessage `json:"rootRole"`
	Password    *string         `json:"password"`
	Deactivated *bool           `json:"deactivated"`
}

func (b accountBody) role() (string, bool, error) {
	if len(b.RootRole) == 0 {
		return "", false, nil
	}
	r, err := domain.ParseRootRole(b.RootRole)
	return r, true, err
}

func (s *Server) listAccounts(w http.ResponseWriter, r *http.Request) error {
	accts, err := s.store.Q(r.Context()).Accounts()
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"users": accts, "rootRoles": domain.RootRoles})
}

func (s *Server) createAccount(w http.ResponseWriter, r *http.Request) error {
	var body accountBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	if body.Username == nil && body.Email == nil {
		return apierr.Validation("The `username` property is required (or `email`).")
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"username", body.Username}, {"email", body.Email}} {
		if f.v != nil && (strings.TrimSpace(*f.v) != *f.v || *f.v == "" || len(*f.v) > 100) {
			return apierr.Validation("The `%s` property must have 1 to 100 characters without surrounding spaces.", f.name)
		}
	}
	if body.Email != nil && !strings.Contains(*body.Email, "@") {
		return apierr.Validation("The `email` property must be an email address.")
	}
	if body.Username != nil && strings.Contains(*body.Username, "@") {
		return apierr.Validation("The `username` property cannot contain @ (use `email` for an address).")
	}
	role, ok, err := body.role()
	if err != nil {
		return err
	}
	if !ok {
		role = domain.RoleViewer
	}
	if body.Password == nil {
		return apierr.Validation("The `password` property is required.")
	}
	if err := validatePassword(*body.Password); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	a := store.Account{User: store.User{Username: body.Username, Email: body.Email, Name: body.Name, RootRole: role}, HasPassword: true}
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if body.Email != nil {
			if _, _, err := tx.AccountByLogin(*body.Email); err == nil {
				return apierr.Conflict("A user with that email already exists")
			}
		}
		a.CreatedAt = tx.Now()
		id, err := tx.InsertUser(a.User)
		if err != nil {
			return err
		}
		a.ID = id
		if err := tx.SetPasswordHash(id, HashPassword(*body.Password)); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "user-created", Actor: p.Actor(), Data: accountEventData(a)})
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusCreated, a)
}

func (s *Server) updateAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var body accountBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	if body.Username != nil || body.Password != nil {
		return apierr.Validation("The `username` cannot change, and a password is reset at /api/admin/user-admin/{id}/reset-password.")
	}
	role, hasRole, err := body.role()
	if err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	var a store.Account
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.Account(id)
		if err != nil {
			return err
		}
		a = old
		if body.Name != nil {
			a.Name = body.Name
		}
		if body.Email != nil {
			a.Email = body.Email
		}
		if hasRole {
			a.RootRole = role
		}
		if body.Deactivated != nil {
			a.Deactivated = *body.Deactivated
		}
		if err := tx.UpdateAccount(a); err != nil {
			return err
		}
		if err := s.keepAnAdmin(tx); err != nil {
			return err
		}
		if a.Deactivated && !old.Deactivated {
			if _, err := tx.DeleteUserSessions(id); err != nil {
				return err
			}
		}
		return tx.Event(store.NewEvent{Type: "user-updated", Actor: p.Actor(), Data: accountEventData(a), PreData: accountEventData(old)})
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, a)
}

// keepAnAdmin refuses a change that leaves no active admin.
func (s *Server) keepAnAdmin(tx *store.Tx) error {
	n, err := tx.CountActiveAdmins()
	if err != nil {
		return err
	}
	if n == 0 {
		return apierr.Validation("This change would leave no active user with the Admin role; keep at least one.")
	}
	return nil
}

func (s *Server) deleteAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.Account(id)
		if err != nil {
			return err
		}
		if err := tx.DeleteUser(id); err != nil {
			return err
		}
		if err := s.keepAnAdmin(tx); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "user-deleted", Actor: p.Actor(), PreData: accountEventData(old)})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

type passwordBody struct {
	Password    string `json:"password"`
	OldPassword string `json:"oldPassword"`
}

// resetPassword sets a person's password (admins) and ends their sessions.
func (s *Server) resetPassword(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var body passwordBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	if err := validatePassword(body.Password); err != nil {
		return err
	}
	if err := s.setPassword(r, id, body.Password, "user-password-reset"); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

// changeOwnPassword lets a signed-in person change their password, given
// the current one; their other sessions end.
func (s *Server) changeOwnPassword(w http.ResponseWriter, r *http.Request) error {
	u, err := domain.CallingUser(domain.PrincipalFrom(r.Context()))
	if err != nil {
		return err
	}
	var body passwordBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	if err := validatePassword(body.Password); err != nil {
		return err
	}
	_, hash, err := s.store.Q(r.Context()).AccountByLogin(accountName(*u))
	if err != nil {
		return err
	}
	if !checkPassword(hash, body.OldPassword) {
		return apierr.Validation("The `oldPassword` property is not your current password.")
	}
	if err := s.setPassword(r, u.ID, body.Password, "user-password-changed"); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *Server) setPassword(r *http.Request, id int64, password, event string) error {
	p := domain.PrincipalFrom(r.Context())
	return s.store.Tx(r.Context(), func(tx *store.Tx) error {
		a, err := tx.Account(id)
		if err != nil {
			return err
		}
		if err := tx.SetPasswordHash(id, HashPassword(password)); err != nil {
			return err
		}
		if _, err := tx.DeleteUserSessions(id); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: event, Actor: p.Actor(), Data: map[string]any{"id": a.ID, "username": a.Username, "email": a.Email}})
	})
}
