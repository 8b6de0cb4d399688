package zarr

import "context"

// sessionKey is the context key of a read's session (WithSession).
type sessionKey struct{}

// WithSession returns ctx carrying session, the context of the reader a
// read is made for (an open file): the read-ahead a read starts runs
// until the session ends, not the read, so that a reader that closes its
// file, or is killed, leaves no chunks loading for nobody. Reads without
// a session start read-ahead that runs to its own bounds (readAhead).
func WithSession(ctx, session context.Context) context.Context {
	return context.WithValue(ctx, sessionKey{}, session)
}

// sessionOf returns the session of a read's context, or the background.
func sessionOf(ctx context.Context) context.Context {
	if s, ok := ctx.Value(sessionKey{}).(context.Context); ok {
		return s
	}
	return context.Background()
}
