package serve

import (
	"bufio"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/zarrfs/zarrfs/zarr"
)

// This file is the WebDAV/HTTP front end: RFC 4918 class 1, read-only.
// OPTIONS, PROPFIND (depth 0 and 1), GET and HEAD (with ranges, ETag and
// Last-Modified, by net/http's ServeContent) answer; every method that
// would change something answers 405 and changes nothing. A GET of a
// directory is a small HTML index, so that browsers, curl, GDAL's
// /vsicurl/ and fsspec's HTTP file system read the same server.

// readOnlyAllow is the Allow header of every answer.
const readOnlyAllow = "OPTIONS, GET, HEAD, PROPFIND"

// maxPropfindBody bounds the body of a PROPFIND request.
const maxPropfindBody = 1 << 20

// readBufSize is the size of the reads a GET makes of a file: large enough
// that a sequential reader costs the engine few calls, small enough that
// a thousand clients reading at once hold a bounded 256 MiB.
const readBufSize = 256 << 10

var readBufs = sync.Pool{New: func() any { b := make([]byte, readBufSize); return &b }}

// WebDAV is the read-only WebDAV/HTTP handler of a tree.
type WebDAV struct{ t *Tree }

// NewWebDAV returns the WebDAV handler of t.
func NewWebDAV(t *Tree) *WebDAV { return &WebDAV{t: t} }

// ServeHTTP answers one request.
func (d *WebDAV) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("DAV", "1")
	w.Header().Set("MS-Author-Via", "DAV")
	// An escaped slash or backslash would name something other than the
	// path's segments say.
	if raw := strings.ToLower(r.URL.RawPath); strings.Contains(raw, "%2f") || strings.Contains(raw, "%5c") {
		d.fail(w, r, ErrBadPath)
		return
	}
	switch r.Method {
	case http.MethodOptions:
		w.Header().Set("Allow", readOnlyAllow)
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	case http.MethodGet, http.MethodHead:
		d.get(w, r)
	case "PROPFIND":
		d.propfind(w, r)
	default:
		// PUT, DELETE, MKCOL, MOVE, COPY, PROPPATCH, LOCK, UNLOCK, POST …
		w.Header().Set("Allow", readOnlyAllow)
		http.Error(w, "read-only: "+r.Method+" is not allowed", http.StatusMethodNotAllowed)
	}
}

// status returns the HTTP status of an error of the tree.
func status(err error) int {
	switch {
	case errors.Is(err, ErrBadPath):
		return http.StatusBadRequest
	case errors.Is(err, zarr.ErrNotExist):
		return http.StatusNotFound
	case errors.Is(err, zarr.ErrNotListable):
		return http.StatusForbidden
	case errors.Is(err, zarr.ErrUnsupported):
		return http.StatusNotImplemented
	default:
		return http.StatusInternalServerError
	}
}

// fail answers with the status of err, logging it once.
func (d *WebDAV) fail(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // the client has gone
	}
	d.t.log.log(err)
	http.Error(w, oneLine(err.Error()), status(err))
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// etag is the entity tag of a node: its snapshot, path, size and time,
// which a store that does not change keeps for the server's life.
func etag(n Node, size int64) string {
	h := fnv.New64a()
	io.WriteString(h, n.Path)
	return fmt.Sprintf(`"%x-%x-%x-%x"`, n.Gen(), h.Sum64(), size, n.ModTime.UnixNano())
}

// contentType is a file's media type, from its name.
func contentType(name string) string {
	switch ext := path.Ext(name); ext {
	case ".txt", ".hdr", ".nhdr":
		return "text/plain; charset=utf-8"
	case ".json", ".zarray", ".zgroup", ".zattrs", ".zmetadata":
		return "application/json"
	case ".nc":
		return "application/x-netcdf"
	default:
		if t := mime.TypeByExtension(ext); t != "" && ext != "" {
			return t
		}
		return "application/octet-stream"
	}
}

// get answers GET and HEAD: a file's bytes (ranges included) or a
// directory's index.
func (d *WebDAV) get(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	n, err := d.t.Resolve(ctx, r.URL.Path)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	if n.IsDir() {
		d.index(w, r, n)
		return
	}
	if err := n.File.Check(ctx); err != nil {
		d.fail(w, r, err)
		return
	}
	size, err := n.File.Size(ctx)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(n, size))
	w.Header().Set("Content-Type", contentType(n.Name))
	rd := &fileReader{ctx: ctx, f: n, size: size}
	defer rd.release()
	http.ServeContent(w, r, n.Name, n.ModTime, rd)
	if rd.err != nil && ctx.Err() == nil {
		d.t.log.log(rd.err) // the status and headers are gone: log why the body stopped
	}
}

