package domain

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// The Unleash server checks constraint values with JavaScript libraries: a
// joi number and a joi date (whose strings go through the V8 engine's Date
// parser) and a strict semver parse. The functions in this file accept
// exactly the strings those accept, so that an admin call Unleash takes is
// taken here too and one it refuses is refused. TestConstraintRulesMatchUnleash
// checks them against Unleash's own validation code run by Node.

// jsSpace reports whether r is white space for JavaScript's \s and trim().
func jsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return 0x2000 <= r && r <= 0x200a
}

// jsLength is a string's length as JavaScript counts it (UTF-16 code units).
func jsLength(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool { return s != "" && strings.TrimLeft(s, "0123456789") == "" }

// decimalSyntax reports whether s is [+-]?(digits[.digits?] | .digits)
// followed by an optional exponent e[+-]?digits (either case).
func decimalSyntax(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
		if exp != "" && (exp[0] == '+' || exp[0] == '-') {
			exp = exp[1:]
		}
		if !isDigits(exp) {
			return false
		}
	}
	whole, frac, dot := strings.Cut(mant, ".")
	if !dot {
		return isDigits(whole)
	}
	return (whole == "" || isDigits(whole)) && (frac == "" || isDigits(frac)) && (whole != "" || frac != "")
}

// jsNumber reports whether joi's number() accepts the string s: a decimal
// numeral (white space around it allowed) whose value is a float64 that
// prints back with the same significant digits (joi refuses "unsafe"
// numbers that lose precision) and lies within ±(2^53 − 1).
func jsNumber(s string) bool {
	t := strings.TrimFunc(s, jsSpace)
	if !decimalSyntax(t) {
		return false
	}
	f, _ := strconv.ParseFloat(t, 64)
	if math.IsInf(f, 0) {
		return false
	}
	printed := jsNumberString(f)
	if strings.ContainsAny(t, "eE") {
		if significantDigits(t) != significantDigits(printed) {
			return false
		}
	} else if !strings.Contains(printed, "e") && printed != normalizeDecimal(t) {
		return false
	}
	return math.Abs(f) <= 1<<53-1
}

