package domain

import (
	"crypto/subtle"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// SessionTTL is how long a browser session lasts after sign-in.
const SessionTTL = 7 * 24 * time.Hour

// Sign-in limits: failures counted per account (per typed name when it
// names nobody) and per client address in a sliding window.
const (
	loginWindow       = 5 * time.Minute
	loginPerName      = 5
	loginPerAddress   = 20
	loginLimiterCap   = 100000
	loginLimiterSweep = 10000
)

// LoginLimiter counts failed sign-ins per account and per client address
// in a sliding window; past the limit SignIn refuses for the rest of the
// window, even a right password. An attempt counts as a failure from the
// moment it starts (begin) until its password proves right (succeeded),
// so guesses sent at once cannot all pass the check before any has
// failed. It lives in one process.
type LoginLimiter struct {
	mu       sync.Mutex
	failures map[string][]time.Time
	now      func() time.Time
}

// NewLoginLimiter returns a limiter with no failures counted.
func NewLoginLimiter() *LoginLimiter {
	return &LoginLimiter{failures: map[string][]time.Time{}, now: time.Now}
}

// loginLimit is one count an attempt is checked against.
type loginLimit struct {
	key   string
	limit int
	what  string
}

// loginAttempt is an attempt begin counted, for succeeded.
type loginAttempt struct {
	limits []loginLimit
	at     time.Time
}

// begin refuses the attempt with a 429 when one of limits is reached;
// otherwise it counts the attempt as a failure in each, at once.
func (l *LoginLimiter) begin(limits ...loginLimit) (loginAttempt, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range limits {
		fs := l.recent(k.key, now)
		if len(fs) < k.limit {
			continue
		}
		secs := max(int(fs[len(fs)-k.limit].Add(loginWindow).Sub(now).Round(time.Second)/time.Second), 1)
		return loginAttempt{}, apierr.RateLimited(secs, "Too many failed sign-in attempts %s. Try again in %s.", k.what, humanWait(secs))
	}
	if len(l.failures) > loginLimiterCap {
		n := 0
		for k := range l.failures {
			if n++; n > loginLimiterSweep {
				break
			}
			l.recent(k, now)
		}
	}
	for _, k := range limits {
		l.failures[k.key] = append(l.recent(k.key, now), now)
	}
	return loginAttempt{limits: limits, at: now}, nil
}

// succeeded takes back the failure begin counted for a right password:
// the first limit (the account's) starts again from nothing, the others
// lose this attempt only.
func (l *LoginLimiter) succeeded(a loginAttempt) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, k := range a.limits {
		if i == 0 {
			delete(l.failures, k.key)
			continue
		}
		fs := l.failures[k.key]
		if j := slices.Index(fs, a.at); j >= 0 {
			l.failures[k.key] = slices.Delete(fs, j, j+1)
		}
	}
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
	// Failures count against the account the name resolves to, whichever
	// of its names was typed; a name of nobody has its own count.
	acct, hash, err := q.AccountByLogin(name)
	if err != nil && !apierr.IsKind(err, apierr.KindNotFound) {
		return Session{}, err
	}
	known := err == nil
	key := "name:" + strings.ToLower(name)
	if known {
		key = "account:" + strconv.FormatInt(acct.ID, 10)
	}
	attempt, err := limits.begin(loginLimit{key, loginPerName, "for this user"}, loginLimit{"addr:" + address, loginPerAddress, "from your address"})
	if err != nil {
		return Session{}, err
	}
	if !known || hash == "" {
		CheckPassword(dummyHash(), in.Password)
		return Session{}, apierr.Unauthenticated("Wrong username or password.")
	}
	if !CheckPassword(hash, in.Password) {
		return Session{}, apierr.Unauthenticated("Wrong username or password.")
	}
	limits.succeeded(attempt)
	if acct.Deactivated {
		return Session{}, apierr.Unauthenticated("This account is deactivated. Ask an admin to reactivate it.")
	}
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
// permissions the person holds outside any project; Scopes, what they
// hold in the projects asked for (pages show only what may be changed).
type SessionView struct {
	User        map[string]any   `json:"user"`
	CSRFToken   string           `json:"csrfToken,omitempty"`
	Permissions []string         `json:"permissions"`
	MemberOf    []string         `json:"memberOf"`
	Scopes      map[string]Scope `json:"scopes,omitempty"`
}

// Scope is what a person holds in one project: its project permissions
// (with environment ones held in some environment) and, per environment,
// its environment permissions.
type Scope struct {
	Project      []string            `json:"project"`
	Environments map[string][]string `json:"environments"`
}

// ViewSession is p's session view with csrf ("" when the caller is not a
// browser session): the root role's name and id, the permissions held
// outside any project (access.Grants.Held), and a Scope for each of
// projects p may see. only, when not empty, limits the permissions listed
// in scopes to those names.
func ViewSession(q store.Q, p *Principal, csrf string, projects, only []string) (SessionView, error) {
	role := p.RootRole
	if p.Kind == KindAdminToken {
		role = RoleAdmin
	}
	r, err := RootRoleOf(q, role)
	if err != nil {
		return SessionView{}, err
	}
	g := p.Grants()
	v := SessionView{CSRFToken: csrf, Permissions: g.Held("", ""), MemberOf: g.Projects()}
	v.User = map[string]any{"name": p.Name, "rootRole": r.Name, "rootRoleId": r.ID}
	if p.UserID != nil {
		v.User["id"] = *p.UserID
	}
	if len(projects) == 0 {
		return v, nil
	}
	envs, err := q.Environments()
	if err != nil {
		return SessionView{}, err
	}
	keep := func(held []string) []string {
		if len(only) == 0 {
			return held
		}
		return slices.DeleteFunc(held, func(n string) bool { return !slices.Contains(only, n) && n != PermAdmin })
	}
	v.Scopes = map[string]Scope{}
	for _, project := range projects {
		if project == "" || !p.CanSeeProject(project) || len(v.Scopes) >= 500 {
			continue
		}
		sc := Scope{Project: keep(g.Held(project, "")), Environments: map[string][]string{}}
		for _, e := range envs {
			sc.Environments[e.Name] = keep(g.Held(project, e.Name))
		}
		v.Scopes[project] = sc
	}
	return v, nil
}