// fileReader reads a file for ServeContent, as an io.ReadSeeker, in reads
// of readBufSize whatever the size of the caller's.
type fileReader struct {
	ctx  context.Context
	f    Node
	size int64
	off  int64

	buf    *[]byte
	bufOff int64 // the file offset of (*buf)[0]
	bufLen int   // the valid bytes in *buf
	err    error // the error that ended a read
}

func (r *fileReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.size
	default:
		return 0, errors.New("seek: bad whence")
	}
	if offset < 0 {
		return 0, errors.New("seek: negative offset")
	}
	r.off = offset
	return offset, nil
}

func (r *fileReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	if r.buf == nil {
		r.buf = readBufs.Get().(*[]byte)
		r.bufLen = 0
	}
	if r.off < r.bufOff || r.off >= r.bufOff+int64(r.bufLen) {
		b := (*r.buf)[:min(int64(len(*r.buf)), r.size-r.off)]
		k, err := r.f.File.ReadAt(r.ctx, b, r.off)
		if k == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				return 0, io.ErrUnexpectedEOF // shorter than its size said
			}
			r.err = err
			return 0, err
		}
		r.bufOff, r.bufLen = r.off, k
	}
	k := copy(p, (*r.buf)[r.off-r.bufOff:r.bufLen])
	r.off += int64(k)
	return k, nil
}

func (r *fileReader) release() {
	if r.buf != nil {
		readBufs.Put(r.buf)
		r.buf = nil
	}
}

// href is the URL path of a node.
func href(n Node) string {
	u := (&url.URL{Path: "/" + n.Path}).EscapedPath()
	if n.IsDir() && !strings.HasSuffix(u, "/") {
		u += "/"
	}
	return u
}

// index answers a GET of a directory with an HTML list of its entries.
func (d *WebDAV) index(w http.ResponseWriter, r *http.Request, n Node) {
	if !strings.HasSuffix(r.URL.Path, "/") {
		// Relative links resolve against the directory only with it.
		http.Redirect(w, r, href(n), http.StatusMovedPermanently)
		return
	}
	es, err := d.t.List(r.Context(), n)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Last-Modified", n.ModTime.UTC().Format(http.TimeFormat))
	if r.Method == http.MethodHead {
		return
	}
	bw := bufio.NewWriter(w)
	title := html.EscapeString("/" + n.Path)
	fmt.Fprintf(bw, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title></head><body>\n<h1>%s</h1>\n<pre>\n", title, title)
	if n.Path != "" {
		fmt.Fprintf(bw, "<a href=\"../\">../</a>\n")
	}
	for _, e := range es {
		name := e.Name
		link := (&url.URL{Path: name}).EscapedPath()
		if strings.Contains(name, ":") {
			link = "./" + link // not a scheme
		}
		if e.IsDir() {
			name += "/"
			link += "/"
			fmt.Fprintf(bw, "<a href=\"%s\">%s</a>\n", html.EscapeString(link), html.EscapeString(name))
			continue
		}
		fmt.Fprintf(bw, "<a href=\"%s\">%s</a> %d\n", html.EscapeString(link), html.EscapeString(name), e.Size(r.Context()))
	}
	fmt.Fprintf(bw, "</pre>\n</body></html>\n")
	bw.Flush()
}

// propfindBody is a PROPFIND request's body (RFC 4918 §14.20).
type propfindBody struct {
	XMLName  xml.Name  `xml:"DAV: propfind"`
	Allprop  *struct{} `xml:"DAV: allprop"`
	Propname *struct{} `xml:"DAV: propname"`
	Prop     *struct {
		Names []struct {
			XMLName xml.Name
		} `xml:",any"`
	} `xml:"DAV: prop"`
}

// davProps are the live properties the server has, in the order allprop
// lists them. Files have all; directories all but the content's.
var davProps = []string{"displayname", "resourcetype", "getcontentlength", "getcontenttype", "getetag", "getlastmodified", "creationdate", "supportedlock"}

// fileOnly are the properties a directory does not have.
var fileOnly = map[string]bool{"getcontentlength": true, "getcontenttype": true, "getetag": true}

// propfind answers PROPFIND at depth 0 or 1; a request for the whole
// tree (Depth: infinity) is refused, as RFC 4918 §9.1 allows. A request
// without a Depth header is taken as depth 1, as clients that omit it
// mean.
func (d *WebDAV) propfind(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	depth := r.Header.Get("Depth")
	switch depth {
	case "0", "1":
	case "":
		depth = "1"
	case "infinity":
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, xml.Header+`<D:error xmlns:D="DAV:"><D:propfind-finite-depth/></D:error>`+"\n")
		return
	default:
		http.Error(w, "bad Depth header", http.StatusBadRequest)
		return
	}
	var req propfindBody
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPropfindBody))
	if err != nil {
		http.Error(w, "PROPFIND body: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		req.Allprop = &struct{}{}
	} else if err := xml.Unmarshal(body, &req); err != nil {
		http.Error(w, "malformed PROPFIND body: "+oneLine(err.Error()), http.StatusBadRequest)
		return
	} else if req.Allprop == nil && req.Propname == nil && req.Prop == nil {
		http.Error(w, "PROPFIND body: neither allprop, propname nor prop", http.StatusBadRequest)
		return
	}
	n, err := d.t.Resolve(ctx, r.URL.Path)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	nodes := []Node{n}
	if depth == "1" && n.IsDir() {
		es, err := d.t.List(ctx, n)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		nodes = append(nodes, es...)
	}
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(http.StatusMultiStatus)
	bw := bufio.NewWriter(w)
	bw.WriteString(xml.Header + `<D:multistatus xmlns:D="DAV:">` + "\n")
	for _, n := range nodes {
		if ctx.Err() != nil {
			return
		}
		writeResponse(ctx, bw, n, &req)
	}
	bw.WriteString("</D:multistatus>\n")
	bw.Flush()
}

