//go:build !race

package peertest

// RaceBuild is set when the tests run under -race (see race_on.go).
const RaceBuild = false
