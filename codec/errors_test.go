package codec

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/codec/blosc"
)

// TestErrorCauses checks that CorruptError and UnsupportedError keep the
// error that caused them: errors.Is and errors.As see through them, and
// the message says the cause once.
func TestErrorCauses(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		kind error
		msg  string
	}{
		{"corrupt", Corruptf("gzip", "after %d bytes: %w", 7, io.ErrUnexpectedEOF), ErrCorrupt,
			"gzip: corrupt data: after 7 bytes: unexpected EOF"},
		{"unsupported", Unsupportedf("thing: %w", io.ErrUnexpectedEOF), ErrUnsupported,
			"unsupported thing: unexpected EOF"},
	} {
		if !errors.Is(tt.err, tt.kind) || !errors.Is(tt.err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: %v matches neither %v nor its cause", tt.name, tt.err, tt.kind)
		}
		if tt.err.Error() != tt.msg {
			t.Errorf("%s: %q, want %q", tt.name, tt.err, tt.msg)
		}
	}
	var ce *CorruptError
	if err := Corruptf("x", "no cause"); !errors.As(err, &ce) || ce.Err != nil || errors.Unwrap(err) != nil {
		t.Errorf("Corruptf without %%w: %#v, want no cause", err)
	}

	// A corrupt Blosc chunk: the codec's error wraps package blosc's, which
	// says what is wrong; the message does not repeat "blosc: corrupt".
	const name = "blosc-truncated-half.bin"
	stored, err := os.ReadFile(filepath.Join("testdata", "hostile", name))
	if err != nil {
		t.Fatal(err)
	}
	_, err = hostilePipeline(t, name).Decode(stored)
	var be *blosc.Error
	if !errors.Is(err, ErrCorrupt) || !errors.Is(err, blosc.ErrCorrupt) || !errors.As(err, &be) || !errors.As(err, &ce) {
		t.Fatalf("corrupt blosc chunk: %v, want a CorruptError wrapping a *blosc.Error", err)
	}
	if ce.Codec != "blosc" || ce.Reason != be.Reason || strings.Count(err.Error(), "corrupt") != 1 {
		t.Errorf("corrupt blosc chunk: %q (reason %q), want blosc's reason once", err, be.Reason)
	}
}
