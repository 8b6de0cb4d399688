package serve

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// davEnd reads the tree through the WebDAV server: PROPFIND depth 1 for
// listings, GET for bytes.
type davEnd struct {
	url string
	c   *http.Client
}

type multistatus struct {
	Responses []struct {
		Href  string `xml:"href"`
		Props []struct {
			Prop struct {
				Length       string    `xml:"getcontentlength"`
				ResourceType *struct{} `xml:"resourcetype>collection"`
			} `xml:"prop"`
			Status string `xml:"status"`
		} `xml:"propstat"`
	} `xml:"response"`
}

func (d davEnd) propfind(t *testing.T, p, depth, body string) (*http.Response, multistatus) {
	t.Helper()
	req, _ := http.NewRequest("PROPFIND", d.url+p, strings.NewReader(body))
	req.Header.Set("Depth", depth)
	resp, err := d.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var ms multistatus
	if resp.StatusCode == http.StatusMultiStatus {
		if err := xml.Unmarshal(b, &ms); err != nil {
			t.Fatalf("PROPFIND %s: %v in %s", p, err, b)
		}
	}
	return resp, ms
}

func (d davEnd) list(t *testing.T, p string) []entry {
	dir := "/" + p
	if p != "" {
		dir += "/"
	}
	resp, ms := d.propfind(t, (&url.URL{Path: dir}).EscapedPath(), "1", "")
	if resp.StatusCode != http.StatusMultiStatus {
		t.Fatalf("PROPFIND %s: %s", dir, resp.Status)
	}
	var out []entry
	for _, r := range ms.Responses {
		h, err := url.PathUnescape(r.Href)
		if err != nil {
			t.Fatal(err)
		}
		if h == dir {
			continue
		}
		e := entry{path: strings.Trim(h, "/")}
		prop := r.Props[0].Prop
		e.dir = prop.ResourceType != nil
		if !e.dir {
			e.size, _ = strconv.ParseInt(prop.Length, 10, 64)
		}
		out = append(out, e)
	}
	return out
}

func (d davEnd) read(t *testing.T, p string) []byte {
	resp, err := d.c.Get(d.url + (&url.URL{Path: "/" + p}).EscapedPath())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", p, resp.Status, err)
	}
	return b
}

func newDAV(t *testing.T) (davEnd, *Tree) {
	tr, _ := exampleTree(t)
	srv := httptest.NewServer(NewWebDAV(tr))
	t.Cleanup(srv.Close)
	return davEnd{url: srv.URL, c: srv.Client()}, tr
}

// Every file and directory the mount shows is listed by PROPFIND with its
// size, and read by GET byte for byte.
func TestWebDAVShowsTheTree(t *testing.T) {
	d, tr := newDAV(t)
	checkSameTree(t, d, tr.t.Current().H)
}

