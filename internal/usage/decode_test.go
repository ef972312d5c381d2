package usage

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// testFlags knows f1 (variants blue, green) and f2 (no variants).
type testFlags struct{}

var (
	f1 = &KnownFlag{Name: "f1", Variants: []string{"blue", "green"}}
	f2 = &KnownFlag{Name: "f2"}
)

func (testFlags) Flag(name []byte) (*KnownFlag, bool) {
	switch string(name) {
	case "f1":
		return f1, true
	case "f2":
		return f2, true
	}
	return nil, false
}

// summary renders what a report keeps: app, instance, sdk, stop and each
// known flag's counts with its variants.
func summary(r *report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s/%s", r.app, r.instance, r.sdk)
	if r.stop != nil {
		fmt.Fprintf(&b, " stop %s", r.stop.UTC().Format("2006-01-02T15:04:05Z"))
	}
	for _, k := range r.known {
		fmt.Fprintf(&b, " %s:%d/%d", k.flag, k.yes, k.no)
		for _, v := range r.variants[k.vFrom:k.vTo] {
			fmt.Fprintf(&b, ",%s=%d", v.name, v.n)
		}
	}
	return b.String()
}

// The metrics decoder keeps the known flags and variants, takes the last
// of repeated properties as JSON.parse does, accepts what SDKs send (null
// for absent values, milliseconds for times, properties it does not use),
// and answers bad input with a 400 naming the property.
func TestDecodeMetrics(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"appName":"a","instanceId":"i","sdkVersion":"s","bucket":{"start":"2026-01-01T00:00:00Z","stop":"2026-01-01T00:01:00Z",
			"toggles":{"f1":{"yes":3,"no":1,"variants":{"blue":2,"made-up":9,"disabled":1}},"nope":{"yes":5},"f2":{"yes":1,"no":0,"variants":null}}}}`,
			"a/i/s stop 2026-01-01T00:01:00Z f1:3/1,blue=2,disabled=1 f2:1/0"},
		{`{"appName":"a","yggdrasilVersion":null,"platformName":"node","bucket":{"stop":1767225600000,"toggles":{"f2":{"yes":null}}}}`,
			"a// stop 2026-01-01T00:00:00Z f2:0/0"},
		{`{"appName":"a","bucket":null}`, "a//"},
		{`{"appName":"a","appName":"b","bucket":{"toggles":{"f1":{"yes":1,"variants":{"blue":1,"blue":4}},"f1":{"yes":2,"yes":7,"variants":{"green":3}}}}}`,
			"b// f1:7/0,green=3"},
		{`{"appName":"a","bucket":{"toggles":{"f1":{"yes":1,"variants":{"blue":1}},"f2":{"no":2},"f1":{"no":5}}}}`, "a// f1:0/5 f2:0/2"},
	} {
		r, err := decodeMetrics([]byte(c.body), testFlags{})
		if err != nil {
			t.Errorf("%s: %v", c.body, err)
			continue
		}
		if got := summary(r); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.body, got, c.want)
		}
		r.release()
	}
	for _, c := range []struct{ body, message string }{
		{``, "The request body is required but was empty."},
		{`  `, "The request body is required but was empty."},
		{`{"appName":`, "The request body is not valid JSON"},
		{`{"appName":"a"} x`, "The request body is not valid JSON"},
		{`[1]`, "The request body must be a JSON object, not array."},
		{`{"appName":5}`, "The `appName` property must be of another type; you sent number."},
		{`{"appName":"a","bucket":[]}`, "The `bucket` property must be of another type; you sent array."},
		{`{"appName":"a","bucket":{"stop":"yesterday"}}`, "The `bucket.stop` property: \"yesterday\" is not an RFC 3339 date-time."},
		{`{"appName":"a","bucket":{"start":1e300}}`, "The `bucket.start` property: 1e300 milliseconds is outside the years 0 to 9999."},
		{`{"appName":"a","bucket":{"toggles":"f1"}}`, "The `bucket.toggles` property must be of another type; you sent string."},
		{`{"appName":"a","bucket":{"toggles":{"f1":true}}}`, "The `bucket.toggles.f1` property must be of another type; you sent bool."},
		{`{"appName":"a","bucket":{"toggles":{"f1":{"yes":1.5}}}}`, "The `bucket.toggles.f1.yes` property must be a whole number from -9223372036854775808 to 9223372036854775807; you sent number 1.5."},
		{`{"appName":"a","bucket":{"toggles":{"f1":{"no":9223372036854775808}}}}`, "The `bucket.toggles.f1.no` property must be a whole number"},
		{`{"appName":"a","bucket":{"toggles":{"x":{"yes":"1"}}}}`, "The `bucket.toggles.x.yes` property must be of another type; you sent string."},
		{`{"appName":"a","bucket":{"toggles":{"whatever":{"no":-1}}}}`, "The `bucket.toggles.whatever` counts must not be negative."},
		{`{"appName":"a","bucket":{"toggles":{"f1":{"variants":{"v":-1}}}}}`, "The `bucket.toggles.f1.variants.v` count must not be negative."},
		{`{"appName":"a","bucket":{"toggles":{"f1":{"variants":[1]}}}}`, "The `bucket.toggles.f1.variants` property must be of another type; you sent array."},
		{`{"appName":"a\u0000"}`, "NUL"},
		{"{\"appName\":\"a\xff\"}", "UTF-8"},
	} {
		r, err := decodeMetrics([]byte(c.body), testFlags{})
		if err == nil {
			t.Errorf("%s: no error, kept %s", c.body, summary(r))
			continue
		}
		if e := apierr.From(err); e.Status() != 400 || !strings.Contains(e.Message, c.message) {
			t.Errorf("%s: %d %q, want 400 with %q", c.body, e.Status(), e.Message, c.message)
		}
	}
}

// Decoding a report allocates only the report's own strings once its
// buffers are warm: the body is walked, not copied into maps.
func TestDecodeMetricsAllocations(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"appName":"app","instanceId":"i","sdkVersion":"unleash-client-node:6.1.0","bucket":{"stop":"2026-01-01T00:01:00Z","toggles":{`)
	for i := range 50 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"f%d":{"yes":%d,"no":1,"variants":{"blue":1,"green":2}}`, 1+i%2, i)
	}
	b.WriteString(`}}}`)
	body := []byte(b.String())
	allocs := testing.AllocsPerRun(200, func() {
		r, err := decodeMetrics(body, testFlags{})
		if err != nil {
			t.Fatal(err)
		}
		r.release()
	})
	// appName, instanceId, sdkVersion and the stop time.
	if allocs > 4 {
		t.Errorf("%.1f allocations per report, want at most 4", allocs)
	}
}