// writeResponse writes the <response> of node n to a PROPFIND req.
func writeResponse(ctx context.Context, w *bufio.Writer, n Node, req *propfindBody) {
	w.WriteString("<D:response><D:href>")
	xml.EscapeText(w, []byte(href(n)))
	w.WriteString("</D:href>")
	var found, missing []string // found: DAV: names; missing: whole elements
	switch {
	case req.Prop != nil:
		for _, p := range req.Prop.Names {
			if p.XMLName.Space == "DAV:" && hasProp(n, p.XMLName.Local) {
				found = append(found, p.XMLName.Local)
			} else {
				missing = append(missing, emptyElement(p.XMLName))
			}
		}
	default:
		for _, p := range davProps {
			if hasProp(n, p) {
				found = append(found, p)
			}
		}
	}
	if len(found) > 0 {
		w.WriteString("<D:propstat><D:prop>")
		var size int64
		if n.File != nil {
			size = n.Size(ctx)
		}
		for _, p := range found {
			if req.Propname != nil {
				w.WriteString("<D:" + p + "/>")
				continue
			}
			writeProp(w, n, p, size)
		}
		w.WriteString("</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>")
	}
	if len(missing) > 0 {
		w.WriteString("<D:propstat><D:prop>")
		for _, m := range missing {
			w.WriteString(m)
		}
		w.WriteString("</D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>")
	}
	w.WriteString("</D:response>\n")
}

// hasProp reports whether node n has the DAV: property name.
func hasProp(n Node, name string) bool {
	if fileOnly[name] {
		return n.File != nil
	}
	for _, p := range davProps {
		if p == name {
			return true
		}
	}
	return false
}

// emptyElement is the element name with no content, in its namespace.
func emptyElement(name xml.Name) string {
	var b strings.Builder
	b.WriteString("<")
	xml.EscapeText(&b, []byte(name.Local))
	if name.Space != "" {
		b.WriteString(` xmlns="`)
		xml.EscapeText(&b, []byte(name.Space))
		b.WriteString(`"`)
	}
	b.WriteString("/>")
	return b.String()
}

// writeProp writes the value of the DAV: property p of node n (of length
// size, for a file).
func writeProp(w *bufio.Writer, n Node, p string, size int64) {
	switch p {
	case "displayname":
		w.WriteString("<D:displayname>")
		xml.EscapeText(w, []byte(n.Name))
		w.WriteString("</D:displayname>")
	case "resourcetype":
		if n.IsDir() {
			w.WriteString("<D:resourcetype><D:collection/></D:resourcetype>")
		} else {
			w.WriteString("<D:resourcetype/>")
		}
	case "getcontentlength":
		fmt.Fprintf(w, "<D:getcontentlength>%d</D:getcontentlength>", size)
	case "getcontenttype":
		w.WriteString("<D:getcontenttype>")
		xml.EscapeText(w, []byte(contentType(n.Name)))
		w.WriteString("</D:getcontenttype>")
	case "getetag":
		w.WriteString("<D:getetag>")
		xml.EscapeText(w, []byte(etag(n, size)))
		w.WriteString("</D:getetag>")
	case "getlastmodified":
		fmt.Fprintf(w, "<D:getlastmodified>%s</D:getlastmodified>", n.ModTime.UTC().Format(http.TimeFormat))
	case "creationdate":
		fmt.Fprintf(w, "<D:creationdate>%s</D:creationdate>", n.ModTime.UTC().Format(time.RFC3339))
	case "supportedlock":
		w.WriteString("<D:supportedlock/>")
	}
}

// Server returns the HTTP server of the handler, with the limits a server
// facing many clients needs: headers read within 10 s and at most 64 KiB
// of them, idle connections closed after 2 minutes.
func (d *WebDAV) Server() *http.Server {
	return &http.Server{
		Handler:           d,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          d.t.log.once.Logger,
	}
}
