// Package logonce logs each distinct message once, not once per request:
// the mount and the servers meet the same broken chunk at every read of
// it, and their logs should say so one time.
package logonce

import (
	"log"
	"sync"
)

// maxSeen bounds the memory spent remembering which messages were logged;
// past it the memory is cleared and messages may be logged again.
const maxSeen = 4096

// Log is a logger that prints a message only the first time it is seen.
// Its zero value, and one with a nil Logger, logs nothing.
type Log struct {
	Logger *log.Logger

	mu   sync.Mutex
	seen map[string]struct{}
}

// Print logs line (printed as it is) when key has not been seen before,
// and reports whether it did.
func (l *Log) Print(key, line string) bool {
	if l == nil || l.Logger == nil {
		return false
	}
	l.mu.Lock()
	_, dup := l.seen[key]
	if !dup {
		if l.seen == nil || len(l.seen) >= maxSeen {
			l.seen = make(map[string]struct{})
		}
		l.seen[key] = struct{}{}
	}
	l.mu.Unlock()
	if !dup {
		l.Logger.Print(line)
	}
	return !dup
}
