//go:build race

package proxy_test

// ofrepAgreementContexts is how many random contexts the OFREP agreement
// test compares: fewer under the race detector (the plain run, in make
// test too, compares 1,000), where each costs about twenty times as much.
const ofrepAgreementContexts = 100
