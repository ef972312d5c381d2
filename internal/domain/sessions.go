package domain

import (
	"crypto/subtle"
	"fmt"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// SessionTTL is how long a browser session lasts after sign-in.
const SessionTTL = 7 * 24 * time.Hour

// Sign-in limits: failures counted per login name and per client address
// in a sliding window.
const (
	loginWindow       = 5 * time.Minute
	loginPerName      = 5
	loginPerAddress   = 20
	loginLimiterCap   = 100000
	loginLimiterSweep = 10000
)

// LoginLimiter counts failed sign-ins per login name and per client
// address in a sliding window; past the limit SignIn refuses for the rest
// of the window, even a right password. It lives in one process.
type LoginLimiter struct {
	mu       sync.Mutex
	failures map[string][]time.Time
	now      func() time.Time
}

// NewLoginLimiter returns a limiter with no failures counted.
func NewLoginLimiter() *LoginLimiter {
	return &LoginLimiter{failures: map[string][]time.Time{}, now: time.Now}
}

// blocked returns how long key must wait (0: not blocked).
func (l *LoginLimiter) blocked(key string, limit int) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	fs := l.recent(key, now)
	if len(fs) < limit {
		return 0
	}
	return fs[len(fs)-limit].Add(loginWindow).Sub(now)
}

