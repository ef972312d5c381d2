package store_test

import (
	"context"
	"os"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/secretbox"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

// TestTokenSecretsMigration: a database from before token secrets were
// kept (its schema at migration 700, a client token stored as its hash)
// is migrated at start; the old token keeps its hash and cannot be read
// back, a token stored afterwards can, and its row holds only the sealed
// form.
func TestTokenSecretsMigration(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		ctx := context.Background()
		st := servertest.OpenStore(t, db)
		dialect, dir := goose.DialectSQLite3, "migrations/sqlite"
		if db.Kind == "postgres" {
			dialect, dir = goose.DialectPostgres, "migrations/postgres"
		}
		p, err := goose.NewProvider(dialect, st.DB(), os.DirFS(dir))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.DownTo(ctx, 700); err != nil {
			t.Fatal(err)
		}
		const old = "default:development.stored-before"
		if _, err := st.DB().ExecContext(ctx, `INSERT INTO api_tokens (secret_hash, token_name, type, environment, projects, hint, created_at)
			VALUES ($1, 'old', 'client', 'development', '["default"]', $2, 1)`, store.HashSecret(old), store.SecretHint(old)); err != nil {
			t.Fatal(err)
		}

		st = servertest.OpenStore(t, db) // migrates again
		box, _ := secretbox.New("token-secrets-migration-key", "")
		st.SetSecretBox(box)
		const fresh = "default:development.stored-after"
		err = st.Tx(ctx, func(tx *store.Tx) error {
			return domain.EnsureAPIToken(tx, "new", store.TokenClient, fresh)
		})
		if err != nil {
			t.Fatal(err)
		}
		q := st.Q(ctx)
		tokens, err := q.APITokens()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, tk := range tokens {
			got[tk.TokenName] = q.TokenSecret(tk)
			if tk.TokenName == "new" && (tk.Sealed == "" || tk.Sealed == fresh) {
				t.Errorf("the new token's sealed secret: %q", tk.Sealed)
			}
		}
		if got["old"] != "" || got["new"] != fresh {
			t.Fatalf("readable secrets after the migration: %q", got)
		}
		if tk, err := q.APITokenByHash(store.HashSecret(old)); err != nil || tk.TokenName != "old" {
			t.Fatalf("the old token by its hash: %v %v", tk, err)
		}
	})
}
