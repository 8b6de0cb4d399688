//go:build !race

package integration

// raceBuild is set when the tests run under -race (see race_on_test.go).
const raceBuild = false
