package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// apiTokenTable is this instance's copy of the API token table (admin,
// client and frontend tokens) by the SHA-256 of each secret, so that the
// SDK APIs, which hold the flags in memory too, keep answering while the
// database is away.
//
// It follows the change signal that reloads the client snapshot: when the
// store's generation has moved (a change committed here, or one of another
// instance seen through LISTEN/NOTIFY or the revision poll), the next
// request reloads the table before it is answered, so a token revoked
// anywhere stops working here as soon as the change is seen. While the
// database cannot be reached the copy is kept; a token created or revoked
// meanwhile takes effect once it is back.
//
// Each request needs the SHA-256 of its secret, which costs more than the
// rest of authenticating; sums remembers it for the secrets of tokens it
// found, by a keyed hash of the secret (a seed no client knows), compared
// in constant time.
type apiTokenTable struct {
	store *store.Store
	now   func() time.Time
	mu    sync.Mutex // held while loading
	cur   atomic.Pointer[apiTokenSet]

	seed   maphash.Seed
	sumsMu sync.Mutex
	sums   map[uint64]secretSum
}

// secretSum is a secret and its SHA-256.
type secretSum struct {
	secret string
	sum    [sha256.Size]byte
}

// maxSums bounds sums; it starts again empty when full.
const maxSums = 10000

// apiTokenSet is the table at one generation.
type apiTokenSet struct {
	generation int64
	byHash     map[[sha256.Size]byte]apiToken
}

type apiToken struct {
	p       *domain.Principal
	expires time.Time // zero: never
}

func newAPITokenTable(st *store.Store, now func() time.Time) *apiTokenTable {
	return &apiTokenTable{store: st, now: now, seed: maphash.MakeSeed(), sums: map[uint64]secretSum{}}
}

// resolve returns the principal of an API token's secret, or nil for an
// unknown or expired one.
func (t *apiTokenTable) resolve(ctx context.Context, secret string) (*domain.Principal, error) {
	set, err := t.current(ctx)
	if err != nil {
		return nil, err
	}
	key := maphash.String(t.seed, secret)
	t.sumsMu.Lock()
	known, remembered := t.sums[key]
	t.sumsMu.Unlock()
	var sum [sha256.Size]byte
	if remembered && domain.SecretsEqual(known.secret, secret) {
		sum = known.sum
	} else {
		sum, remembered = sha256.Sum256([]byte(secret)), false
	}
	tok, ok := set.byHash[sum]
	if !ok || (!tok.expires.IsZero() && tok.expires.Before(t.now())) {
		return nil, nil
	}
	if !remembered {
		t.sumsMu.Lock()
		if len(t.sums) >= maxSums {
			clear(t.sums)
		}
		t.sums[key] = secretSum{secret: strings.Clone(secret), sum: sum}
		t.sumsMu.Unlock()
	}
	return tok.p, nil
}

// current returns the table, reloaded first when the store's generation
// moved past it, unless the database is unavailable.
func (t *apiTokenTable) current(ctx context.Context) (*apiTokenSet, error) {
	gen := t.store.Generation()
	set := t.cur.Load()
	if set != nil && (set.generation >= gen || t.store.Unavailable() != nil) {
		return set, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if set = t.cur.Load(); set != nil && set.generation >= gen {
		return set, nil // loaded while this request waited
	}
	gen = t.store.Generation() // before the read: a change during it moves it again
	tokens, err := t.store.Q(ctx).APITokens()
	if err != nil {
		if set != nil && apierr.IsKind(err, apierr.KindDatabaseUnavailable) {
			return set, nil
		}
		return nil, err
	}
	next := &apiTokenSet{generation: gen, byHash: make(map[[sha256.Size]byte]apiToken, len(tokens))}
	for _, tok := range tokens {
		var key [sha256.Size]byte
		if len(tok.Hash) != hex.EncodedLen(sha256.Size) {
			continue // not a hash this server wrote
		}
		if _, err := hex.Decode(key[:], []byte(tok.Hash)); err != nil {
			continue
		}
		e := apiToken{p: apiTokenPrincipal(tok)}
		if tok.ExpiresAt != nil {
			e.expires = *tok.ExpiresAt
		}
		next.byHash[key] = e
	}
	t.cur.Store(next)
	return next, nil
}
