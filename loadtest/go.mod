module github.com/bunting-flags/bunting/loadtest

go 1.26.0

require (
	github.com/bunting-flags/bunting v0.0.0
	github.com/jackc/pgx/v5 v5.12.0
)

require (
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/text v0.44.0 // indirect
)

replace github.com/bunting-flags/bunting => ../