func (l *LoginLimiter) recent(key string, now time.Time) []time.Time {
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

func (l *LoginLimiter) fail(keys ...string) {
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

func (l *LoginLimiter) reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.failures, key)
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

// SignInInput is a sign-in: a username or email and a password.
type SignInInput struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// Session is a new browser session: Secret goes in the cookie, CSRF is
// sent back on every change.
type Session struct {
	Secret    string
	CSRF      string
	Principal *Principal
}

// SignIn checks a sign-in from address against the limits, then the
// password, then stores a session lasting SessionTTL from now. Sessions
// carry no event, so it runs on q (a transaction or not).
func SignIn(q store.Q, limits *LoginLimiter, now time.Time, address string, in SignInInput) (Session, error) {
	name := strings.TrimSpace(in.Username)
	if name == "" || len(name) > 200 {
		return Session{}, apierr.Validation("The `username` property is required: your username or email.")
	}
	if in.Password == "" || len(in.Password) > MaxPasswordLength {
		return Session{}, apierr.Validation("The `password` property is required.")
	}
	nameKey, addrKey := "name:"+strings.ToLower(name), "addr:"+address
	for _, k := range []struct {
		key   string
		limit int
		what  string
	}{{nameKey, loginPerName, "for this user"}, {addrKey, loginPerAddress, "from your address"}} {
		if wait := limits.blocked(k.key, k.limit); wait > 0 {
			secs := int(wait.Round(time.Second) / time.Second)
			if secs < 1 {
				secs = 1
			}
			return Session{}, apierr.RateLimited(secs, "Too many failed sign-in attempts %s. Try again in %s.", k.what, humanWait(secs))
		}
	}
	acct, hash, err := q.AccountByLogin(name)
	if err != nil && !apierr.IsKind(err, apierr.KindNotFound) {
		return Session{}, err
	}
	if err != nil || hash == "" {
		CheckPassword(dummyHash(), in.Password)
		limits.fail(nameKey, addrKey)
		return Session{}, apierr.Unauthenticated("Wrong username or password.")
	}
	if !CheckPassword(hash, in.Password) {
		limits.fail(nameKey, addrKey)
		return Session{}, apierr.Unauthenticated("Wrong username or password.")
	}
	if acct.Deactivated {
		return Session{}, apierr.Unauthenticated("This account is deactivated. Ask an admin to reactivate it.")
	}
	limits.reset(nameKey)
	return StartSession(q, acct, now)
}

// StartSession stores a new session for acct, lasting SessionTTL from now,
// whichever way the person proved who they are (a password, or an
// identity provider through internal/sso).
func StartSession(q store.Q, acct store.Account, now time.Time) (Session, error) {
	sess := Session{Secret: RandomHex(32), CSRF: RandomHex(24), Principal: UserPrincipal(acct.User)}
	if _, err := q.DeleteExpiredSessions(); err != nil {
		return Session{}, err
	}
	return sess, q.InsertSession(store.HashSecret(sess.Secret), acct.ID, sess.CSRF, now, now.Add(SessionTTL))
}

// UserPrincipal is the principal of a person acting for themselves.
func UserPrincipal(u store.User) *Principal {
	id := u.ID
	return &Principal{Kind: KindUser, Name: AccountName(u), UserID: &id, RootRole: u.RootRole, User: &u}
}

// SessionPrincipal is the person behind the session whose cookie holds
// secret (401 when it has ended). A change (change true) must carry the
// session's CSRF token, csrf; otherwise it is refused with a 403 naming
// csrfHeader.
func SessionPrincipal(q store.Q, secret string, change bool, csrf, csrfHeader string) (*Principal, error) {
	sess, err := q.SessionByHash(store.HashSecret(secret))
	if apierr.IsKind(err, apierr.KindNotFound) {
		return nil, apierr.Unauthenticated("Your session has ended. Sign in again.")
	}
	if err != nil {
		return nil, err
	}
	if change && !SecretsEqual(csrf, sess.CSRF) {
		return nil, apierr.Forbidden("This change was refused: it did not carry this session's CSRF token in the %s header. Reload the page and try again.", csrfHeader)
	}
	return UserPrincipal(sess.Account.User), nil
}

// SecretsEqual compares two secrets in constant time without copying them.
func SecretsEqual(a, b string) bool {
	return subtle.ConstantTimeCompare(unsafe.Slice(unsafe.StringData(a), len(a)), unsafe.Slice(unsafe.StringData(b), len(b))) == 1
}

// SignOut ends the session whose cookie holds secret.
func SignOut(q store.Q, secret string) error {
	return q.DeleteSession(store.HashSecret(secret))
}

// SignOutEverywhere ends every session of p's own user and returns how
// many ended.
func SignOutEverywhere(q store.Q, p *Principal) (int64, error) {
	u, err := CallingUser(p)
	if err != nil {
		return 0, err
	}
	return q.DeleteUserSessions(u.ID)
}

// SessionView is what sign-in and GET /api/admin/user/session answer: who
// is signed in, the CSRF token the page sends back on changes and the
// permissions the person holds.
type SessionView struct {
	User        map[string]any `json:"user"`
	CSRFToken   string         `json:"csrfToken,omitempty"`
	Permissions []string       `json:"permissions"`
}

// allPermissions lists every permission name, for SessionView.
var allPermissions = []string{
	PermAdmin, PermCreateFeature, PermUpdateFeature, PermDeleteFeature, PermUpdateFeatureDependency,
	PermCreateFeatureStrategy, PermUpdateFeatureStrategy, PermDeleteFeatureStrategy, PermUpdateFeatureEnvironment,
	PermUpdateEnvVariants, PermCreateProject, PermUpdateProject, PermDeleteProject, PermCreateSegment, PermUpdateSegment,
	PermDeleteSegment, PermCreateStrategy, PermUpdateStrategy, PermDeleteStrategy, PermCreateContextField,
	PermUpdateContextField, PermDeleteContextField, PermCreateTagType, PermUpdateTagType, PermDeleteTagType,
	PermReadClientToken, PermCreateClientToken, PermDeleteClientToken, PermReadFrontendToken, PermCreateFrontendToken,
	PermDeleteFrontendToken, PermApproveChangeRequest, PermApplyChangeRequest, PermSkipChangeRequest,
}

// ViewSession is p's session view with csrf ("" when the caller is not a
// browser session).
func ViewSession(p *Principal, csrf string) SessionView {
	v := SessionView{CSRFToken: csrf, Permissions: []string{}}
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
