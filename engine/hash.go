package engine

import "github.com/twmb/murmur3"

const (
	// rolloutSeed is the murmur3 seed for strategy rollouts.
	rolloutSeed = 0
	// variantSeed is the murmur3 seed for variant selection.
	variantSeed = 86028157
	// hashBufferSize bounds the hash input kept on the stack.
	hashBufferSize = 256
)

// hashKey is murmur3 x86 32-bit of the UTF-8 bytes of prefix+id, where
// prefix is a precomputed "groupId:". Inputs that fit in hashBufferSize
// bytes are hashed from a stack buffer, so the common case does not
// allocate.
func hashKey(seed uint32, prefix, id string) uint32 {
	var buf [hashBufferSize]byte
	var b []byte
	if n := len(prefix) + len(id); n <= len(buf) {
		b = buf[:0]
	} else {
		b = make([]byte, 0, n)
	}
	b = append(b, prefix...)
	b = append(b, id...)
	return murmur3.SeedSum32(seed, b)
}

// normalizedHash is Unleash's normalisation: hash % modulo + 1, in
// [1, modulo]. modulo must be positive.
func normalizedHash(seed uint32, prefix, id string, modulo uint32) uint32 {
	return hashKey(seed, prefix, id)%modulo + 1
}

// groupPrefix is the hash input prefix for a group id.
func groupPrefix(groupID string) string {
	return groupID + ":"
}
