// Package upstream is the proxy's client of an Unleash-compatible flag
// server: it fetches the client features payload, registers, and posts
// usage metrics, with the identification headers SDKs send.
package upstream

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/redact"
)

// SpecVersion is the client specification version the proxy announces.
const SpecVersion = "5.2.0"

// Config identifies the proxy towards upstream.
type Config struct {
	// BaseURL ends with "/", e.g. "https://host/api/".
	BaseURL      string
	Token        string
	AppName      string
	InstanceID   string
	ConnectionID string
	SDKVersion   string
	// Interval is sent as unleash-interval on fetches, in milliseconds.
	Interval time.Duration
	// MetricsInterval is sent as unleash-interval on metrics posts.
	MetricsInterval time.Duration
	// Project, NamePrefix and Tags filter the fetched flags.
	Project    string
	NamePrefix string
	Tags       []string // "name:value"
}

// Client talks to one upstream.
type Client struct {
	cfg  Config
	http *http.Client
	// featuresURL includes the filter query.
	featuresURL string
}

// NewHTTPClient returns an HTTP client with a 10 s timeout; verify false
// accepts invalid certificates.
func NewHTTPClient(verify bool) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if !verify {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the operator asked for it
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// New returns a client; hc nil means NewHTTPClient(true).
func New(cfg Config, hc *http.Client) *Client {
	if hc == nil {
		hc = NewHTTPClient(true)
	}
	fu := cfg.BaseURL + "client/features"
	if q := encodeOrdered(cfg); q != "" {
		fu += "?" + q
	}
	return &Client{cfg: cfg, http: hc, featuresURL: fu}
}

// encodeOrdered keeps the reference's parameter order: project,
// namePrefix, then each tag.
func encodeOrdered(cfg Config) string {
	var b bytes.Buffer
	add := func(k, v string) {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(k) + "=" + url.QueryEscape(v))
	}
	if cfg.Project != "" {
		add("project", cfg.Project)
	}
	if cfg.NamePrefix != "" {
		add("namePrefix", cfg.NamePrefix)
	}
	for _, t := range cfg.Tags {
		add("tag", t)
	}
	return b.String()
}

// StatusError is a non-2xx answer from upstream.
type StatusError struct {
	// URL is the request's address without credentials or query
	// (redact.URL), as errors end up in logs.
	URL    string
	Status int
}

// redactURLError removes credentials from the address an HTTP client
// error names (net/http hides a password, not a user name or a query).
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = redact.URL(ue.URL)
	}
	return err
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s responded %d", e.URL, e.Status)
}

// Unauthorized reports a 401 or 403: the token is not accepted.
func (e *StatusError) Unauthorized() bool {
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
}

// IsUnauthorized reports whether err is a 401/403 from upstream.
func IsUnauthorized(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Unauthorized()
}

// IsRejected reports whether err is upstream refusing the request itself
// as invalid: a 4xx other than 401 and 403 (the token), 404 (a wrong path,
// which an operator may fix), 408 and 429 (try later). Sending the same
// request again cannot succeed.
func IsRejected(err error) bool {
	var se *StatusError
	if !errors.As(err, &se) || se.Status < 400 || se.Status > 499 {
		return false
	}
	switch se.Status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusRequestTimeout, http.StatusTooManyRequests:
		return false
	}
	return true
}

// Fetched is the outcome of a successful fetch.
type Fetched struct {
	// Features is nil when upstream answered 304 or sent the same bytes
	// as last time.
	Features *engine.ClientFeatures
	// Raw is the body as received (nil when unchanged).
	Raw []byte
	// Sum is the SHA-256 of the body, to recognise an unchanged one.
	Sum  [sha256.Size]byte
	ETag string
}

// maxPayload bounds an upstream payload (64 MB).
const maxPayload = 64 << 20

func (c *Client) setHeaders(h http.Header, interval time.Duration) {
	h.Set("User-Agent", c.cfg.AppName)
	h.Set("Unleash-Appname", c.cfg.AppName)
	h.Set("Unleash-Instanceid", c.cfg.InstanceID)
	h.Set("Unleash-Client-Spec", SpecVersion)
	h.Set("Unleash-Sdk", c.cfg.SDKVersion)
	h.Set("Unleash-Connection-Id", c.cfg.ConnectionID)
	h.Set("Unleash-Interval", strconv.FormatInt(interval.Milliseconds(), 10))
	h.Set("Authorization", c.cfg.Token)
}

// FetchFeatures gets the client features payload; etag and last are the
// ETag and body checksum of the last successful fetch (a body with the
// same checksum is not decoded again).
func (c *Client) FetchFeatures(ctx context.Context, etag string, last [sha256.Size]byte) (Fetched, error) {
	return fetchPayload(ctx, c.http, c.featuresURL, &last, func(h http.Header) {
		c.setHeaders(h, c.cfg.Interval)
		h.Set("Accept", "application/json")
		if etag != "" {
			h.Set("If-None-Match", etag)
		}
	})
}

