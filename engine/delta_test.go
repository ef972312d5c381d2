package engine_test

import (
	"reflect"
	"testing"

	"github.com/bunting-flags/bunting/engine"
)

func TestApplyDelta(t *testing.T) {
	base := &engine.ClientFeatures{Version: 2,
		Features: []engine.Feature{{Name: "a", Enabled: true}, {Name: "b"}},
		Segments: []engine.Segment{{ID: 1}, {ID: 2}},
	}
	snapshotOfBase := *base
	snapshotOfBase.Features = append([]engine.Feature(nil), base.Features...)
	got, err := engine.ApplyDelta(base, []engine.DeltaEvent{
		{EventID: 1, Type: engine.DeltaFeatureUpdated, Feature: &engine.Feature{Name: "b", Enabled: true}},
		{EventID: 2, Type: engine.DeltaFeatureUpdated, Feature: &engine.Feature{Name: "c"}},
		{EventID: 3, Type: engine.DeltaFeatureRemoved, FeatureName: "a"},
		{EventID: 4, Type: engine.DeltaSegmentRemoved, SegmentID: 1},
		{EventID: 5, Type: engine.DeltaSegmentUpdated, Segment: &engine.Segment{ID: 3, Name: "new"}},
		{EventID: 6, Type: engine.DeltaFeatureRemoved, FeatureName: "never-existed"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &engine.ClientFeatures{Version: 2,
		Features: []engine.Feature{{Name: "b", Enabled: true}, {Name: "c"}},
		Segments: []engine.Segment{{ID: 2}, {ID: 3, Name: "new"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ApplyDelta = %+v, want %+v", got, want)
	}
	if !reflect.DeepEqual(base.Features, snapshotOfBase.Features) || len(base.Segments) != 2 {
		t.Error("ApplyDelta modified its base")
	}
	hydrated, err := engine.ApplyDelta(got, []engine.DeltaEvent{{Type: engine.DeltaHydration, Features: []engine.Feature{{Name: "h"}}}})
	if err != nil || len(hydrated.Features) != 1 || hydrated.Features[0].Name != "h" || len(hydrated.Segments) != 0 {
		t.Errorf("hydration: %+v, %v", hydrated, err)
	}
	for _, bad := range []engine.DeltaEvent{
		{EventID: 9, Type: "feature-renamed"},
		{EventID: 10, Type: engine.DeltaFeatureUpdated},
		{EventID: 11, Type: engine.DeltaSegmentUpdated},
	} {
		if _, err := engine.ApplyDelta(base, []engine.DeltaEvent{bad}); err == nil {
			t.Errorf("event %+v: no error", bad)
		}
	}
}
