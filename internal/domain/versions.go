package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// Versioned names the object a change is conditional on: a flag (Feature)
// or, when Feature is empty, a segment (Segment).
type Versioned struct {
	Feature string
	Segment int
}

// IfMatch is a change's precondition, as HTTP's If-Match header carries
// it: the versions of the object the caller last saw (any one of them
// must still be current), or Any ("*": the object must still exist).
type IfMatch struct {
	Any      bool
	Versions []string
}

// ParseIfMatch reads an If-Match header: "*" or a comma-separated list of
// quoted versions as the ETag header sent them. A W/ prefix is accepted and
// ignored: proxies that compress answers mark the ETag weak, and a version
// here names the object's state, not the bytes of one encoding of it. It
// returns nil for an empty header (no precondition) and a ValidationError
// for anything else.
func ParseIfMatch(h string) (*IfMatch, error) {
	h = strings.TrimSpace(h)
	if h == "" {
		return nil, nil
	}
	if h == "*" {
		return &IfMatch{Any: true}, nil
	}
	m := &IfMatch{}
	for _, part := range strings.Split(h, ",") {
		tag := strings.TrimPrefix(strings.TrimSpace(part), "W/")
		if len(tag) < 3 || tag[0] != '"' || tag[len(tag)-1] != '"' || strings.ContainsAny(tag[1:len(tag)-1], "\" ") {
			return nil, apierr.Validation("The If-Match header must be * or a list of quoted versions as the ETag header gives them (for example \"3f9a…\"); you sent %q.", h)
		}
		m.Versions = append(m.Versions, tag)
	}
	return m, nil
}

// matches reports whether version (quoted) satisfies m.
func (m IfMatch) matches(version string) bool {
	return m.Any || slices.Contains(m.Versions, version)
}

// versionOf hashes a state into a quoted version.
func versionOf(state any) (string, error) {
	b, err := json.Marshal(state)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:16]) + `"`, nil
}

// FeatureVersion is the version of a flag's stored configuration, v with
// its tags: metadata, archived or not, each environment's switch,
// strategies (with their order, constraints, segments and variants) and
// variants, the flag's dependencies and its tags. Any change to one of
// them changes the version; what only reports use (last seen times,
// favourites, which flags depend on this one) is left out. It is the ETag
// of GET .../features/{name} and what If-Match is compared with.
func FeatureVersion(q store.Q, v FeatureView) (string, error) {
	tags, err := q.FeatureTags(v.Name)
	if err != nil {
		return "", err
	}
	v.LastSeenAt, v.Favorite, v.Children = nil, false, nil
	envs := slices.Clone(v.Environments)
	for i := range envs {
		envs[i].LastSeenAt = nil
	}
	v.Environments = envs
	return versionOf(struct {
		FeatureView
		Tags []store.Tag `json:"tags"`
	}{v, tags})
}

// SegmentVersion is the version of a segment as stored: the ETag of
// GET /api/admin/segments/{id}.
func SegmentVersion(sg store.Segment) (string, error) { return versionOf(sg) }

// CheckVersion runs in the transaction of a change to obj, before the
// change: it locks obj (store.Tx.LockFeature) and answers
// PreconditionFailed, naming who changed it last, unless its current
// version is one of m's. Run inside the change's transaction, the check and
// the change are atomic on both databases: a concurrent change with the
// same version waits for this one and then fails the check.
func CheckVersion(tx *store.Tx, obj Versioned, m IfMatch) error {
	current, err := lockedVersion(tx, obj)
	if err != nil {
		return err
	}
	if current != "" && m.matches(current) {
		return nil
	}
	what, by, err := lastChange(tx.Q, obj)
	if err != nil {
		return err
	}
	if by == "" {
		by = "someone else"
	}
	if current == "" {
		return apierr.PreconditionFailed("This %s no longer exists: %s deleted it since you opened it.", what, by)
	}
	return apierr.PreconditionFailed("This %s was changed by %s since you opened it. Reload to see the change before saving yours.", what, by)
}

// lockedVersion locks obj and returns its version ("" when it does not
// exist).
func lockedVersion(tx *store.Tx, obj Versioned) (string, error) {
	var err error
	if obj.Feature == "" {
		err = tx.LockSegment(obj.Segment)
	} else {
		err = tx.LockFeature(obj.Feature)
	}
	if err != nil {
		return "", err
	}
	return CurrentVersion(tx.Q, obj)
}

// featureVersionOf loads a flag's view and returns its version.
func featureVersionOf(q store.Q, f store.Feature) (string, error) {
	v, err := LoadFeatureView(q, f)
	if err != nil {
		return "", err
	}
	return FeatureVersion(q, v)
}

// CurrentVersion is obj's version as q sees it ("" when it does not
// exist): in a conditional change's transaction, after the change, it is
// the version the caller sends with its next change.
func CurrentVersion(q store.Q, obj Versioned) (string, error) {
	if obj.Feature == "" {
		sg, err := q.Segment(obj.Segment)
		if apierr.IsKind(err, apierr.KindNotFound) {
			return "", nil
		} else if err != nil {
			return "", err
		}
		return SegmentVersion(sg)
	}
	f, err := q.Feature(obj.Feature)
	if apierr.IsKind(err, apierr.KindNotFound) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	return featureVersionOf(q, f)
}

// lastChange names obj's kind and who wrote its newest event.
func lastChange(q store.Q, obj Versioned) (what, by string, err error) {
	if obj.Feature == "" {
		by, err = q.LastSegmentChangeBy(obj.Segment)
		return "segment", by, err
	}
	by, err = q.LastFeatureChangeBy(obj.Feature)
	return "flag", by, err
}

// ValueVersion is the version of any stored value (a strategy, a flag
// environment's variants, a flag's dependencies), computed as the flag's
// and the segment's are: a change request records the version of what
// each of its changes changes, and applying it compares them.
func ValueVersion(v any) (string, error) { return versionOf(v) }