// FetchURL gets a client features payload from any URL (the bootstrap),
// with the identification headers plus the given extra ones.
func (c *Client) FetchURL(ctx context.Context, u string, extra http.Header) (Fetched, error) {
	return fetchPayload(ctx, c.http, u, nil, func(h http.Header) {
		c.setHeaders(h, c.cfg.Interval)
		h.Del("Authorization")
		for k, v := range extra {
			h[k] = v
		}
	})
}

func fetchPayload(ctx context.Context, hc *http.Client, u string, last *[sha256.Size]byte, headers func(http.Header)) (Fetched, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Fetched{}, err
	}
	headers(req.Header)
	resp, err := hc.Do(req)
	if err != nil {
		return Fetched{}, redactURLError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		_, _ = io.Copy(io.Discard, resp.Body)
		return Fetched{ETag: resp.Header.Get("ETag")}, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return Fetched{}, &StatusError{URL: redact.URL(u), Status: resp.StatusCode}
	}
	var buf bytes.Buffer
	if n := resp.ContentLength; n > 0 && n <= maxPayload {
		buf.Grow(int(n) + bytes.MinRead)
	}
	_, err = buf.ReadFrom(io.LimitReader(resp.Body, maxPayload+1))
	raw := buf.Bytes()
	if err != nil {
		return Fetched{}, fmt.Errorf("reading %s: %w", redact.URL(u), err)
	}
	if len(raw) > maxPayload {
		return Fetched{}, fmt.Errorf("%s: payload larger than %d bytes", redact.URL(u), maxPayload)
	}
	sum := sha256.Sum256(raw)
	if last != nil && sum == *last {
		return Fetched{Sum: sum, ETag: resp.Header.Get("ETag")}, nil
	}
	cf, err := DecodeFeatures(raw)
	if err != nil {
		return Fetched{}, fmt.Errorf("%s: %w", redact.URL(u), err)
	}
	return Fetched{Features: cf, Raw: raw, Sum: sum, ETag: resp.Header.Get("ETag")}, nil
}

// DecodeFeatures parses and sanity-checks a client features payload: it
// must be an object with a features array.
func DecodeFeatures(raw []byte) (*engine.ClientFeatures, error) {
	var cf engine.ClientFeatures
	if err := json.Unmarshal(raw, &cf); err != nil {
		return nil, fmt.Errorf("payload is not a client features document: %w", err)
	}
	if cf.Features == nil {
		return nil, errors.New("payload has no features array")
	}
	return &cf, nil
}

// Registration is the body of POST client/register.
type Registration struct {
	AppName          string    `json:"appName"`
	InstanceID       string    `json:"instanceId"`
	ConnectionID     string    `json:"connectionId"`
	SDKVersion       string    `json:"sdkVersion"`
	Strategies       []string  `json:"strategies"`
	Started          time.Time `json:"started"`
	Interval         int64     `json:"interval"`
	Environment      string    `json:"environment,omitempty"`
	PlatformName     string    `json:"platformName"`
	PlatformVersion  string    `json:"platformVersion"`
	YggdrasilVersion *string   `json:"yggdrasilVersion"`
	SpecVersion      string    `json:"specVersion"`
}

// Register posts the registration.
func (c *Client) Register(ctx context.Context, reg Registration) error {
	return c.post(ctx, "client/register", reg, c.cfg.MetricsInterval)
}

// Metrics is the body of POST client/metrics.
type Metrics struct {
	AppName          string  `json:"appName"`
	InstanceID       string  `json:"instanceId"`
	ConnectionID     string  `json:"connectionId"`
	Bucket           any     `json:"bucket"`
	Environment      string  `json:"environment,omitempty"`
	PlatformName     string  `json:"platformName"`
	PlatformVersion  string  `json:"platformVersion"`
	YggdrasilVersion *string `json:"yggdrasilVersion"`
	SpecVersion      string  `json:"specVersion"`
}

// PostMetrics posts one usage bucket.
func (c *Client) PostMetrics(ctx context.Context, m Metrics) error {
	return c.post(ctx, "client/metrics", m, c.cfg.MetricsInterval)
}

func (c *Client) post(ctx context.Context, path string, body any, interval time.Duration) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	u := c.cfg.BaseURL + path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(data))
	if err != nil {
		return err
	}
	c.setHeaders(req.Header, interval)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return redactURLError(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &StatusError{URL: redact.URL(u), Status: resp.StatusCode}
	}
	return nil
}
