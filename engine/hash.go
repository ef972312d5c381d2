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
// in place and does not allocate. Ids of four bytes or more, the usual
// case, take a path without byte loops: the blocks after the first start
// at a fixed offset into id, and the last partial block is read as the id's
// last four bytes shifted, so the branches do not depend on how the
// prefix's length falls against the block size.
func (p *hashPrefix) sum(id string) uint32 {
	if len(id) < 4 {
		return p.sumShort(id)
	}
	h := p.h
	nt := p.nt
	total := nt + uint32(len(id)) // bytes after the prefix's whole blocks
	// The first block is the prefix's tail followed by id's first bytes.
	h = murmurBlock(h, p.tail|le32(id, 0)<<(8*nt))
	// Block j (j ≥ 1) starts 4j-nt bytes into id.
	for off := 4 - int(nt); off+4 <= len(id); off += 4 {
		h = murmurBlock(h, le32(id, off))
	}
	// The last total%4 bytes; with none the shift leaves 0, which mixes
	// nothing in (as murmur3 does with no tail).
	k := le32(id, len(id)-4) >> (8 * (4 - total&3))
	k *= murmurC1
	k = bits.RotateLeft32(k, 15)
	k *= murmurC2
	h ^= k
	return fmix(h ^ (p.n + uint32(len(id))))
}

// sumShort is sum for ids shorter than four bytes.
func (p *hashPrefix) sumShort(id string) uint32 {
	h := p.h
	// k gathers the n bytes of the block being filled, first byte lowest.
	k, n := p.tail, p.nt
	for i := 0; i < len(id); i++ {
		k |= uint32(id[i]) << (8 * n)
		n++
		if n == 4 {
			h = murmurBlock(h, k)
			k, n = 0, 0
		}
	}
	if n > 0 {
		k *= murmurC1
		k = bits.RotateLeft32(k, 15)
		k *= murmurC2
		h ^= k
	}
	return fmix(h ^ (p.n + uint32(len(id))))
}

// fmix is murmur3's finalisation of the state, the length already mixed
// in.
func fmix(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// le32 reads s[i:i+4] as a little-endian number.
func le32(s string, i int) uint32 {
	_ = s[i+3] // one bounds check for the four reads
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
