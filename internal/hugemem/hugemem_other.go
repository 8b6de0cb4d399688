//go:build !linux

package hugemem

func prepare([]byte) {}
