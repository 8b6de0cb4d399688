package store

import (
	"fmt"
	"strings"
)

// Errorf returns the error of a store s: its message names s once, then
// says what was being done (format and args, as fmt.Sprintf; "" for
// nothing), then err. The network stores' own errors name the store
// already ("http https://…: get a/zarr.json: …"); the layers above that add
// the node or the chunk key would repeat it, so every "NAME: " (s's name)
// in err's message goes and the name stays in front only.
// The error wraps err (errors.Is and As see through it).
func Errorf(s fmt.Stringer, err error, format string, args ...any) error {
	name := s.String()
	msg := strings.ReplaceAll(err.Error(), name+": ", "")
	prefix := name + ": "
	if format != "" {
		prefix += fmt.Sprintf(format, args...) + ": "
	}
	return &namedError{msg: prefix + msg, err: err}
}

// namedError is an error with a message of its own that wraps another.
type namedError struct {
	msg string
	err error
}

func (e *namedError) Error() string { return e.msg }
func (e *namedError) Unwrap() error { return e.err }
