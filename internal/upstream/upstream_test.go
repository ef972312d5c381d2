package upstream

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestDecodeFeaturesRejectsWhatIsNotAPayload(t *testing.T) {
	for _, bad := range []string{``, `[]`, `{}`, `{"features":{}}`, `{"features":"x"}`, `{"features":[{"name":1}]}`, `<html>`} {
		if _, err := DecodeFeatures([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	cf, err := DecodeFeatures([]byte(`{"version":2,"features":[{"name":"a","enabled":true,"strategies":[]}],"segments":[{"id":1,"constraints":[]}]}`))
	if err != nil || len(cf.Features) != 1 || len(cf.Segments) != 1 {
		t.Fatalf("%v %+v", err, cf)
	}
}

func TestFetchFeaturesQueryETagAndUnchangedBody(t *testing.T) {
	body := `{"version":2,"features":[]}`
	var gotQuery, gotINM string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotQuery, gotINM = r.URL.RawQuery, r.Header.Get("If-None-Match")
		if gotINM == `"e1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"e1"`)
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	c := New(Config{BaseURL: srv.URL + "/api/", Project: "p q", NamePrefix: "n", Tags: []string{"a:b", "c:d"}}, nil)
	f, err := c.FetchFeatures(context.Background(), "", [sha256.Size]byte{})
	if err != nil || f.Features == nil || f.ETag != `"e1"` {
		t.Fatalf("%v %+v", err, f)
	}
	if gotQuery != "project=p+q&namePrefix=n&tag=a%3Ab&tag=c%3Ad" {
		t.Errorf("query %q", gotQuery)
	}
	f, err = c.FetchFeatures(context.Background(), `"e1"`, f.Sum)
	if err != nil || f.Features != nil {
		t.Fatalf("304: %v %+v", err, f)
	}
	f, err = c.FetchFeatures(context.Background(), "", sha256.Sum256([]byte(body)))
	if err != nil || f.Features != nil || f.Raw != nil {
		t.Fatalf("same body: %v %+v", err, f)
	}
}

func TestStatusErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) }))
	defer srv.Close()
	c := New(Config{BaseURL: srv.URL + "/"}, nil)
	_, err := c.FetchFeatures(context.Background(), "", [sha256.Size]byte{})
	if !IsUnauthorized(err) {
		t.Fatalf("403 should be unauthorized: %v", err)
	}
	if err := c.PostMetrics(context.Background(), Metrics{}); !IsUnauthorized(err) {
		t.Fatalf("metrics 403: %v", err)
	}
}
