package proxy

import "testing"

func TestCountVariantFallsBackWhenAnIDIsShared(t *testing.T) {
	sh := &usageShard{variants: make([]uint32, 3), variantFlag: make([]int32, 3)}
	sh.countVariant(0, 1)
	sh.countVariant(0, 1)
	sh.countVariant(2, 1) // same variant ID seen with another flag
	sh.countVariant(2, 7) // out of range
	if sh.variants[1] != 2 || sh.variantFlag[1] != 1 {
		t.Fatalf("dense counters: %v %v", sh.variants, sh.variantFlag)
	}
	if sh.shared[2<<32|1] != 1 || sh.shared[2<<32|7] != 1 {
		t.Fatalf("shared counters: %v", sh.shared)
	}
}
