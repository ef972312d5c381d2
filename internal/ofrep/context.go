package ofrep

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/wire"
)

// request is the body of an evaluation request: {"context": {...}}. A
// missing or null context is an empty one (the web provider leaves it out
// when the application set none).
type request struct {
	Context map[string]json.RawMessage `json:"context"`
}

// parseRequest reads an evaluation request's body into ctx: targetingKey
// becomes userId unless userId is given; userId, sessionId, remoteAddress,
// environment, appName and currentTime are Bunting's fields; every other
// attribute becomes a property, as a string (numbers as written, booleans
// as true/false, objects and arrays as compact JSON; null leaves it out).
// The body is read once: by scanRequest, or when it cannot, by
// encoding/json (decodeRequest).
func parseRequest(body []byte, ctx *engine.Context) *Error {
	ap := attrsPool.Get().(*[]attr)
	attrs, ok := scanRequest(body, string(body), (*ap)[:0])
	var err *Error
	if !ok {
		attrs, err = decodeRequest(body, attrs[:0])
	}
	if err == nil {
		err = setAttributes(attrs, ctx)
	}
	clear(attrs)
	*ap = attrs[:0]
	attrsPool.Put(ap)
	return err
}

var attrsPool = sync.Pool{New: func() any { s := make([]attr, 0, 16); return &s }}

// decodeRequest is scanRequest for every body, through encoding/json: it
// appends the context's attributes to attrs (in no particular order), or
// returns the error the body deserves.
func decodeRequest(body []byte, attrs []attr) ([]attr, *Error) {
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		var typeErr *json.UnmarshalTypeError
		switch {
		case len(bytes.TrimSpace(body)) == 0:
			return attrs, errorf(http.StatusBadRequest, CodeParseError, "the request body is empty: send a JSON object like {\"context\":{}}")
		case errors.As(err, &typeErr) && typeErr.Field == "":
			return attrs, errorf(http.StatusBadRequest, CodeParseError, "the request body must be a JSON object like {\"context\":{}}")
		case errors.As(err, &typeErr):
			return attrs, errorf(http.StatusBadRequest, CodeInvalidCtx, "context must be a JSON object of attributes")
		}
		return attrs, errorf(http.StatusBadRequest, CodeParseError, "the request body is not JSON: %v", err)
	}
	for name, v := range req.Context {
		attrs = append(attrs, attr{name: name, value: v})
	}
	return attrs, nil
}

// setAttributes sets the context's attributes into ctx (see parseRequest).
func setAttributes(attrs []attr, ctx *engine.Context) *Error {
	var targetingKey string
	for _, a := range attrs {
		name, v := a.name, a.value
		if field := standardField(ctx, name); field != nil || name == "targetingKey" {
			s, ok, err := a.text, true, error(nil)
			if !a.simple {
				s, ok, err = scalarString(v)
			}
			if err != nil || (!ok && len(v) > 0 && v[0] != 'n') {
				return errorf(http.StatusBadRequest, CodeInvalidCtx, "context attribute %q must be a string", name)
			}
			if name == "targetingKey" {
				targetingKey = s
			} else {
				*field = s
			}
			continue
		}
		s, ok, err := a.text, true, error(nil)
		if !a.simple {
			s, ok, err = propertyString(v)
		}
		if err != nil {
			return errorf(http.StatusBadRequest, CodeInvalidCtx, "context attribute %q could not be read: %v", name, err)
		}
		if !ok {
			continue
		}
		if ctx.Properties == nil {
			ctx.Properties = make(map[string]string, len(attrs))
		}
		ctx.Properties[name] = s
	}
	if ctx.UserID == "" {
		ctx.UserID = targetingKey
	}
	normaliseCurrentTime(ctx)
	return nil
}

// standardField returns Bunting's field for a context attribute name.
func standardField(ctx *engine.Context, name string) *string {
	switch name {
	case "userId":
		return &ctx.UserID
	case "sessionId":
		return &ctx.SessionID
	case "remoteAddress":
		return &ctx.RemoteAddress
	case "environment":
		return &ctx.Environment
	case "appName":
		return &ctx.AppName
	case "currentTime":
		return &ctx.CurrentTime
	}
	return nil
}

// scalarString turns a JSON string, number or boolean into a string; ok is
// false for null, objects and arrays.
func scalarString(v json.RawMessage) (string, bool, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "", false, nil
	}
	switch v[0] {
	case '"':
		if inner := v[1 : len(v)-1]; bytes.IndexByte(inner, '\\') < 0 {
			return string(inner), true, nil // no escapes: the text itself
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", false, err
		}
		return s, true, nil
	case 't', 'f':
		return string(v), true, nil
	case 'n', '{', '[':
		return "", false, nil
	}
	return string(v), true, nil // a number, as written
}

// propertyString is scalarString that also takes objects and arrays, as
// compact JSON.
func propertyString(v json.RawMessage) (string, bool, error) {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && (v[0] == '{' || v[0] == '[') {
		var b bytes.Buffer
		if err := json.Compact(&b, v); err != nil {
			return "", false, err
		}
		return b.String(), true, nil
	}
	return scalarString(v)
}

// normaliseCurrentTime keeps an RFC 3339 currentTime, turns a date, a time
// without zone (UTC) or epoch milliseconds into one, and drops anything
// else, as the proxy's other endpoints do.
func normaliseCurrentTime(ctx *engine.Context) {
	ctx.CurrentTime = strings.TrimSpace(ctx.CurrentTime)
	wire.NormaliseCurrentTime(ctx)
}
