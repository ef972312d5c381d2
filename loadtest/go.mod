module github.com/bunting-flags/bunting/loadtest

go 1.26.0

require github.com/bunting-flags/bunting v0.0.0

require (
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/twmb/murmur3 v1.2.2 // indirect
)

replace github.com/bunting-flags/bunting => ../
