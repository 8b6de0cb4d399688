//go:build race

package peertest

// RaceBuild is set when the tests run under -race: the integration tests
// then build the zarrfs binary they mount with -race too, so that the
// stress, fsx and lifecycle tests check the daemon for data races.
const RaceBuild = true
