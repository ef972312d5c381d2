module github.com/bunting-flags/bunting/bench

go 1.26.0

require (
	github.com/Unleash/unleash-client-go/v4 v4.5.0
	github.com/bunting-flags/bunting v0.0.0
)

require (
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/stretchr/objx v0.5.3 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/twmb/murmur3 v1.2.2 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
)

replace github.com/bunting-flags/bunting => ../
