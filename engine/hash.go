package engine

import "math/bits"

const (
	// rolloutSeed is the murmur3 seed for strategy rollouts.
	rolloutSeed = 0
	// variantSeed is the murmur3 seed for variant selection.
	variantSeed = 86028157
)

// murmur3 x86 32-bit constants.
const (
	murmurC1 = 0xcc9e2d51
	murmurC2 = 0x1b873593
)

// hashPrefix is murmur3 x86 32-bit with a fixed seed, already run over the
// whole 4-byte blocks of a constant prefix ("groupId:"). Compiling it once
// per strategy or variant list leaves only the few prefix bytes that do not
// fill a block, and the id, to hash per evaluation: the group id is often
// the flag name and longer than the id.
type hashPrefix struct {
	h    uint32 // state after the prefix's whole blocks
	tail uint32 // the prefix's last len%4 bytes, first byte lowest
	nt   uint32 // how many bytes tail holds
	n    uint32 // length of the prefix in bytes
}

// newHashPrefix runs murmur3 with seed over the whole blocks of prefix.
func newHashPrefix(seed uint32, prefix string) hashPrefix {
	p := hashPrefix{h: seed, n: uint32(len(prefix))}
	whole := len(prefix) &^ 3
	for i := 0; i < whole; i += 4 {
		p.h = murmurBlock(p.h, le32(prefix, i))
	}
	for i := whole; i < len(prefix); i++ {
		p.tail |= uint32(prefix[i]) << (8 * p.nt)
		p.nt++
	}
	return p
}

// sum is murmur3 x86 32-bit of the UTF-8 bytes of prefix+id. It reads id
// in place and does not allocate.
func (p *hashPrefix) sum(id string) uint32 {
	h := p.h
	// k gathers the n bytes of the block being filled, first byte lowest.
	k, n := p.tail, p.nt
	i := 0
	for n > 0 && n < 4 && i < len(id) {
		k |= uint32(id[i]) << (8 * n)
		n++
		i++
	}
	if n == 4 {
		h = murmurBlock(h, k)
		k, n = 0, 0
	}
	if n == 0 {
		for ; i+4 <= len(id); i += 4 {
			h = murmurBlock(h, le32(id, i))
		}
		for ; i < len(id); i++ {
			k |= uint32(id[i]) << (8 * n)
			n++
		}
	}
	if n > 0 {
		k *= murmurC1
		k = bits.RotateLeft32(k, 15)
		k *= murmurC2
		h ^= k
	}
	h ^= p.n + uint32(len(id))
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// le32 reads s[i:i+4] as a little-endian number.
func le32(s string, i int) uint32 {
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

// murmurBlock mixes one 4-byte block into the state.
func murmurBlock(h, k uint32) uint32 {
	k *= murmurC1
	k = bits.RotateLeft32(k, 15)
	k *= murmurC2
	h ^= k
	h = bits.RotateLeft32(h, 13)
	return h*5 + 0xe6546b64
}

// normalized is Unleash's normalisation of the hash of prefix+id:
// hash % modulo + 1, in [1, modulo]. modulo must be positive.
func (p *hashPrefix) normalized(id string, modulo uint32) uint32 {
	return p.sum(id)%modulo + 1
}

// hashKey is murmur3 x86 32-bit of the UTF-8 bytes of prefix+id.
func hashKey(seed uint32, prefix, id string) uint32 {
	p := newHashPrefix(seed, prefix)
	return p.sum(id)
}

// normalizedHash is hashKey % modulo + 1, in [1, modulo]. modulo must be
// positive.
func normalizedHash(seed uint32, prefix, id string, modulo uint32) uint32 {
	return hashKey(seed, prefix, id)%modulo + 1
}

// groupPrefix is the hash input prefix for a group id.
func groupPrefix(groupID string) string {
	return groupID + ":"
}
