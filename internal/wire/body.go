package wire

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
)

// ParsePostBody reads the body of POST /proxy, {toggles, context}, with a
// small scanner instead of encoding/json: this is the hot path of POST
// requests. names is nil when no toggle list (or an empty one) was given,
// meaning "all". Scalars in the context are taken as strings (numbers and
// booleans in their JSON text), properties must be an object of scalars,
// and unknown context keys become properties unless properties names
// them. Malformed JSON is a 400 whose message comes from encoding/json.
// The names are appended to buf.
func ParsePostBody(body []byte, ctx *engine.Context, buf []string) (names []string, err error) {
	// One copy of the body as a string: the names and context values are
	// substrings of it rather than an allocation each.
	s := scanner{b: body, src: string(body)}
	s.ws()
	if s.eof() {
		return nil, nil
	}
	if s.peek() != '{' {
		if !json.Valid(body) {
			return nil, SyntaxError(body)
		}
		return nil, apierr.Validation("the request body must be a JSON object")
	}
	var verr error
	var extra []string // unknown context keys and values, in pairs
	names, extra, verr = s.body(ctx, buf)
	if s.err {
		return nil, SyntaxError(body)
	}
	s.ws()
	if !s.eof() {
		return nil, SyntaxError(body)
	}
	if verr != nil {
		return nil, verr
	}
	for i := 0; i+1 < len(extra); i += 2 {
		if _, exists := ctx.Properties[extra[i]]; !exists {
			setProperty(ctx, extra[i], extra[i+1])
		}
	}
	if len(names) == 0 {
		names = nil
	}
	return dedupe(names), nil
}

// MaxToggleNames is the most names a POST's toggle list may hold (a 400
// beyond): each name costs an evaluation and an element of the answer, so
// the work and memory of one request stay bounded whatever the body limit.
const MaxToggleNames = 1000

var errTooManyToggles = apierr.Validation("toggles may list at most %d names", MaxToggleNames)

// dedupe removes repeated names, keeping the first of each in place: each
// flag is answered once. (The reference answers a repeated name again;
// SDKs read the answer as a map from name to toggle.)
func dedupe(names []string) []string {
	if len(names) < 2 {
		return names
	}
	out := names[:1]
	var seen map[string]struct{}
	if len(names) > 16 {
		seen = make(map[string]struct{}, len(names))
		seen[names[0]] = struct{}{}
	}
next:
	for _, n := range names[1:] {
		if seen != nil {
			if _, dup := seen[n]; dup {
				continue
			}
			seen[n] = struct{}{}
		} else {
			for _, kept := range out {
				if kept == n {
					continue next
				}
			}
		}
		out = append(out, n)
	}
	clear(names[len(out):]) // the dropped substrings are not kept alive
	return out
}

// scanner walks a JSON document; err is set on a syntax error, after
// which every method returns quickly.
type scanner struct {
	b []byte
	// src is b as a string; strings without escapes are slices of it.
	src string
	i   int
	err bool
}

func (s *scanner) eof() bool  { return s.i >= len(s.b) }
func (s *scanner) peek() byte { return s.b[s.i] }

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// expect consumes c after whitespace.
func (s *scanner) expect(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	s.err = true
	return false
}

// object calls member for each key; member must consume the value.
func (s *scanner) object(member func(key string)) {
	if !s.expect('{') {
		return
	}
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return
	}
	for !s.err {
		s.ws()
		key, ok := s.str()
		if !ok || !s.expect(':') {
			s.err = true
			return
		}
		s.ws()
		member(key)
		if s.err {
			return
		}
		s.ws()
		if s.eof() {
			s.err = true
			return
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return
		default:
			s.err = true
			return
		}
	}
}

// body reads the top-level object.
func (s *scanner) body(ctx *engine.Context, buf []string) (names, extra []string, verr error) {
	names = buf[:0]
	s.object(func(key string) {
		switch key {
		case "toggles":
			names = names[:0]
			if s.literal("null") {
				return
			}
			if s.eof() || s.peek() != '[' {
				s.skip()
				verr = firstErr(verr, apierr.Validation("toggles must be an array of strings"))
				return
			}
			names, verr = s.stringArray(names, verr)
		case "context":
			if s.literal("null") {
				return
			}
			if s.eof() || s.peek() != '{' {
				s.skip()
				verr = firstErr(verr, apierr.Validation("context must be an object"))
				return
			}
			extra, verr = s.context(ctx, extra, verr)
		default:
			s.skip()
		}
	})
	return names, extra, verr
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func (s *scanner) stringArray(names []string, verr error) ([]string, error) {
	s.i++ // [
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return names, verr
	}
	for !s.err {
		s.ws()
		if s.eof() {
			s.err = true
			break
		}
		if s.peek() == '"' {
			v, _ := s.str()
			if len(names) < MaxToggleNames {
				names = append(names, v)
			} else {
				verr = firstErr(verr, errTooManyToggles)
			}
		} else {
			s.skip()
			verr = firstErr(verr, apierr.Validation("toggles must be an array of strings"))
		}
		s.ws()
		if s.eof() {
			s.err = true
			break
		}
		if s.b[s.i] == ']' {
			s.i++
			break
		}
		if s.b[s.i] != ',' {
			s.err = true
			break
		}
		s.i++
	}
	return names, verr
}

