package usage

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fastjson"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
)

// Metrics reports are the API's most frequent write, so they are read with
// fastjson, which parses a body into a reusable tree without allocating,
// instead of encoding/json's reflection into maps (a tenth of the CPU for a
// 50-flag report). Each flag and variant name is looked up in the
// configuration while the body is walked; only the known ones are kept,
// under the configuration's own strings. The messages are httpjson's.

// parsers and reports are reused between reports.
var (
	parsers fastjson.ParserPool
	reports = sync.Pool{New: func() any { return new(report) }}
)

// report is a decoded metrics report.
type report struct {
	app, instance, sdk string
	stop               *time.Time
	known              []knownCount
	// variants holds the known flags' variant counts, each flag's from
	// its vFrom to its vTo.
	variants []variantCount
}

// knownCount is a reported flag the token sees, by its configured name.
type knownCount struct {
	flag       string
	yes, no    int64
	vFrom, vTo int
}

type variantCount struct {
	name string
	n    int64
}

// release returns r to the pool.
func (r *report) release() {
	*r = report{known: r.known[:0], variants: r.variants[:0]}
	reports.Put(r)
}

// decodeMetrics reads a metrics report (MetricsBody) and keeps the counts
// of the flags and variants flags knows. Like JSON.parse, a later
// property of the same name wins. The caller releases the report.
func decodeMetrics(body []byte, flags Flags) (*report, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, httpjson.EmptyBody()
	}
	if err := httpjson.CheckText(body); err != nil {
		return nil, err
	}
	p := parsers.Get()
	defer parsers.Put(p)
	v, err := p.ParseBytes(body)
	if err != nil {
		return nil, httpjson.SyntaxError(err.Error())
	}
	top, err := v.Object()
	if err != nil {
		return nil, httpjson.DocumentTypeError("object", typeName(v))
	}
	r := reports.Get().(*report)
	top.Visit(func(key []byte, v *fastjson.Value) {
		if err != nil {
			return
		}
		switch string(key) {
		case "appName":
			r.app, err = text(v, "appName")
		case "instanceId":
			r.instance, err = text(v, "instanceId")
		case "sdkVersion":
			r.sdk, err = text(v, "sdkVersion")
		case "bucket":
			err = decodeBucket(v, flags, r)
		}
	})
	if err != nil {
		r.release()
		return nil, err
	}
	return r, nil
}

// decodeBucket reads the bucket: its stop time and the known counts.
func decodeBucket(v *fastjson.Value, flags Flags, r *report) error {
	if v.Type() == fastjson.TypeNull {
		return nil
	}
	b, err := v.Object()
	if err != nil {
		return httpjson.PropertyTypeError("bucket", typeName(v))
	}
	r.stop, r.known, r.variants = nil, r.known[:0], r.variants[:0]
	b.Visit(func(key []byte, v *fastjson.Value) {
		if err != nil {
			return
		}
		switch string(key) {
		case "start":
			_, err = timeOf(v, "bucket.start")
		case "stop":
			r.stop, err = timeOf(v, "bucket.stop")
		case "toggles":
			r.known, r.variants = r.known[:0], r.variants[:0]
			err = decodeToggles(v, flags, r)
		}
	})
	return err
}

// decodeToggles reads each flag's counts, checking them all and keeping
// those of the known flags in r.
func decodeToggles(v *fastjson.Value, flags Flags, r *report) error {
	if v.Type() == fastjson.TypeNull {
		return nil
	}
	ts, err := v.Object()
	if err != nil {
		return httpjson.PropertyTypeError("bucket.toggles", typeName(v))
	}
	ts.Visit(func(name []byte, v *fastjson.Value) {
		if err == nil {
			err = decodeToggle(name, v, flags, r)
		}
	})
	if err != nil {
		return err
	}
	r.known = lastOfEach(r.known, func(k knownCount) string { return k.flag })
	return nil
}

// decodeToggle reads one flag's counts, adding them to r when the token
// sees the flag.
func decodeToggle(name []byte, v *fastjson.Value, flags Flags, r *report) error {
	if v.Type() == fastjson.TypeNull {
		return nil
	}
	o, err := v.Object()
	if err != nil {
		return httpjson.PropertyTypeError("bucket.toggles."+string(name), typeName(v))
	}
	flag, known := flags.Flag(name)
	k := knownCount{vFrom: len(r.variants), vTo: len(r.variants)}
	o.Visit(func(key []byte, v *fastjson.Value) {
		if err != nil {
			return
		}
		switch string(key) {
		case "yes", "no":
			n, valid := count(v)
			if !valid {
				err = countError(v, "bucket.toggles."+string(name)+"."+string(key))
			} else if key[0] == 'y' {
				k.yes = n
			} else {
				k.no = n
			}
		case "variants":
			r.variants = r.variants[:k.vFrom] // a repeated "variants": the last wins
			err = decodeVariants(v, name, flag, known, r)
			k.vTo = len(r.variants)
		}
	})
	switch {
	case err != nil:
		return err
	case k.yes < 0 || k.no < 0:
		return apierr.Validation("The `bucket.toggles.%s` counts must not be negative.", name)
	case !known:
		return nil
	}
	k.flag = flag.Name
	vs := lastOfEach(r.variants[k.vFrom:k.vTo], func(c variantCount) string { return c.name })
	k.vTo = k.vFrom + len(vs)
	r.variants = r.variants[:k.vTo]
	r.known = append(r.known, k)
	return nil
}

