module github.com/bunting-flags/bunting/compat

go 1.26.0

require (
	github.com/Unleash/unleash-client-go/v4 v4.5.0
	github.com/Unleash/unleash-go-sdk/v5 v5.1.0
	github.com/google/go-cmp v0.7.0
	github.com/jackc/pgx/v5 v5.12.0
	github.com/open-feature/go-sdk v1.17.0
	github.com/open-feature/go-sdk-contrib/providers/ofrep v0.1.7
)

require (
	github.com/Masterminds/semver/v3 v3.3.1 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/launchdarkly/eventsource v1.10.0 // indirect
	github.com/stretchr/objx v0.5.3 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/twmb/murmur3 v1.1.8 // indirect
	go.uber.org/mock v0.6.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

replace github.com/bunting-flags/bunting => ../
