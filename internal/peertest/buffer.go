package peertest

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer behind a mutex, which goroutines may share:
// what a running command, server or subprocess writes, while a test reads
// it. The zero value is empty and ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
