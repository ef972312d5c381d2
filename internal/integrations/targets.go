package integrations

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"

	"code.dny.dev/ssrf"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// targets decides where deliveries may go (server-side request forgery
// protection). Only public addresses are reached, unless the host or the
// address is listed in INTEGRATION_ALLOWED_TARGETS. The address is checked
// when the connection is made, on the address actually dialled (the
// dialer's ControlContext hook), so a name that resolves to a public
// address when checked and to a private one a moment later (DNS
// rebinding) is refused all the same. Redirects are never followed, and no
// proxy from the environment is used.
type targets struct {
	allowHTTP bool
	hosts     []string
	prefixes  []netip.Prefix
	guard     *ssrf.Guardian
	resolver  *net.Resolver
}

func newTargets(c Config) *targets {
	var v4, v6 []netip.Prefix
	for _, p := range c.allowedPrefixes {
		if p.Addr().Is4() {
			v4 = append(v4, p)
		} else {
			v6 = append(v6, p)
		}
	}
	return &targets{
		allowHTTP: c.AllowHTTP, hosts: c.allowedHosts, prefixes: c.allowedPrefixes,
		guard:    ssrf.New(ssrf.WithAnyPort(), ssrf.WithAllowedV4Prefixes(v4...), ssrf.WithAllowedV6Prefixes(v6...)),
		resolver: net.DefaultResolver,
	}
}

// hostListed reports whether a host name is listed by name.
func (t *targets) hostListed(host string) bool {
	return slices.Contains(t.hosts, strings.ToLower(strings.TrimSuffix(host, ".")))
}

// addrListed reports whether an address lies in a listed prefix.
func (t *targets) addrListed(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range t.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// TargetError is a refused target; its message says why and how to allow
// it.
type TargetError struct{ msg string }

func (e *TargetError) Error() string { return e.msg }

func refused(format string, args ...any) error {
	return &TargetError{msg: fmt.Sprintf(format, args...)}
}

// checkAddr refuses an address that is not public and not listed; with
// listedOnly (plain http to a host not listed by name) it must be listed.
func (t *targets) checkAddr(host string, a netip.Addr, listedOnly bool) error {
	a = a.Unmap()
	if t.addrListed(a) {
		return nil
	}
	if err := t.guard.SafeAddr(a); err != nil {
		return refused("%s resolves to %s, %s, which integrations may not reach; list it in INTEGRATION_ALLOWED_TARGETS to allow it", host, a, addrKind(a))
	}
	if listedOnly {
		return refused("%s is reached over http://, which is only used for targets in INTEGRATION_ALLOWED_TARGETS (use https://, list the target, or set INTEGRATION_ALLOW_HTTP=true)", host)
	}
	return nil
}

// addrKind names the kind of a refused address.
func addrKind(a netip.Addr) string {
	switch {
	case a == netip.MustParseAddr("169.254.169.254") || a == netip.MustParseAddr("fd00:ec2::254") || a == netip.MustParseAddr("100.100.100.200"):
		return "a cloud metadata address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsUnspecified():
		return "the unspecified address"
	case a.IsMulticast():
		return "a multicast address"
	}
	return "a special-purpose (not public) address"
}

// parse checks a target URL's form and scheme, without resolving it.
func (t *targets) parse(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || u.Opaque != "" {
		return nil, refused("it is not an absolute URL")
	}
	host := u.Hostname()
	if host == "" {
		return nil, refused("it has no host")
	}
	switch u.Scheme {
	case "https", "http": // plain http is checked where the address is known
	default:
		return nil, refused("its scheme must be https (or http), not %q", u.Scheme)
	}
	return u, nil
}

// httpListedOnly reports whether u is plain http that only listed
// addresses may serve.
func (t *targets) httpListedOnly(u *url.URL) bool {
	return u.Scheme == "http" && !t.allowHTTP && !t.hostListed(u.Hostname())
}

// check validates a target URL as configured: its form and scheme, and
// where it resolves now (the delivery checks again when it connects).
func (t *targets) check(ctx context.Context, raw string) error {
	u, err := t.parse(raw)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if t.hostListed(host) {
		return nil
	}
	listedOnly := t.httpListedOnly(u)
	if a, err := netip.ParseAddr(host); err == nil {
		return t.checkAddr(host, a, listedOnly)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := t.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return refused("the host %s does not resolve", host)
	}
	for _, a := range addrs {
		if err := t.checkAddr(host, a, listedOnly); err != nil {
			return err
		}
	}
	return nil
}

// validateURL is check as a 400 naming the parameter.
func (t *targets) validateURL(ctx context.Context, param, raw string) error {
	if err := t.check(ctx, raw); err != nil {
		return apierr.Validation("The `%s` value is refused: %s.", param, err.Error())
	}
	return nil
}

type dialKey struct{}

// dialRule is what the dial of one delivery must hold to.
type dialRule struct {
	host       string
	listedOnly bool
}

// client returns the HTTP client deliveries use: no proxy, no redirects,
// connections only to checked addresses.
func (t *targets) client() *http.Client {
	guarded := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second,
		ControlContext: func(ctx context.Context, network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return refused("cannot check the address %s", address)
			}
			rule, _ := ctx.Value(dialKey{}).(dialRule)
			return t.checkAddr(rule.host, ap.Addr(), rule.listedOnly)
		}}
	open := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, _ := net.SplitHostPort(addr)
			if t.hostListed(host) {
				return open.DialContext(ctx, network, addr)
			}
			return guarded.DialContext(ctx, network, addr)
		},
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        100,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// withRule attaches the dial rule of a delivery to u to ctx.
func (t *targets) withRule(ctx context.Context, u *url.URL) context.Context {
	return context.WithValue(ctx, dialKey{}, dialRule{host: u.Hostname(), listedOnly: t.httpListedOnly(u)})
}

// targetError finds a refusal in a delivery error.
func targetError(err error) (*TargetError, bool) {
	var te *TargetError
	return te, errors.As(err, &te)
}
