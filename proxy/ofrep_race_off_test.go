//go:build !race

package proxy_test

// ofrepAgreementContexts is how many random contexts the OFREP agreement
// test compares (see ofrep_race_on_test.go).
const ofrepAgreementContexts = 1000
