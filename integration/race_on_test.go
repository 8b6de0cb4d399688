//go:build race

package integration

// raceBuild is set when the tests run under -race: the zarrfs binary they
// mount is then built with -race too, so that the stress, fsx and
// lifecycle tests check the daemon for data races.
const raceBuild = true
