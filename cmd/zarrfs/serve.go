package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	netserve "github.com/zarrfs/zarrfs/serve"
	"github.com/zarrfs/zarrfs/view"
)

// serveSpec is what `zarrfs serve webdav|nfs` is told: where to listen,
// and the flags of the engine and the store a mount takes too.
type serveSpec struct {
	proto       string // "webdav" or "nfs"
	addr        string
	allowRemote bool
	mf          mountFlags // only the engine's, the views' and the log's flags are registered
	sf          *storeFlags
}

// defaultAddrs are the addresses each protocol listens on by default:
// loopback, for what is unauthenticated.
var defaultAddrs = map[string]string{"webdav": "127.0.0.1:8080", "nfs": "127.0.0.1:2049"}

func (s *serveSpec) register(fl *pflag.FlagSet) {
	fl.StringVar(&s.addr, "addr", defaultAddrs[s.proto], "address to listen on, HOST:PORT (port 0: any free port)")
	fl.BoolVar(&s.allowRemote, "allow-remote", false, "allow an --addr that is not a loopback address: the server is read-only but anyone who reaches it can read the store")
	m := &s.mf
	m.cacheSize = sizeValue(defaultCacheSize())
	fl.Var(&m.cacheSize, "cache-size", "size of the decoded-chunk cache (e.g. 1GiB; 0 disables it; default 1GiB or a quarter of RAM if less)")
	fl.StringVar(&m.logFile, "log-file", "", "append log lines to this file instead of standard error")
	fl.BoolVar(&m.previews, "previews", true, "show preview.png, a picture of the data, in numeric arrays' directories")
	m.previewBudget = view.DefaultPreviewBudget
	fl.Var(&m.previewBudget, "preview-budget", "most decoded chunks one preview.png reads (e.g. 256MiB); arrays over it have none, OME-Zarr levels use a smaller level")
	fl.DurationVar(&m.live, "live", 0, "for a store that changes: read metadata, listings and chunks again once they are older than this (e.g. 30s); 0 caches them for the server's life")
	s.sf = storeFlagsFor(fl)
}

// serveCommand is `zarrfs serve`, whose subcommands are the protocols.
var serveCommand = command{
	name: "serve", args: "webdav|nfs [flags] STORE",
	short: "serve STORE's tree over WebDAV/HTTP or NFSv3, where FUSE is not (read-only)",
	summary: "Serve the tree a mount of STORE shows, read-only and unauthenticated, over WebDAV/HTTP\n" +
		"(browsers, curl, GDAL /vsicurl/, fsspec, rclone, Finder, Windows Explorer) or NFSv3 with\n" +
		"its MOUNT protocol on the same port (the Linux and macOS kernels' own clients, libnfs).\n" +
		"Listens on 127.0.0.1 unless --addr and --allow-remote say otherwise; SIGINT or SIGTERM stops.",
	sub: []command{
		serveProtocol("webdav", "serve STORE over WebDAV/HTTP (read-only; 127.0.0.1:8080 unless --addr)"),
		serveProtocol("nfs", "serve STORE over NFSv3 + MOUNT on one port (read-only; 127.0.0.1:2049 unless --addr)"),
	},
}

// serveProtocol is `zarrfs serve PROTO`.
func serveProtocol(proto, short string) command {
	return command{
		name: proto, args: "[flags] STORE", nargs: [2]int{1, 1}, short: short,
		summary: short + ".\nPrints how to mount or open it, then serves until SIGINT or SIGTERM.",
		flags: func(fl *pflag.FlagSet) func(context.Context, *env, []string) error {
			s := &serveSpec{proto: proto}
			s.register(fl)
			return func(ctx context.Context, e *env, args []string) error { return s.run(ctx, e, args[0]) }
		},
	}
}

// checkAddr refuses an address that is not loopback unless allowed.
func checkAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", addr, err)
	}
	if allowRemote {
		return nil
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--addr %s is not a loopback address: the server is unauthenticated, so anyone who reaches it could read the store; add --allow-remote to mean it", addr)
}