// context reads the context object into ctx; unknown keys are returned in
// extra to become properties once properties itself has been read.
func (s *scanner) context(ctx *engine.Context, extra []string, verr error) ([]string, error) {
	s.object(func(key string) {
		if key == "properties" {
			verr = s.properties(ctx, verr)
			return
		}
		v, present, ok := s.scalar()
		if !ok {
			verr = firstErr(verr, apierr.Validation("context.%s must be a string", key))
			return
		}
		if !present {
			return
		}
		if f, _ := standardField(ctx, key); f != nil {
			*f = v
			return
		}
		extra = append(extra, key, v)
	})
	return extra, verr
}

func (s *scanner) properties(ctx *engine.Context, verr error) error {
	if s.literal("null") {
		return verr
	}
	if s.eof() || s.peek() != '{' {
		s.skip()
		return firstErr(verr, apierr.Validation("context.properties must be an object"))
	}
	s.object(func(key string) {
		v, present, ok := s.scalar()
		if !ok {
			verr = firstErr(verr, apierr.Validation("context.properties.%s must be a string", key))
			return
		}
		if present {
			setProperty(ctx, key, v)
		}
	})
	return verr
}

// scalar reads a value as a string: strings as themselves, numbers and
// booleans as their text; null and "" are absent. An object or array is
// skipped and reported as not a scalar.
func (s *scanner) scalar() (v string, present, ok bool) {
	if s.eof() {
		s.err = true
		return "", false, true
	}
	switch c := s.peek(); {
	case c == '"':
		v, _ = s.str()
		return v, v != "", true
	case c == '{' || c == '[':
		s.skip()
		return "", false, false
	case s.literal("null"):
		return "", false, true
	case s.literal("true"):
		return "true", true, true
	case s.literal("false"):
		return "false", true, true
	default:
		start := s.i
		s.number()
		return s.src[start:s.i], true, true
	}
}

// literal consumes word if it is next.
func (s *scanner) literal(word string) bool {
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// str reads a string; escapes and non-ASCII text are decoded by
// encoding/json so the result is exactly what it would give.
func (s *scanner) str() (string, bool) {
	if s.eof() || s.b[s.i] != '"' {
		s.err = true
		return "", false
	}
	start := s.i
	s.i++
	simple := true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			if simple {
				return s.src[start+1 : s.i-1], true
			}
			var out string
			if json.Unmarshal(s.b[start:s.i], &out) != nil {
				s.err = true
				return "", false
			}
			return out, true
		case c == '\\':
			simple = false
			s.i += 2
		case c < 0x20:
			s.err = true
			return "", false
		case c >= utf8.RuneSelf:
			simple = false
			s.i++
		default:
			s.i++
		}
	}
	s.err = true
	return "", false
}

// number consumes a JSON number.
func (s *scanner) number() {
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.i < len(s.b) && s.b[s.i] >= '1' && s.b[s.i] <= '9':
		s.digits()
	default:
		s.err = true
		return
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			s.err = true
			return
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			s.err = true
			return
		}
	}
	if s.i == start {
		s.err = true
	}
}

func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// skip consumes any value, checking its syntax.
func (s *scanner) skip() {
	s.ws()
	if s.eof() {
		s.err = true
		return
	}
	switch c := s.peek(); {
	case c == '"':
		s.str()
	case c == '{':
		s.object(func(string) { s.skip() })
	case c == '[':
		s.i++
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return
		}
		for !s.err {
			s.skip()
			s.ws()
			if s.eof() {
				s.err = true
				return
			}
			if s.b[s.i] == ']' {
				s.i++
				return
			}
			if s.b[s.i] != ',' {
				s.err = true
				return
			}
			s.i++
		}
	case s.literal("null"), s.literal("true"), s.literal("false"):
	default:
		s.number()
	}
}
