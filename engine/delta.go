package engine

import (
	"fmt"
	"slices"
)

// DeltaEvent is one event of Unleash's client delta API
// (GET /api/client/delta), the form of client-specification files 19 and 20.
// Which fields are set depends on Type.
type DeltaEvent struct {
	EventID int64  `json:"eventId"`
	Type    string `json:"type"`
	// Features and Segments replace the whole state (hydration).
	Features []Feature `json:"features,omitempty"`
	Segments []Segment `json:"segments,omitempty"`
	// Feature is added or replaced by name (feature-updated).
	Feature *Feature `json:"feature,omitempty"`
	// FeatureName is removed (feature-removed).
	FeatureName string `json:"featureName,omitempty"`
	Project     string `json:"project,omitempty"`
	// Segment is added or replaced by id (segment-updated).
	Segment *Segment `json:"segment,omitempty"`
	// SegmentID is removed (segment-removed).
	SegmentID int `json:"segmentId,omitempty"`
}

// Delta event types.
const (
	DeltaHydration      = "hydration"
	DeltaFeatureUpdated = "feature-updated"
	DeltaFeatureRemoved = "feature-removed"
	DeltaSegmentUpdated = "segment-updated"
	DeltaSegmentRemoved = "segment-removed"
)

// ApplyDelta returns the payload that results from applying events, in
// order, to base (nil is an empty payload). base is not modified. An event
// of an unknown type, or without the field its type needs, is an error.
func ApplyDelta(base *ClientFeatures, events []DeltaEvent) (*ClientFeatures, error) {
	out := &ClientFeatures{Version: 2}
	if base != nil {
		*out = *base
		out.Features = slices.Clone(base.Features)
		out.Segments = slices.Clone(base.Segments)
	}
	for _, ev := range events {
		if err := out.apply(ev); err != nil {
			return nil, fmt.Errorf("delta event %d: %w", ev.EventID, err)
		}
	}
	return out, nil
}

func (cf *ClientFeatures) apply(ev DeltaEvent) error {
	switch ev.Type {
	case DeltaHydration:
		cf.Features, cf.Segments = slices.Clone(ev.Features), slices.Clone(ev.Segments)
	case DeltaFeatureUpdated:
		if ev.Feature == nil {
			return fmt.Errorf("%s without a feature", ev.Type)
		}
		i := slices.IndexFunc(cf.Features, func(f Feature) bool { return f.Name == ev.Feature.Name })
		if i < 0 {
			cf.Features = append(cf.Features, *ev.Feature)
		} else {
			cf.Features[i] = *ev.Feature
		}
	case DeltaFeatureRemoved:
		cf.Features = slices.DeleteFunc(cf.Features, func(f Feature) bool { return f.Name == ev.FeatureName })
	case DeltaSegmentUpdated:
		if ev.Segment == nil {
			return fmt.Errorf("%s without a segment", ev.Type)
		}
		i := slices.IndexFunc(cf.Segments, func(s Segment) bool { return s.ID == ev.Segment.ID })
		if i < 0 {
			cf.Segments = append(cf.Segments, *ev.Segment)
		} else {
			cf.Segments[i] = *ev.Segment
		}
	case DeltaSegmentRemoved:
		cf.Segments = slices.DeleteFunc(cf.Segments, func(s Segment) bool { return s.ID == ev.SegmentID })
	default:
		return fmt.Errorf("unknown type %q", ev.Type)
	}
	return nil
}
