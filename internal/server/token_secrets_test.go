package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

// TestClientAndFrontendTokenSecretsAreReadable: admins read the secrets of
// client and frontend tokens back from the token list, as in Unleash (its
// Terraform provider finds a token by its secret), while admin tokens stay
// shown once; the database holds no secret in clear, only the hash that
// authentication looks tokens up by and the sealed secret; a token stored
// before secrets were kept (hash only) is listed by its hint and still
// works.
func TestClientAndFrontendTokenSecretsAreReadable(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		create := func(body map[string]any) string {
			return h.Do(t, "POST", "/api/admin/api-tokens", h.AdminToken, body).Want(t, 201).Map(t)["secret"].(string)
		}
		client := create(map[string]any{"tokenName": "sdk", "type": "client", "environment": "production", "projects": []string{"default"}})
		frontend := create(map[string]any{"tokenName": "web", "type": "frontend"})
		admin := create(map[string]any{"tokenName": "ops", "type": "admin"})
		listed := func() map[string]map[string]any {
			var body struct{ Tokens []map[string]any }
			h.Do(t, "GET", "/api/admin/api-tokens", h.AdminToken, nil).Want(t, 200).JSON(t, &body)
			out := map[string]map[string]any{}
			for _, tk := range body.Tokens {
				out[tk["tokenName"].(string)] = tk
			}
			return out
		}
		got := listed()
		if got["sdk"]["secret"] != client || got["web"]["secret"] != frontend {
			t.Fatalf("client and frontend secrets not readable: %v %v", got["sdk"], got["web"])
		}
		if s := got["ops"]["secret"].(string); s == admin || !strings.HasSuffix(s, "…") {
			t.Fatalf("admin token listed as %q", s)
		}
		// The tokens the server started with (INIT_*_API_TOKENS) too.
		all := h.Do(t, "GET", "/api/admin/api-tokens", h.AdminToken, nil).Want(t, 200)
		if !strings.Contains(string(all.Body), servertest.ClientToken) || !strings.Contains(string(all.Body), servertest.FrontendToken) {
			t.Errorf("bootstrap client/frontend tokens not readable: %s", all.Body)
		}
		if strings.Contains(string(all.Body), servertest.AdminToken) || strings.Contains(string(all.Body), admin) {
			t.Fatalf("the list leaks an admin token: %s", all.Body)
		}

		// No secret in clear anywhere in the table.
		secrets := []string{client, frontend, admin, servertest.ClientToken, servertest.FrontendToken, servertest.AdminToken}
		rows, err := h.Store.DB().QueryContext(context.Background(), `SELECT secret_hash, token_name, hint, COALESCE(secret_sealed, '') FROM api_tokens`)
		if err != nil {
			t.Fatal(err)
		}
		sealedRows := 0
		for rows.Next() {
			var hash, name, hint, sealed string
			if err := rows.Scan(&hash, &name, &hint, &sealed); err != nil {
				t.Fatal(err)
			}
			for _, s := range secrets {
				_, random, _ := strings.Cut(s, ".")
				for _, col := range []string{hash, name, hint, sealed} {
					if strings.Contains(col, random) {
						t.Errorf("api_tokens holds the secret %q in clear: %q", s, col)
					}
				}
			}
			if sealed != "" {
				sealedRows++
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if sealedRows != 5 { // 2 client + 1 frontend at start, 1 client + 1 frontend created, no admin token
			t.Errorf("%d sealed secrets, want 5", sealedRows)
		}

		// A token stored hashed only (before this) stays listed by its hint
		// and keeps working.
		if _, err := h.Store.DB().ExecContext(context.Background(), `UPDATE api_tokens SET secret_sealed = NULL WHERE secret_hash = $1`, store.HashSecret(client)); err != nil {
			t.Fatal(err)
		}
		if s := listed()["sdk"]["secret"]; s != store.SecretHint(client) {
			t.Errorf("a token without a sealed secret is listed as %v", s)
		}
		h.Do(t, "GET", "/api/client/features", client, nil).Want(t, 200)
		// A sealed secret moved onto another token does not open there.
		if _, err := h.Store.DB().ExecContext(context.Background(), `UPDATE api_tokens SET secret_sealed = (SELECT secret_sealed FROM api_tokens WHERE token_name = 'web') WHERE secret_hash = $1`, store.HashSecret(client)); err != nil {
			t.Fatal(err)
		}
		if s := listed()["sdk"]["secret"]; s != store.SecretHint(client) {
			t.Errorf("a sealed secret of another token is listed as %v", s)
		}
	})
}
