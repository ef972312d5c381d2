package wire

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
)

// Standard context fields, as bits for duplicate detection.
const (
	fieldAppName = 1 << iota
	fieldEnvironment
	fieldUserID
	fieldSessionID
	fieldRemoteAddress
	fieldCurrentTime
)

// standardField returns the struct field for a built-in context name.
func standardField(ctx *engine.Context, key string) (*string, int) {
	switch key {
	case "appName":
		return &ctx.AppName, fieldAppName
	case "environment":
		return &ctx.Environment, fieldEnvironment
	case "userId":
		return &ctx.UserID, fieldUserID
	case "sessionId":
		return &ctx.SessionID, fieldSessionID
	case "remoteAddress":
		return &ctx.RemoteAddress, fieldRemoteAddress
	case "currentTime":
		return &ctx.CurrentTime, fieldCurrentTime
	}
	return nil, 0
}

// ParseQuery reads the context the browser SDK sends as a query
// string: built-in fields at the top level, custom ones as
// properties[name]=value, and other top-level keys as properties (an
// explicit properties[name] wins over a top-level name).
func ParseQuery(raw string, ctx *engine.Context) error {
	seen := 0
	for raw != "" {
		var part string
		part, raw, _ = strings.Cut(raw, "&")
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		if name, ok := encodedPropertyName(k); ok {
			// The browser SDK's properties%5Bname%5D=value, without
			// unescaping (and allocating) the whole key.
			if err := setEncodedProperty(ctx, k, name, v); err != nil {
				return err
			}
			continue
		}
		key, err := unescape(k)
		if err != nil {
			return apierr.Validation("query parameter %q is not valid URL encoding", k)
		}
		val, err := unescape(v)
		if err != nil {
			return apierr.Validation("the value of query parameter %q is not valid URL encoding", key)
		}
		if err := setQueryField(ctx, &seen, key, val); err != nil {
			return err
		}
	}
	return nil
}

// encodedPropertyName returns the still-escaped name of a
// "properties%5Bname%5D" key.
func encodedPropertyName(k string) (string, bool) {
	const prefix, suffix = "properties%5", "%5"
	if len(k) < len(prefix)+len(suffix)+3 || k[:len(prefix)] != prefix || (k[len(prefix)] != 'B' && k[len(prefix)] != 'b') {
		return "", false
	}
	end := len(k) - 3
	if k[end:end+2] != suffix || (k[end+2] != 'D' && k[end+2] != 'd') {
		return "", false
	}
	return k[len(prefix)+1 : end], true
}

func setEncodedProperty(ctx *engine.Context, rawKey, rawName, rawValue string) error {
	name, err := unescape(rawName)
	if err != nil || name == "" || strings.ContainsAny(name, "[]") {
		return apierr.Validation("query parameter %q: properties must map names to strings", rawKey)
	}
	val, err := unescape(rawValue)
	if err != nil {
		return apierr.Validation("the value of query parameter %q is not valid URL encoding", rawKey)
	}
	if val != "" {
		setProperty(ctx, name, val)
	}
	return nil
}

func setQueryField(ctx *engine.Context, seen *int, key, val string) error {
	if f, bit := standardField(ctx, key); f != nil {
		if *seen&bit != 0 {
			return apierr.Validation("query parameter %q must be a string, not repeated", key)
		}
		*seen |= bit
		*f = val
		return nil
	}
	if rest, ok := strings.CutPrefix(key, "properties"); ok && rest != "" && rest[0] == '[' {
		name, ok := strings.CutSuffix(rest[1:], "]")
		if !ok || name == "" || strings.ContainsAny(name, "[]") {
			return apierr.Validation("query parameter %q: properties must map names to strings", key)
		}
		if val != "" {
			setProperty(ctx, name, val)
		}
		return nil
	}
	if key == "properties" {
		return apierr.Validation("query parameter \"properties\" must be an object: use properties[name]=value")
	}
	if strings.ContainsAny(key, "[]") {
		return apierr.Validation("query parameter %q must be a string", key)
	}
	if val != "" {
		if _, exists := ctx.Properties[key]; !exists {
			setProperty(ctx, key, val)
		}
	}
	return nil
}

func setProperty(ctx *engine.Context, name, val string) {
	if ctx.Properties == nil {
		ctx.Properties = make(map[string]string, 4)
	}
	ctx.Properties[name] = val
}

func unescape(s string) (string, error) {
	if strings.IndexByte(s, '%') < 0 && strings.IndexByte(s, '+') < 0 {
		return s, nil
	}
	return url.QueryUnescape(s)
}

// SyntaxError is the 400 for a body that is not JSON, in httpjson's words
// (the position of the first error).
func SyntaxError(body []byte) error {
	var v any
	if err := httpjson.DecodeUnstored(body, &v); err != nil {
		return err
	}
	return apierr.Validation("The request body is not valid JSON.")
}

// NormaliseCurrentTime drops a currentTime that is not a date, as the
// reference does, and turns a date-only value into a time.
func NormaliseCurrentTime(ctx *engine.Context) {
	t := ctx.CurrentTime
	if t == "" {
		return
	}
	if _, err := time.Parse(time.RFC3339Nano, t); err == nil {
		return
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02", "2006-01-02T15:04"} {
		if p, err := time.ParseInLocation(layout, t, time.UTC); err == nil {
			ctx.CurrentTime = p.Format(time.RFC3339Nano)
			return
		}
	}
	if ms, err := strconv.ParseInt(t, 10, 64); err == nil {
		ctx.CurrentTime = time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
		return
	}
	ctx.CurrentTime = ""
}