// decodeVariants reads a flag's variant counts, adding those of its
// variants to r.variants when the flag is known.
func decodeVariants(v *fastjson.Value, flagName []byte, flag *KnownFlag, known bool, r *report) error {
	if v.Type() == fastjson.TypeNull {
		return nil
	}
	o, err := v.Object()
	if err != nil {
		return httpjson.PropertyTypeError("bucket.toggles."+string(flagName)+".variants", typeName(v))
	}
	o.Visit(func(key []byte, v *fastjson.Value) {
		if err != nil {
			return
		}
		n, valid := count(v)
		switch {
		case !valid:
			err = countError(v, "bucket.toggles."+string(flagName)+".variants."+string(key))
			return
		case n < 0:
			err = apierr.Validation("The `bucket.toggles.%s.variants.%s` count must not be negative.", flagName, key)
			return
		case !known:
			return
		}
		if name, ok := flag.variant(key); ok {
			r.variants = append(r.variants, variantCount{name, n})
		}
	})
	return err
}

// lastOfEach keeps the last of the entries with the same name, in name
// order (names repeat only in bodies with repeated properties).
func lastOfEach[T any](s []T, name func(T) string) []T {
	if len(s) < 2 {
		return s
	}
	slices.SortStableFunc(s, func(a, b T) int { return strings.Compare(name(a), name(b)) })
	out := s[:0]
	for i, e := range s {
		if i+1 < len(s) && name(s[i+1]) == name(e) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// text reads a string property (null: "").
func text(v *fastjson.Value, prop string) (string, error) {
	switch v.Type() {
	case fastjson.TypeNull:
		return "", nil
	case fastjson.TypeString:
		b, _ := v.StringBytes()
		return string(b), nil
	}
	return "", httpjson.PropertyTypeError(prop, typeName(v))
}

// count reads a whole-number property (null: 0); false when it is not
// one (countError says why).
func count(v *fastjson.Value) (int64, bool) {
	switch v.Type() {
	case fastjson.TypeNull:
		return 0, true
	case fastjson.TypeNumber:
		n, err := v.Int64()
		return n, err == nil
	}
	return 0, false
}

// countError is the 400 for a count that is not a whole number.
func countError(v *fastjson.Value, prop string) error {
	if v.Type() == fastjson.TypeNumber {
		return httpjson.WholeNumberError(prop, "number "+v.String())
	}
	return httpjson.PropertyTypeError(prop, typeName(v))
}

// timeOf reads a date-time property as Time does: an RFC 3339 string,
// unix milliseconds or null.
func timeOf(v *fastjson.Value, prop string) (*time.Time, error) {
	switch v.Type() {
	case fastjson.TypeNull:
		return nil, nil
	case fastjson.TypeString:
		b, _ := v.StringBytes()
		t, err := time.Parse(time.RFC3339Nano, string(b))
		if err != nil {
			return nil, apierr.Validation("The `%s` property: %q is not an RFC 3339 date-time.", prop, b)
		}
		return &t, nil
	case fastjson.TypeNumber:
		ms, err := v.Float64()
		if err != nil || math.IsNaN(ms) || ms < minMillis || ms > maxMillis {
			return nil, apierr.Validation("The `%s` property: %s milliseconds is outside the years 0 to 9999.", prop, v.String())
		}
		t := time.UnixMilli(int64(ms)).UTC()
		return &t, nil
	}
	return nil, httpjson.PropertyTypeError(prop, typeName(v))
}

// typeName names a value's type as encoding/json's errors do.
func typeName(v *fastjson.Value) string {
	return cmp.Or(map[fastjson.Type]string{fastjson.TypeObject: "object", fastjson.TypeArray: "array", fastjson.TypeString: "string",
		fastjson.TypeNumber: "number", fastjson.TypeTrue: "bool", fastjson.TypeFalse: "bool", fastjson.TypeNull: "null"}[v.Type()], "value")
}
