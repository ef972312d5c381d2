package engine

import "math/rand/v2"

// rollout is the percentage of a rollout strategy (gradualRolloutUserId,
// gradualRolloutSessionId, gradualRolloutRandom, flexibleRollout). Both
// paths decide it through these methods: the one-flag path from
// strategy.decide, the all-flags rounds from decideRound.
//
// A stickiness id is in when its bucket, the murmur3 hash of
// "groupId:id" normalized to 1–100, is at most the percentage; a random
// rollout, or a default-stickiness one without an id, draws the bucket at
// random.
type rollout struct {
	prefix hashPrefix // "groupId:" under rolloutSeed
	// limit is the largest bucket that is in: the percentage rounded down
	// (a whole bucket is at most the percentage exactly when it is at
	// most that), 0 to 100.
	limit uint32
}

// newRollout compiles a rollout of percentage that hashes ids under
// group.
func newRollout(percentage float64, group string) rollout {
	return rollout{prefix: newHashPrefix(rolloutSeed, groupPrefix(group)), limit: uint32(max(0, min(percentage, 100)))}
}

// hashIn reports whether id's bucket is in the rollout.
func (r *rollout) hashIn(id string) bool { return r.prefix.normalized(id, 100) <= r.limit }

// drawIn reports whether a random bucket is in the rollout.
func (r *rollout) drawIn() bool { return uint32(rand.IntN(100)+1) <= r.limit }

// defaultIn decides a rollout with default stickiness for the id that
// defaultStickyID returned: by its bucket, or by a random draw when there
// is none.
func (r *rollout) defaultIn(id string, ok bool) bool {
	if !ok {
		return r.drawIn()
	}
	return r.hashIn(id)
}

// defaultStickyID is the id a rollout with default stickiness hashes:
// userId, else sessionId; false when the context has neither (variants
// fall back to remoteAddress too, see variantList.seed).
func defaultStickyID(ctx *Context) (string, bool) {
	if ctx.UserID != "" {
		return ctx.UserID, true
	}
	return ctx.SessionID, ctx.SessionID != ""
}
