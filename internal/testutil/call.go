package testutil

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Call makes one HTTP request to a running bunting process with an
// Authorization header (and a JSON body when body is not empty) and
// returns the status and body; a request that cannot be made fails the
// test.
func Call(t testing.TB, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
