package main

import (
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestErrorNamesStoreOnce: an error of a remote store names the store
// once, whichever layers wrapped it (the store, the engine, the CLI):
// not "http URL: http URL: …".
func TestErrorNamesStoreOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/x.zarr"
	ln.Close() // nothing listens there now: connection refused
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/zarr.json") && strings.Count(r.URL.Path, "/") == 2:
			w.Write([]byte(`{"zarr_format": 3, "node_type": "group"}`))
		case strings.HasSuffix(r.URL.Path, "/broken/zarr.json"):
			nethttp.Error(w, "teapot", nethttp.StatusTeapot)
		default:
			nethttp.NotFound(w, r)
		}
	}))
	defer srv.Close()
	for _, args := range [][]string{
		{"ls", "--store-retries", "0", refused},
		{"cat", "--store-retries", "0", refused, "a"},
		{"info", srv.URL + "/g.zarr", "broken"},
		{"ls", srv.URL + "/none.zarr"},
	} {
		code, _, errOut := runCLI(t, args...)
		name := "http " + args[len(args)-1]
		if args[0] == "cat" || args[0] == "info" {
			name = "http " + args[len(args)-2]
		}
		if code != 1 || strings.Count(errOut, "\n") != 1 || strings.Count(errOut, name+":") != 1 {
			t.Errorf("%q: status %d, stderr %q; want 1 and one line naming %q once", args, code, errOut, name)
		}
		t.Logf("%q: %s", args, strings.TrimSpace(errOut))
	}
}