// run opens STORE and serves it until a signal.
func (s *serveSpec) run(ctx context.Context, e *env, spec string) error {
	if err := checkAddr(s.addr, s.allowRemote); err != nil {
		return err
	}
	logger, closeLog, err := s.mf.logger(e)
	if err != nil {
		return err
	}
	defer closeLog()
	o, e, err := openServed(ctx, e, spec, s.sf, &s.mf, logger)
	if err != nil {
		return err
	}
	defer o.close()
	s.mf.setMemoryLimit()
	tree, err := netserve.NewTree(o.h, netserve.Config{
		Views:  view.Config{Previews: s.mf.previews, PreviewBudget: int64(s.mf.previewBudget), RootInfo: o.rootInfo()},
		Live:   s.mf.live,
		Reopen: o.reopen,
		Logger: logger,
		UID:    currentUID(),
		GID:    currentGID(),
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer startProfile(logger)()
	if s.proto == "nfs" {
		return serveNFS(e, tree, ln, o.spec, logger)
	}
	return serveWebDAV(e, tree, ln, o.spec, logger)
}

// currentUID and currentGID own the served files: the user who serves
// (0 where there are no such ids, as on Windows).
func currentUID() uint32 { return uint32(max(os.Getuid(), 0)) }
func currentGID() uint32 { return uint32(max(os.Getgid(), 0)) }

// hostOf returns the host clients reach a listener at: its address, or
// HOST where it listens on every address.
func hostOf(ln net.Listener) (host, port string) {
	host, port, _ = net.SplitHostPort(ln.Addr().String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "HOST"
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host, port
}

// webdavHelp prints where the WebDAV server is and how to open it.
func webdavHelp(w io.Writer, spec, url string) {
	fmt.Fprintf(w, "zarrfs: serving %s read-only over WebDAV/HTTP at %s\n", spec, url)
	fmt.Fprintf(w, "  browser, curl:  curl %sPATH\n", url)
	fmt.Fprintf(w, "  GDAL:           gdalinfo /vsicurl/%sARRAY/data\n", url)
	fmt.Fprintf(w, "  rclone:         rclone ls :webdav: --webdav-url %s\n", url)
	fmt.Fprintf(w, "  Linux (davfs2): mount -t davfs -o ro %s MNT\n", url)
	fmt.Fprintf(w, "  macOS Finder:   Go > Connect to Server > %s\n", url)
	fmt.Fprintf(w, "  Windows:        net use Z: %s\n", url)
}

// serveWebDAV serves the tree over WebDAV on ln until a signal, then lets
// the requests under way end (for at most shutdownGrace).
func serveWebDAV(e *env, tree *netserve.Tree, ln net.Listener, spec string, logger *log.Logger) error {
	srv := netserve.NewWebDAV(tree).Server()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	host, port := hostOf(ln)
	webdavHelp(e.stdout, spec, fmt.Sprintf("http://%s:%s/", host, port))
	select {
	case err := <-done:
		return err
	case sig := <-e.signals:
		logger.Printf("%v: stopping the WebDAV server", sig)
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		srv.Close()
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// shutdownGrace is how long a server told to stop lets the requests under
// way finish.
const shutdownGrace = 5 * time.Second

// nfsHelp prints where the NFS server is and how to mount it.
func nfsHelp(w io.Writer, spec, host, port string) {
	fmt.Fprintf(w, "zarrfs: serving %s read-only over NFSv3 at %s:%s (MOUNT on the same port)\n", spec, host, port)
	fmt.Fprintf(w, "  Linux:  mount -t nfs -o vers=3,tcp,port=%s,mountport=%s,nolock,ro %s:/ MNT\n", port, port, host)
	fmt.Fprintf(w, "  macOS:  mount_nfs -o vers=3,tcp,port=%s,mountport=%s,nolocks,rdonly %s:/ MNT\n", port, port, host)
	fmt.Fprintf(w, "  libnfs: nfs-ls 'nfs://%s/?version=3&nfsport=%s&mountport=%s'\n", host, port, port)
}

// serveNFS serves the tree over NFS on ln until a signal.
func serveNFS(e *env, tree *netserve.Tree, ln net.Listener, spec string, logger *log.Logger) error {
	srv := netserve.NewNFS(tree)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	host, port := hostOf(ln)
	nfsHelp(e.stdout, spec, host, port)
	select {
	case err := <-done:
		return err
	case sig := <-e.signals:
		logger.Printf("%v: stopping the NFS server", sig)
	}
	srv.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}
