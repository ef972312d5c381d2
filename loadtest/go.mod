module github.com/bunting-flags/bunting/loadtest

go 1.26.0

require github.com/bunting-flags/bunting v0.0.0

require github.com/Masterminds/semver/v3 v3.5.0 // indirect

replace github.com/bunting-flags/bunting => ../
