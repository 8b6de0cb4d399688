package store

import "context"

type urgentKey struct{}

// Urgent returns a context whose requests a store that queues requests
// (a remote store at its limit of requests in flight) serves before those
// of other contexts: a reader waits for them, where the others are read
// ahead of it.
func Urgent(ctx context.Context) context.Context {
	return context.WithValue(ctx, urgentKey{}, true)
}

// IsUrgent reports whether ctx comes from Urgent.
func IsUrgent(ctx context.Context) bool {
	u, _ := ctx.Value(urgentKey{}).(bool)
	return u
}
