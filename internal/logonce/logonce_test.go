package logonce

import (
	"bytes"
	"log"
	"strings"
	"testing"
)

// TestPrintOnce: each key's line is printed the first time only; a Log
// without a Logger prints nothing and says so; past maxSeen keys the
// memory is cleared, so it stays bounded.
func TestPrintOnce(t *testing.T) {
	var buf bytes.Buffer
	l := &Log{Logger: log.New(&buf, "", 0)}
	for _, tc := range []struct {
		key, line string
		want      bool
	}{
		{"a", "line a", true},
		{"a", "line a again", false},
		{"b", "line b", true},
		{"a", "line a", false},
	} {
		if got := l.Print(tc.key, tc.line); got != tc.want {
			t.Errorf("Print(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
	if got := buf.String(); got != "line a\nline b\n" {
		t.Errorf("printed %q", got)
	}
	var silent Log
	if silent.Print("a", "x") {
		t.Error("a Log without a Logger printed")
	}
	for i := range maxSeen + 10 {
		l.Print(strings.Repeat("k", i+2), "")
	}
	if len(l.seen) > maxSeen {
		t.Errorf("%d keys remembered, want at most %d", len(l.seen), maxSeen)
	}
}