// jsNumberString prints f as JavaScript's Number.prototype.toString does:
// the shortest digits that read back as f, in plain notation from 1e-7 up
// to 1e21 and in exponent notation outside.
func jsNumberString(f float64) string {
	if f == 0 {
		return "0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	digits := strings.Replace(mant, ".", "", 1)
	e, _ := strconv.Atoi(exp)
	k, n := len(digits), e+1
	switch {
	case k <= n && n <= 21:
		return sign + digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return sign + digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return sign + "0." + strings.Repeat("0", -n) + digits
	}
	expSign := "+"
	if e < 0 {
		expSign, e = "-", -e
	}
	if k > 1 {
		digits = digits[:1] + "." + digits[1:]
	}
	return sign + digits + "e" + expSign + strconv.Itoa(e)
}

// significantDigits strips a numeral to its significant digits: no
// exponent, no decimal point, no leading sign and zeros, no trailing zeros.
func significantDigits(s string) string {
	if i := strings.LastIndexAny(s, "eE"); i >= 0 {
		rest := strings.TrimLeft(s[i+1:], "+-")
		if len(s[i+1:])-len(rest) <= 1 && isDigits(rest) {
			s = s[:i]
		}
	}
	s = strings.Replace(s, ".", "", 1)
	s = strings.TrimRight(s, "0")
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	return strings.TrimLeft(s, "0")
}

// normalizeDecimal writes a plain decimal numeral the way JavaScript prints
// its value, when no precision is lost: no plus sign, no leading zeros, no
// trailing fractional zeros or bare decimal point, "0" for "-0".
func normalizeDecimal(s string) string {
	s = strings.TrimPrefix(s, "+")
	if i := strings.LastIndexByte(s, '.'); i >= 0 && strings.Trim(s[i+1:], "0") == "" {
		s = s[:i]
	}
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimPrefix(s, "-")
	if strings.HasPrefix(body, ".") && !strings.Contains(body[1:], ".") {
		body = "0" + body
	}
	if trimmed := strings.TrimLeft(body, "0"); len(trimmed) < len(body) {
		if trimmed == "" || trimmed[0] < '0' || trimmed[0] > '9' {
			trimmed = "0" + trimmed
		}
		if trimmed[0] >= '0' && trimmed[0] <= '9' {
			body = trimmed
		}
	}
	if strings.Contains(body, ".") {
		body = strings.TrimRight(body, "0")
	}
	if neg {
		body = "-" + body
	}
	if body == "-0" {
		return "0"
	}
	return body
}

// maxTimeMillis is the largest distance from the epoch a JavaScript Date
// can hold.
const maxTimeMillis = 8.64e15

// jsDate reports whether joi's date() accepts the string s: a decimal
// numeral is read as milliseconds since the epoch, anything else as
// `new Date(s)` reads it (see v8Date).
func jsDate(s string) bool {
	if strings.TrimFunc(s, jsSpace) == "" {
		return false
	}
	if plainDecimal(s) {
		f, _ := strconv.ParseFloat(s, 64)
		return math.Abs(f) <= maxTimeMillis
	}
	return v8Date(s)
}

// plainDecimal reports whether s is [+-]?digits(.digits)?.
func plainDecimal(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	whole, frac, dot := strings.Cut(s, ".")
	return isDigits(whole) && (!dot || isDigits(frac))
}

var semverPattern = sync.OnceValue(func() *regexp.Regexp {
	const num = `(0|[1-9][0-9]*)`
	const pre = `(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)`
	const build = `[0-9a-zA-Z-]+`
	return regexp.MustCompile(`^` + num + `\.` + num + `\.` + num +
		`(?:-` + pre + `(?:\.` + pre + `)*)?(?:\+` + build + `(?:\.` + build + `)*)?$`)
})

// unleashSemver reports whether s is a SemVer 2.0 version exactly as
// written: no "v" prefix, no white space, at most 256 characters, and
// major, minor and patch within ±(2^53 − 1) (Unleash's strict parse).
func unleashSemver(s string) bool {
	if jsLength(s) > 256 {
		return false
	}
	m := semverPattern().FindStringSubmatch(s)
	if m == nil {
		return false
	}
	for _, part := range m[1:4] {
		if n, err := strconv.ParseUint(part, 10, 64); err != nil || n > 1<<53-1 {
			return false
		}
	}
	return true
}

// A date string is read the way V8 (the engine of Node, which runs
// Unleash) reads `new Date(string)`: first as an ECMAScript date-time
// string (YYYY-MM-DDTHH:mm:ss.sssZ and its shorter forms); what is left
// over, or a string of another shape, goes through the lenient legacy
// reader, which takes numbers, month names, AM/PM, time-zone names and
// offsets in many orders and ignores words before the first number and
// text in parentheses. The date must then fall within the range a
// JavaScript Date holds. Only the validity is computed here.

// dateTokenKind classifies one token of a date string.
type dateTokenKind int

const (
	tokEnd dateTokenKind = iota
	tokNumber
	tokSymbol // one of : - + . )
	tokWord
	tokSpace
	tokOther // any other character, or a parenthesized comment
)

// wordKind classifies a word of a date string.
type wordKind int

const (
	wordOther wordKind = iota
	wordMonth
	wordZone
	wordTimeSeparator // the T of an ISO date-time
	wordAMPM
)

type dateToken struct {
	kind   dateTokenKind
	value  int // a number (its first nine digits), a symbol, or a word's month, hour offset or zone hours
	length int // characters in a number or word
	word   wordKind
}

// is reports whether the token is the symbol sym.
func (t dateToken) is(sym byte) bool { return t.kind == tokSymbol && t.value == int(sym) }

// digits reports whether the token is a number written with n digits.
func (t dateToken) digits(n int) bool { return t.kind == tokNumber && t.length == n }

func (t dateToken) sign() bool { return t.is('+') || t.is('-') }

// signValue is 1 for '+' and -1 for '-'.
func (t dateToken) signValue() int {
	if t.is('+') {
		return 1
	}
	return -1
}

// zoneLetterZ reports whether the token is the single letter Z.
func (t dateToken) zoneLetterZ() bool { return t.isWord(wordZone) && t.length == 1 }

func (t dateToken) isWord(w wordKind) bool { return t.kind == tokWord && t.word == w }

func (t dateToken) month() bool { return t.kind == tokNumber && between(t.value, 1, 12) }

func (t dateToken) dayOfMonth() bool { return t.kind == tokNumber && between(t.value, 1, 31) }

func between(x, lo, hi int) bool { return lo <= x && x <= hi }

// dateWords maps the words a date may contain to their meaning: months by
// their first three letters (any longer word with those letters counts),
// the others written exactly.
var dateWords = map[string]struct {
	kind  wordKind
	value int
}{
	"jan": {wordMonth, 1}, "feb": {wordMonth, 2}, "mar": {wordMonth, 3}, "apr": {wordMonth, 4},
	"may": {wordMonth, 5}, "jun": {wordMonth, 6}, "jul": {wordMonth, 7}, "aug": {wordMonth, 8},
	"sep": {wordMonth, 9}, "oct": {wordMonth, 10}, "nov": {wordMonth, 11}, "dec": {wordMonth, 12},
	"am": {wordAMPM, 0}, "pm": {wordAMPM, 12},
	"ut": {wordZone, 0}, "utc": {wordZone, 0}, "z": {wordZone, 0}, "gmt": {wordZone, 0},
	"cdt": {wordZone, -5}, "cst": {wordZone, -6}, "edt": {wordZone, -4}, "est": {wordZone, -5},
	"mdt": {wordZone, -6}, "mst": {wordZone, -7}, "pdt": {wordZone, -7}, "pst": {wordZone, -8},
	"t": {wordTimeSeparator, 0},
}

// dateScanner splits a date string into tokens with one token of
// look-ahead. A NUL character ends the string, as it does for V8.
type dateScanner struct {
	s    string
	pos  int
	next dateToken
}

func newDateScanner(s string) *dateScanner {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	sc := &dateScanner{s: s}
	sc.next = sc.scan()
	return sc
}

func (sc *dateScanner) peek() dateToken { return sc.next }

func (sc *dateScanner) take() dateToken {
	t := sc.next
	sc.next = sc.scan()
	return t
}

// skip takes the next token when it is the symbol sym.
func (sc *dateScanner) skip(sym byte) bool {
	if sc.next.is(sym) {
		sc.take()
		return true
	}
	return false
}

func (sc *dateScanner) scan() dateToken {
	if sc.pos >= len(sc.s) {
		return dateToken{kind: tokEnd}
	}
	c := sc.s[sc.pos]
	switch {
	case '0' <= c && c <= '9':
		start, n := sc.pos, 0
		for sc.pos < len(sc.s) && '0' <= sc.s[sc.pos] && sc.s[sc.pos] <= '9' {
			if sc.pos-start < 9 {
				n = n*10 + int(sc.s[sc.pos]-'0')
			}
			sc.pos++
		}
		return dateToken{kind: tokNumber, value: n, length: sc.pos - start}
	case strings.IndexByte(":-+.)", c) >= 0:
		sc.pos++
		return dateToken{kind: tokSymbol, value: int(c), length: 1}
	case c >= 0x80 && sc.spaceAt(sc.pos) > 0:
		sc.pos += sc.spaceAt(sc.pos)
		return dateToken{kind: tokSpace}
	case c >= 'A':
		// Letters and every character from 'A' up, non-ASCII included
		// (white space excepted).
		start := sc.pos
		for sc.pos < len(sc.s) && sc.s[sc.pos] >= 'A' && (sc.s[sc.pos] < 0x80 || sc.spaceAt(sc.pos) == 0) {
			_, size := utf8.DecodeRuneInString(sc.s[sc.pos:])
			sc.pos += size
		}
		word := sc.s[start:sc.pos]
		t := dateToken{kind: tokWord, length: jsLength(word)}
		key := strings.ToLower(word)
		if len(key) > 3 {
			key = key[:3]
			if w, ok := dateWords[key]; ok && w.kind == wordMonth && isASCIILetters(word[:3]) {
				t.word, t.value = w.kind, w.value
			}
			return t
		}
		if w, ok := dateWords[key]; ok && isASCIILetters(word) {
			t.word, t.value = w.kind, w.value
		}
		return t
	case c == ' ' || ('\t' <= c && c <= '\r'):
		sc.pos++
		return dateToken{kind: tokSpace}
	case c == '(':
		depth := 0
		for sc.pos < len(sc.s) {
			switch sc.s[sc.pos] {
			case '(':
				depth++
			case ')':
				depth--
			}
			sc.pos++
			if depth == 0 {
				break
			}
		}
		return dateToken{kind: tokOther}
	}
	sc.pos++
	return dateToken{kind: tokOther}
}

// spaceAt is the size of the non-ASCII white space character at i, or 0.
// Line terminators (U+2028, U+2029) are not white space to V8's date
// reader.
func (sc *dateScanner) spaceAt(i int) int {
	r, size := utf8.DecodeRuneInString(sc.s[i:])
	if r >= 0x80 && r != 0x2028 && r != 0x2029 && jsSpace(r) {
		return size
	}
	return 0
}

func isASCIILetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// none marks a date or time component not given.
const none = math.MaxInt32

// dateParts collects the components of a date string as they are read.
type dateParts struct {
	day        []int // up to three numbers: year, month and day in some order
	namedMonth int
	iso        bool // the day numbers are year, month, day in that order

	time       []int // hour, minute, second, millisecond
	hourOffset int   // 0 for AM, 12 for PM

	zoneSign, zoneHour, zoneMinute int
}

func (p *dateParts) addDay(n int) bool {
	if len(p.day) == 3 {
		return false
	}
	p.day = append(p.day, n)
	return true
}

func (p *dateParts) addTime(n int) bool {
	if len(p.time) == 4 {
		return false
	}
	p.time = append(p.time, n)
	return true
}

// finishTime adds the last given time component; the rest are zero.
func (p *dateParts) finishTime(n int) bool {
	if !p.addTime(n) {
		return false
	}
	for len(p.time) < 4 {
		p.time = append(p.time, 0)
	}
	return true
}

// expectsTime reports whether n can be the next time component after an
// hour (minute, second, then millisecond).
func (p *dateParts) expectsTime(n int) bool {
	switch len(p.time) {
	case 1, 2:
		return between(n, 0, 59)
	case 3:
		return between(n, 0, 999)
	}
	return false
}

func (p *dateParts) setZone(hours int) {
	p.zoneSign, p.zoneHour, p.zoneMinute = 1, hours, 0
	if hours < 0 {
		p.zoneSign, p.zoneHour = -1, -hours
	}
}

func (p *dateParts) zoneIsUTC() bool { return p.zoneHour == 0 && p.zoneMinute == 0 }

func (p *dateParts) zoneExpectsMinute(n int) bool {
	return p.zoneHour != none && p.zoneMinute == none && between(n, 0, 59)
}

// v8Date reports whether `new Date(s)` is a valid date in V8.
func v8Date(s string) bool {
	p := &dateParts{namedMonth: none, hourOffset: none, zoneSign: none, zoneHour: none, zoneMinute: none}
	sc := newDateScanner(s)
	next, ok := readISODate(sc, p)
	if !ok {
		return false
	}
	if !readLegacyDate(sc, p, next) {
		return false
	}
	return p.valid()
}

// readISODate reads as much of an ECMAScript date-time string as the
// string holds. It returns the first token it could not use, for the
// legacy reader, or false when the string cannot be a date at all.
func readISODate(sc *dateScanner, p *dateParts) (dateToken, bool) {
	switch {
	case sc.peek().sign():
		sign := sc.take()
		if !sc.peek().digits(6) {
			return sign, true
		}
		year := sc.take().value
		if sign.is('-') && year == 0 {
			return sign, true // "-000000" is not a year; the digits are dropped
		}
		p.addDay(sign.signValue() * year)
	case sc.peek().digits(4):
		p.addDay(sc.take().value)
	default:
		return sc.take(), true
	}
	if sc.skip('-') {
		if !sc.peek().digits(2) || !sc.peek().month() {
			return sc.take(), true
		}
		p.addDay(sc.take().value)
		if sc.skip('-') {
			if !sc.peek().digits(2) || !sc.peek().dayOfMonth() {
				return sc.take(), true
			}
			p.addDay(sc.take().value)
		}
	}
	if !sc.peek().isWord(wordTimeSeparator) {
		if sc.peek().kind != tokEnd {
			return sc.take(), true
		}
	} else if !readISOTime(sc, p) {
		return dateToken{}, false
	}
	if p.zoneHour == none && len(p.time) == 0 {
		p.setZone(0) // a date without a time is UTC
	}
	p.iso = true
	return dateToken{kind: tokEnd}, true
}

// readISOTime reads THH:mm[:ss[.sss]][Z|±hh:mm|±hhmm] to the end of the
// string.
func readISOTime(sc *dateScanner, p *dateParts) bool {
	sc.take() // T
	if !sc.peek().digits(2) || !between(sc.peek().value, 0, 24) {
		return false
	}
	hour24 := sc.peek().value == 24
	p.addTime(sc.take().value)
	if !sc.skip(':') || !sc.peek().digits(2) || !between(sc.peek().value, 0, 59) || (hour24 && sc.peek().value > 0) {
		return false
	}
	p.addTime(sc.take().value)
	if sc.skip(':') {
		if !sc.peek().digits(2) || !between(sc.peek().value, 0, 59) || (hour24 && sc.peek().value > 0) {
			return false
		}
		p.addTime(sc.take().value)
		if sc.skip('.') {
			if sc.peek().kind != tokNumber || (hour24 && sc.peek().value > 0) {
				return false
			}
			p.addTime(milliseconds(sc.take()))
		}
	}
	switch {
	case sc.peek().zoneLetterZ():
		sc.take()
		p.setZone(0)
	case sc.peek().sign():
		p.zoneSign = sc.take().signValue()
		if sc.peek().digits(4) {
			hhmm := sc.take().value
			if !between(hhmm/100, 0, 23) || !between(hhmm%100, 0, 59) {
				return false
			}
			p.zoneHour, p.zoneMinute = hhmm/100, hhmm%100
			break
		}
		if !sc.peek().digits(2) || !between(sc.peek().value, 0, 23) {
			return false
		}
		p.zoneHour = sc.take().value
		if !sc.skip(':') || !sc.peek().digits(2) || !between(sc.peek().value, 0, 59) {
			return false
		}
		p.zoneMinute = sc.take().value
	}
	return sc.peek().kind == tokEnd
}

// milliseconds reads a fraction of a second from its first three digits.
func milliseconds(t dateToken) int {
	n, length := t.value, min(t.length, 9)
	switch {
	case length == 1:
		return n * 100
	case length == 2:
		return n * 10
	}
	for ; length > 3; length-- {
		n /= 10
	}
	return n
}

// readLegacyDate reads the rest of the string, starting with tok, the
// lenient way.
func readLegacyDate(sc *dateScanner, p *dateParts, tok dateToken) bool {
	sawNumber := len(p.day) > 0
	for ; tok.kind != tokEnd; tok = sc.take() {
		switch {
		case tok.kind == tokNumber:
			sawNumber = true
			if !p.legacyNumber(sc, tok.value) {
				return false
			}
		case tok.kind == tokWord:
			switch {
			case tok.word == wordAMPM && len(p.time) > 0:
				p.hourOffset = tok.value
			case tok.word == wordMonth:
				p.namedMonth = tok.value
				sc.skip('-')
			case tok.word == wordZone && sawNumber:
				p.setZone(tok.value)
			case sawNumber || sc.peek().kind == tokNumber:
				// Other words may only come before the first number,
				// and apart from it.
				return false
			}
		case tok.sign() && (p.zoneIsUTC() || len(p.time) > 0):
			// A UTC offset: after a time or a UTC zone name.
			p.zoneSign = tok.signValue()
			n, length := 0, 0
			if sc.peek().kind == tokNumber {
				num := sc.take()
				n, length = num.value, num.length
			}
			sawNumber = true
			switch {
			case sc.peek().is(':'):
				p.zoneHour, p.zoneMinute = n, none
			case length == 1 || length == 2:
				p.zoneHour, p.zoneMinute = n, 0
			case length == 3 || length == 4:
				p.zoneHour, p.zoneMinute = n/100, n%100
			default:
				return false
			}
		case (tok.sign() || tok.is(')')) && sawNumber:
			return false
		}
	}
	return true
}

// legacyNumber places a number read by the legacy reader: a time
// component when a colon or period follows it or a time is under way, the
// minutes of a UTC offset, or else a day component.
func (p *dateParts) legacyNumber(sc *dateScanner, n int) bool {
	if sc.skip(':') {
		if sc.skip(':') {
			if len(p.time) > 0 {
				return false
			}
			p.addTime(n)
			p.addTime(0)
			return true
		}
		if !p.addTime(n) {
			return false
		}
		if sc.peek().is('.') {
			sc.take()
		}
		return true
	}
	if sc.skip('.') && p.expectsTime(n) {
		p.addTime(n)
		if sc.peek().kind != tokNumber {
			return false
		}
		p.finishTime(milliseconds(sc.take())) // a fifth component is dropped
		return true
	}
	if p.zoneExpectsMinute(n) {
		p.zoneMinute = n
		return true
	}
	if p.expectsTime(n) {
		p.finishTime(n)
		next := sc.peek()
		return next.kind == tokEnd || next.kind == tokSpace || next.zoneLetterZ() || next.sign()
	}
	if !p.addDay(n) {
		return false
	}
	sc.skip('-')
	return true
}

// valid composes the date and reports whether it is one a JavaScript Date
// can hold. A date without a zone is read in UTC (the zone of the servers
// this is compared with; it only matters at the very ends of the range).
func (p *dateParts) valid() bool {
	if len(p.day) == 0 {
		return false
	}
	for len(p.day) < 3 {
		p.day = append(p.day, 1)
	}
	year, month, day := 0, 0, 0
	switch {
	case p.namedMonth == none && (p.iso || !between(p.day[0], 1, 31)):
		year, month, day = p.day[0], p.day[1], p.day[2]
	case p.namedMonth == none:
		month, day, year = p.day[0], p.day[1], p.day[2]
	case !between(p.day[0], 1, 31):
		month, year, day = p.namedMonth, p.day[0], p.day[1]
	default:
		month, day, year = p.namedMonth, p.day[0], p.day[1]
	}
	if !p.iso {
		switch {
		case between(year, 0, 49):
			year += 2000
		case between(year, 50, 99):
			year += 1900
		}
	}
	if !between(month, 1, 12) || !between(day, 1, 31) {
		return false
	}
	for len(p.time) < 4 {
		p.time = append(p.time, 0)
	}
	hour, minute, second, milli := p.time[0], p.time[1], p.time[2], p.time[3]
	if p.hourOffset != none {
		if !between(hour, 0, 12) {
			return false
		}
		hour = hour%12 + p.hourOffset
	}
	if !between(hour, 0, 23) || !between(minute, 0, 59) || !between(second, 0, 59) || !between(milli, 0, 999) {
		if hour != 24 || minute != 0 || second != 0 || milli != 0 {
			return false
		}
	}
	offset := 0
	if p.zoneSign != none {
		h, m := p.zoneHour, p.zoneMinute
		if h == none {
			h = 0
		}
		if m == none {
			m = 0
		}
		// V8 adds these up in 32-bit unsigned arithmetic and refuses a
		// total beyond its small-integer range.
		total := uint32(h)*3600 + uint32(m)*60
		if total > math.MaxInt32 {
			return false
		}
		offset = p.zoneSign * int(total)
	}
	if year < -1_000_000 || year > 1_000_000 {
		return false
	}
	days := time.Date(year, time.Month(month), 1, 0, 0, 0, 0, time.UTC).Unix()/86400 + int64(day-1)
	ms := float64(days)*86400000 + float64(((hour*60+minute)*60+second)*1000+milli) - float64(offset)*1000
	return math.Abs(ms) <= maxTimeMillis
}
