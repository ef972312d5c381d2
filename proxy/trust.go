// Which peers may say, with X-Forwarded-For, whose request it is
// (trustProxy, as Express reads it), and the address a context gets from
// them.

package proxy

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"

	"github.com/bunting-flags/bunting/internal/config"
)

// clientIP is the peer address in plain form (IPv4 as a.b.c.d), or, when
// the peer is trusted, the address X-Forwarded-For names.
func (p *Proxy) clientIP(r *http.Request) string {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	addr := peer.Addr().Unmap()
	tp := p.cfg.TrustProxy
	xff := r.Header.Values("X-Forwarded-For")
	if !tp.Enabled() || len(xff) == 0 {
		if peer.Addr().Is4() {
			// "a.b.c.d:port" already holds the plain form (IPv4 parses
			// only from its one canonical text).
			return r.RemoteAddr[:strings.LastIndexByte(r.RemoteAddr, ':')]
		}
		return addr.String()
	}
	var chain []string
	for _, line := range xff {
		for _, s := range strings.Split(line, ",") {
			if s = strings.TrimSpace(s); s != "" {
				chain = append(chain, s)
			}
		}
	}
	if len(chain) == 0 {
		return addr.String()
	}
	if tp.All {
		return plainIP(chain[0])
	}
	for i := len(chain) - 1; i >= 0 && tp.trusts(addr); i-- {
		a, err := netip.ParseAddr(plainIP(chain[i]))
		if err != nil {
			return addr.String()
		}
		addr = a
	}
	return addr.String()
}

func plainIP(s string) string {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().String()
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().String()
	}
	return s
}

// TrustProxy says which peers may set X-Forwarded-For.
type TrustProxy struct {
	// All trusts every peer: the left-most forwarded address wins.
	All bool
	// Prefixes are the trusted peers; the chain is walked from the right
	// past trusted addresses.
	Prefixes []netip.Prefix
}

// Enabled reports whether any peer is trusted.
func (t TrustProxy) Enabled() bool { return t.All || len(t.Prefixes) > 0 }

func (t TrustProxy) trusts(a netip.Addr) bool {
	if t.All {
		return true
	}
	for _, p := range t.Prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// namedRanges are the names Express accepts for trustProxy.
var namedRanges = map[string][]string{
	"loopback":    {"127.0.0.1/8", "::1/128"},
	"linklocal":   {"169.254.0.0/16", "fe80::/10"},
	"uniquelocal": {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"},
}

func parseTrustProxy(v string) (TrustProxy, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return TrustProxy{All: true}, nil
	case "false", "":
		return TrustProxy{}, nil
	}
	var t TrustProxy
	for _, item := range config.SplitList(v) {
		if names, ok := namedRanges[strings.ToLower(item)]; ok {
			for _, n := range names {
				t.Prefixes = append(t.Prefixes, netip.MustParsePrefix(n).Masked())
			}
			continue
		}
		if p, err := netip.ParsePrefix(item); err == nil {
			t.Prefixes = append(t.Prefixes, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil {
			return TrustProxy{}, fmt.Errorf("%q is not true, false, an IP address, a CIDR or loopback/linklocal/uniquelocal", item)
		}
		a = a.Unmap()
		t.Prefixes = append(t.Prefixes, netip.PrefixFrom(a, a.BitLen()))
	}
	return t, nil
}