// The protocol's answers, one request each.
func TestWebDAVRequests(t *testing.T) {
	d, _ := newDAV(t)
	data := d.read(t, "temperature/data")
	lm := ""
	for _, c := range []struct {
		name, method, path string
		header             map[string]string
		body               string
		status             int
		check              func(t *testing.T, h http.Header, body []byte)
	}{
		{name: "options", method: "OPTIONS", path: "/", status: 200, check: func(t *testing.T, h http.Header, _ []byte) {
			if h.Get("DAV") != "1" || h.Get("Allow") != readOnlyAllow {
				t.Errorf("DAV %q, Allow %q", h.Get("DAV"), h.Get("Allow"))
			}
		}},
		{name: "head", method: "HEAD", path: "/temperature/data", status: 200, check: func(t *testing.T, h http.Header, b []byte) {
			if h.Get("Content-Length") != fmt.Sprint(len(data)) || h.Get("ETag") == "" || h.Get("Accept-Ranges") != "bytes" || len(b) != 0 {
				t.Errorf("headers %v, %d bytes of body", h, len(b))
			}
			lm = h.Get("Last-Modified")
			if _, err := http.ParseTime(lm); err != nil {
				t.Errorf("Last-Modified %q: %v", lm, err)
			}
		}},
		{name: "range", method: "GET", path: "/temperature/data", header: map[string]string{"Range": "bytes=1000-1999"}, status: 206, check: func(t *testing.T, h http.Header, b []byte) {
			if !bytes.Equal(b, data[1000:2000]) || h.Get("Content-Range") != fmt.Sprintf("bytes 1000-1999/%d", len(data)) {
				t.Errorf("range: %d bytes, Content-Range %q", len(b), h.Get("Content-Range"))
			}
		}},
		{name: "suffix range", method: "GET", path: "/temperature/data", header: map[string]string{"Range": "bytes=-10"}, status: 206, check: func(t *testing.T, _ http.Header, b []byte) {
			if !bytes.Equal(b, data[len(data)-10:]) {
				t.Errorf("suffix range: %d bytes", len(b))
			}
		}},
		{name: "range past the end", method: "GET", path: "/temperature/data", header: map[string]string{"Range": fmt.Sprintf("bytes=%d-", len(data))}, status: 416},
		{name: "if-none-match", method: "GET", path: "/temperature/data", header: map[string]string{"If-None-Match": "*"}, status: 304},
		{name: "directory without slash", method: "GET", path: "/temperature", status: 301},
		{name: "index", method: "GET", path: "/temperature/", status: 200, check: func(t *testing.T, h http.Header, b []byte) {
			if !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !bytes.Contains(b, []byte(`<a href="data.npy">data.npy</a>`)) {
				t.Errorf("index: %s", b)
			}
		}},
		{name: "missing", method: "GET", path: "/nope", status: 404},
		{name: "chunk key", method: "GET", path: "/temperature/c/0/0/0", status: 404},
		{name: "dot-dot", method: "GET", path: "/temperature/../lat/data", status: 400},
		{name: "encoded slash", method: "GET", path: "/temperature%2Fdata", status: 400},
		{name: "encoded dot-dot", method: "GET", path: "/temperature/%2e%2e/lat", status: 400},
		{name: "overlong name", method: "GET", path: "/" + strings.Repeat("x", 300), status: 400},
		{name: "propfind depth 0", method: "PROPFIND", path: "/temperature/data", header: map[string]string{"Depth": "0"}, status: 207, check: func(t *testing.T, _ http.Header, b []byte) {
			if !bytes.Contains(b, []byte(fmt.Sprintf("<D:getcontentlength>%d</D:getcontentlength>", len(data)))) ||
				!bytes.Contains(b, []byte("<D:getlastmodified>"+lm)) || !bytes.Contains(b, []byte("<D:getetag>")) {
				t.Errorf("%s", b)
			}
		}},
		{name: "propfind prop", method: "PROPFIND", path: "/", header: map[string]string{"Depth": "0"},
			body: `<?xml version="1.0"?><propfind xmlns="DAV:" xmlns:x="urn:x"><prop><resourcetype/><x:color/></prop></propfind>`, status: 207,
			check: func(t *testing.T, _ http.Header, b []byte) {
				if !bytes.Contains(b, []byte("<D:collection/>")) || !bytes.Contains(b, []byte(`<color xmlns="urn:x"/></D:prop><D:status>HTTP/1.1 404 Not Found`)) {
					t.Errorf("%s", b)
				}
			}},
		{name: "propfind propname", method: "PROPFIND", path: "/lat/data", header: map[string]string{"Depth": "0"},
			body: `<propfind xmlns="DAV:"><propname/></propfind>`, status: 207, check: func(t *testing.T, _ http.Header, b []byte) {
				if !bytes.Contains(b, []byte("<D:getcontentlength/>")) {
					t.Errorf("%s", b)
				}
			}},
		{name: "propfind infinity", method: "PROPFIND", path: "/", header: map[string]string{"Depth": "infinity"}, status: 403},
		{name: "propfind bad depth", method: "PROPFIND", path: "/", header: map[string]string{"Depth": "2"}, status: 400},
		{name: "propfind malformed", method: "PROPFIND", path: "/", header: map[string]string{"Depth": "0"}, body: "<propfind xmlns=\"DAV:\"><prop>", status: 400},
		{name: "propfind not propfind", method: "PROPFIND", path: "/", header: map[string]string{"Depth": "0"}, body: "<x/>", status: 400},
		{name: "propfind empty propfind", method: "PROPFIND", path: "/", header: map[string]string{"Depth": "0"}, body: `<propfind xmlns="DAV:"/>`, status: 400},
		{name: "propfind huge", method: "PROPFIND", path: "/", header: map[string]string{"Depth": "0"}, body: strings.Repeat(" ", maxPropfindBody+1), status: 413},
		{name: "put", method: "PUT", path: "/temperature/data", body: "x", status: 405},
		{name: "put new", method: "PUT", path: "/new", body: "x", status: 405},
		{name: "delete", method: "DELETE", path: "/temperature", status: 405},
		{name: "mkcol", method: "MKCOL", path: "/new", status: 405},
		{name: "move", method: "MOVE", path: "/lat", header: map[string]string{"Destination": "/lat2"}, status: 405},
		{name: "copy", method: "COPY", path: "/lat", header: map[string]string{"Destination": "/lat2"}, status: 405},
		{name: "proppatch", method: "PROPPATCH", path: "/lat", body: `<propertyupdate xmlns="DAV:"/>`, status: 405},
		{name: "lock", method: "LOCK", path: "/lat", status: 405},
		{name: "unlock", method: "UNLOCK", path: "/lat", status: 405},
		{name: "post", method: "POST", path: "/lat", status: 405},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, d.url, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			req.URL.Opaque = c.path // sent as written, not cleaned or escaped again
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			c0 := *d.c
			c0.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			resp, err := c0.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status {
				t.Fatalf("%s %s: %s, want %d: %s", c.method, c.path, resp.Status, c.status, b)
			}
			if c.check != nil {
				c.check(t, resp.Header, b)
			}
		})
	}
	// Nothing changed.
	if got := d.read(t, "temperature/data"); !bytes.Equal(got, data) {
		t.Error("temperature/data changed")
	}
	if _, ms := d.propfind(t, "/", "1", ""); len(ms.Responses) == 0 || strings.Contains(fmt.Sprint(ms), "new") || strings.Contains(fmt.Sprint(ms), "lat2") {
		t.Errorf("the root changed: %v", ms)
	}
}

// A client that goes away in the middle of a read does not stop the
// server, and a thousand connections at once are all answered while the
// server's goroutines and memory stay bounded.
func TestWebDAVManyClients(t *testing.T) {
	d, _ := newDAV(t)
	u, _ := url.Parse(d.url)
	// Disconnect in the middle of the largest file.
	for range 5 {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET /temperature/data HTTP/1.1\r\nHost: x\r\n\r\n")
		buf := make([]byte, 4096)
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	want := d.read(t, "lat/data")
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapInuse
	tr := &http.Transport{MaxIdleConnsPerHost: 1000, MaxConnsPerHost: 0}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for range 1000 {
		wg.Go(func() {
			resp, err := c.Get(d.url + "/lat/data")
			if err != nil {
				errs <- err
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || !bytes.Equal(b, want) {
				errs <- fmt.Errorf("%d bytes, %v", len(b), err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if grown := int64(ms.HeapInuse) - int64(before); grown > 64<<20 {
		t.Errorf("the heap grew by %d MiB serving 1000 clients", grown>>20)
	}
}
