package ofrep

import "strings"

// A request body's attributes without encoding/json: bulk evaluation is
// OFREP's hot path, and decoding {"context":{…}} through reflection into a
// map of raw messages cost about a tenth of its time. scanRequest reads the
// bodies OpenFeature providers send (an object, its context an object of
// strings, numbers, booleans and nulls, each key once, no escapes in keys
// or strings) in one pass; anything else, including every malformed body,
// goes to encoding/json (decodeRequest), which gives the same attributes
// or the error message, so both paths answer alike.

// attr is a context attribute as sent: its name and its JSON value; text
// is the value of a string without escapes (then simple is set).
type attr struct {
	name   string
	value  []byte
	text   string
	simple bool
}

// maxScannedAttrs bounds the attributes scanRequest checks for repeated
// names (pair by pair); a larger context goes to encoding/json.
const maxScannedAttrs = 64

// scanRequest appends the attributes of body's context to attrs; ok is
// false when body is not one of the simple bodies it reads (see above).
// Names and texts are substrings of src, which is string(body).
func scanRequest(body []byte, src string, attrs []attr) (_ []attr, ok bool) {
	s := scan{b: body}
	s.ws()
	if !s.next('{') {
		return attrs, false
	}
	s.ws()
	if s.next('}') {
		return attrs, s.end()
	}
	sawContext := false
	for {
		s.ws()
		k0, k1, ascii := s.str()
		if !ascii || !s.colon() {
			return attrs, false
		}
		switch key := src[k0:k1]; {
		case key == "context":
			if sawContext {
				return attrs, false // encoding/json merges repeated objects
			}
			sawContext = true
			if !s.literal("null") {
				if attrs, ok = s.context(src, attrs); !ok {
					return attrs, false
				}
			}
		case strings.EqualFold(key, "context"):
			return attrs, false // encoding/json matches field names in any case
		default:
			if s.at('"') {
				if s.str(); s.bad {
					return attrs, false
				}
			} else if !s.scalar() {
				return attrs, false
			}
		}
		s.ws()
		if s.next('}') {
			break
		}
		if !s.next(',') {
			return attrs, false
		}
	}
	if !s.end() || len(attrs) > maxScannedAttrs {
		return attrs, false
	}
	for i := range attrs {
		for j := range i {
			if attrs[i].name == attrs[j].name {
				return attrs, false // the last one wins in encoding/json's map
			}
		}
	}
	return attrs, true
}

// context reads the context object's attributes.
func (s *scan) context(src string, attrs []attr) ([]attr, bool) {
	if !s.next('{') {
		return attrs, false
	}
	s.ws()
	if s.next('}') {
		return attrs, true
	}
	for {
		s.ws()
		k0, k1, ascii := s.str()
		if !ascii || !s.colon() {
			return attrs, false
		}
		a := attr{name: src[k0:k1]}
		start := s.i
		if s.at('"') {
			v0, v1, _ := s.str()
			if s.bad {
				return attrs, false
			}
			a.text, a.simple = src[v0:v1], true
		} else if !s.scalar() {
			return attrs, false
		}
		a.value = s.b[start:s.i]
		attrs = append(attrs, a)
		s.ws()
		if s.next('}') {
			return attrs, true
		}
		if !s.next(',') {
			return attrs, false
		}
	}
}

// scan walks a body; bad is set when it meets what it does not read.
type scan struct {
	b   []byte
	i   int
	bad bool
}

// ws consumes JSON whitespace.
func (s *scan) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *scan) at(c byte) bool { return s.i < len(s.b) && s.b[s.i] == c }

// next consumes c if it is next.
func (s *scan) next(c byte) bool {
	if s.at(c) {
		s.i++
		return true
	}
	return false
}

// colon consumes the colon after a key and the whitespace around it.
func (s *scan) colon() bool {
	s.ws()
	ok := s.next(':')
	s.ws()
	return ok
}

func (s *scan) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// str reads a string without escapes and returns where its text is; ascii
// is false for anything else or a string with a byte past ASCII (still
// read: such a value is sent as it is, but a key would be decoded).
func (s *scan) str() (start, end int, ascii bool) {
	if !s.next('"') {
		s.bad = true
		return 0, 0, false
	}
	start, ascii = s.i, true
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return start, s.i - 1, ascii
		case c == '\\' || c < 0x20:
			s.bad = true
			return 0, 0, false
		case c >= 0x80:
			ascii = false
		}
	}
	s.bad = true
	return 0, 0, false
}

// literal consumes word if it is next.
func (s *scan) literal(word string) bool {
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// scalar consumes true, false, null or a number.
func (s *scan) scalar() bool {
	if s.literal("true") || s.literal("false") || s.literal("null") {
		return true
	}
	s.next('-')
	switch {
	case s.next('0'):
	case s.i < len(s.b) && s.b[s.i] >= '1' && s.b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.next('.') && !s.digits() {
		return false
	}
	if s.next('e') || s.next('E') {
		if !s.next('+') {
			s.next('-')
		}
		return s.digits()
	}
	return true
}

// digits consumes one or more digits.
func (s *scan) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}
