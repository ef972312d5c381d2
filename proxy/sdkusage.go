package proxy

import "github.com/bunting-flags/bunting/engine"

// disabledVariant is the variant name SDKs count when a flag gives no
// variant.
const disabledVariant = "disabled"

// variantIndex lists the variant names of each flag of one snapshot, to
// check the variants an SDK reports.
type variantIndex struct {
	snap   *engine.Snapshot
	byFlag [][]string
}

func newVariantIndex(s *engine.Snapshot) *variantIndex {
	vi := &variantIndex{snap: s, byFlag: make([][]string, s.Len())}
	for id := range s.VariantCount() {
		if i := s.VariantFlag(id); i >= 0 {
			vi.byFlag[i] = append(vi.byFlag[i], s.Variant(id).Name)
		}
	}
	return vi
}

// name returns the snapshot's own copy of variant v of flag i, or false
// when flag i has no such variant ("disabled" is every flag's).
func (vi *variantIndex) name(i int, v string) (string, bool) {
	if v == disabledVariant {
		return disabledVariant, true
	}
	for _, known := range vi.byFlag[i] {
		if known == v {
			return known, true
		}
	}
	return "", false
}

// addSDKUsage adds what an SDK posted to the next upstream post, for the
// flags of the snapshots being served (the current one and the one before
// it, which an SDK may still have used) and their variants only. Anything
// else is dropped: an SDK reports only flags the proxy gave it, so other
// names come from a client that holds the (public) client key and would
// grow the bucket, and the upstream post with it, without bound. The
// bucket keeps the snapshots' strings, not the request's.
func (p *Proxy) addSDKUsage(toggles map[string]sdkToggle) {
	served := p.variantIndexes()
	if len(served) == 0 || len(toggles) == 0 {
		return
	}
	for name, t := range toggles {
		for _, vi := range served {
			i, ok := vi.snap.Index(name)
			if !ok {
				continue
			}
			var variants map[string]int64
			for v, n := range t.Variants {
				if known, ok := vi.name(i, v); ok && n > 0 {
					if variants == nil {
						variants = map[string]int64{}
					}
					variants[known] = saturatingAdd(variants[known], n)
				}
			}
			if t.Yes > 0 || t.No > 0 || variants != nil {
				p.usage.Add(vi.snap.Name(i), t.Yes, t.No, variants)
			}
			break
		}
	}
}

// variantIndexes returns the variant indexes of the snapshots being
// served, newest first, building the missing ones.
func (p *Proxy) variantIndexes() []*variantIndex {
	snaps := p.frontend.Snapshots()
	if snaps == nil {
		return nil
	}
	var cached []*variantIndex
	if c := p.sdkVariants.Load(); c != nil {
		cached = *c
	}
	out := make([]*variantIndex, 0, len(snaps))
	rebuilt := false
	for _, snap := range snaps {
		var vi *variantIndex
		for _, c := range cached {
			if c.snap == snap {
				vi = c
			}
		}
		if vi == nil {
			vi, rebuilt = newVariantIndex(snap), true
		}
		out = append(out, vi)
	}
	if rebuilt {
		p.sdkVariants.Store(&out)
	}
	return out
}
