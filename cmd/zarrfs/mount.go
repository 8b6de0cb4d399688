package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/zarrfs/zarrfs/fs"
	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/view"
	"github.com/zarrfs/zarrfs/zarr"
)

// detachGrace is how long, by default, a mount detached while files were
// open keeps serving them (--detach-grace).
const detachGrace = 30 * time.Second

// mountFlags are the flags of mount (and demo).
type mountFlags struct {
	cacheSize  sizeValue
	allowOther bool
	uid, gid   uint32
	debug      bool
	logFile    string
	grace      time.Duration
	// readahead is the kernel read-ahead window set as root (0 keeps the
	// kernel's); maxBackground the FUSE requests in flight.
	readahead     sizeValue
	maxBackground int
	// live is the TTL of what the mount shows, for stores that change
	// (0: cached for the mount's life).
	live time.Duration
	// previews shows preview.png in numeric arrays' directories, each
	// decoding at most previewBudget bytes of chunks.
	previews      bool
	previewBudget sizeValue
}

func (m *mountFlags) register(fl *pflag.FlagSet) {
	m.cacheSize = sizeValue(defaultCacheSize())
	fl.Var(&m.cacheSize, "cache-size", "size of the decoded-chunk cache (e.g. 2GiB; 0 disables it)")
	// The default depends on the machine: said once, in words, not as
	// the size of the machine that ran -h or made the man page.
	fl.Lookup("cache-size").DefValue = "1GiB, or a quarter of RAM if less"
	fl.BoolVar(&m.allowOther, "allow-other", false, "let other users read the mount (needs user_allow_other in /etc/fuse.conf unless root)")
	m.uid, m.gid = uint32(os.Getuid()), uint32(os.Getgid())
	fl.Var((*idValue)(&m.uid), "uid", "owner of the files in the mount (default: the user who mounts)")
	fl.Var((*idValue)(&m.gid), "gid", "group of the files in the mount (default: the user's group)")
	// The defaults are the caller's, not those of whoever ran -h or
	// generated the man page: said in the usage text, and no default is
	// shown (pflag prints none for "", and cobra's man pages no "=0").
	fl.Lookup("uid").DefValue, fl.Lookup("gid").DefValue = "", ""
	fl.BoolVar(&m.debug, "debug", false, "log every FUSE request")
	fl.StringVar(&m.logFile, "log-file", "", "append log lines to this file instead of standard error")
	fl.DurationVar(&m.grace, "detach-grace", detachGrace, "after SIGINT/SIGTERM with files open, serve them for at most this long")
	m.readahead = fs.DefaultReadaheadKiB << 10
	fl.Var(&m.readahead, "kernel-readahead", "kernel read-ahead window of the mount, set when running as root (0 keeps the kernel's 128KiB)")
	fl.IntVar(&m.maxBackground, "max-background", fs.DefaultMaxBackground, "FUSE requests the kernel may keep in flight in the background (read-ahead)")
	fl.BoolVar(&m.previews, "previews", true, "show preview.png, a picture of the data, in numeric arrays' directories")
	m.previewBudget = view.DefaultPreviewBudget
	fl.Var(&m.previewBudget, "preview-budget", "most decoded chunks one preview.png reads (e.g. 256MiB); arrays over it have none, OME-Zarr levels use a smaller level")
	fl.DurationVar(&m.live, "live", 0, "for a store that changes: read metadata, listings and chunks again once they are older than this (e.g. 30s); 0 caches them for the mount's life")
}

// idValue is a user or group id flag. Its default is the caller's, so it
// shows none: pflag prints no default for an empty DefValue of a Value of
// its own (it would print "(default )" for a Uint32Var's).
type idValue uint32

func (v *idValue) String() string { return strconv.FormatUint(uint64(*v), 10) }
func (v *idValue) Type() string   { return "uint32" }
func (v *idValue) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return fmt.Errorf("not a user or group id: %q", s)
	}
	*v = idValue(n)
	return nil
}

// defaultCacheSize is zarr.DefaultCacheSize, or a quarter of the
// machine's memory when that is less.
func defaultCacheSize() int64 {
	if ram := totalRAM(); ram > 0 && ram/4 < zarr.DefaultCacheSize {
		return ram / 4
	}
	return zarr.DefaultCacheSize
}

// setMemoryLimit tells the Go runtime to collect garbage harder as the
// heap nears the cache's size plus room for the chunks being decoded and
// the FUSE buffers, so that evicted chunks do not pile up (GOMEMLIMIT in
// the environment wins); then, after each collection, what the heap kept
// plus that room when that is less (gctuner.go): the heap of a large
// hierarchy's metadata does not grow to twice its size while a reader
// walks the tree. The function returned stops the tuning.
func (m *mountFlags) setMemoryLimit() (stop func()) {
	if os.Getenv("GOMEMLIMIT") != "" || m.cacheSize <= 0 {
		return func() {}
	}
	limit := int64(m.cacheSize) + memoryHeadroom
	debug.SetMemoryLimit(limit)
	return tuneGC(gcRoom, gcRoomShare, limit)
}

// tuneGC is startGCTuner; a test of the limit set first replaces it.
var tuneGC = startGCTuner

// startProfile writes a CPU profile of the mount to the file
// $ZARRFS_CPUPROFILE, when set, until the function it returns is called
// (make bench's profiles, BENCH.md).
func startProfile(logger *log.Logger) func() {
	heap := os.Getenv("ZARRFS_HEAPPROFILE")
	path := os.Getenv("ZARRFS_CPUPROFILE")
	if path == "" {
		return func() { writeHeapProfile(logger, heap) }
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		logger.Printf("cpu profile: %v", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		writeHeapProfile(logger, heap)
	}
}

// writeHeapProfile writes the heap profile of the mount as it ends to
// path, when set ($ZARRFS_HEAPPROFILE: what a mount keeps, BENCH.md).
func writeHeapProfile(logger *log.Logger, path string) {
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err == nil {
		runtime.GC()
		err = pprof.WriteHeapProfile(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		logger.Printf("heap profile: %v", err)
	}
}

// memoryHeadroom is the memory the mount may use beyond the chunk cache.
// Issue 9 bounds a mount's peak RSS by cache + 2 × cores × largest chunk +
// 64 MiB; the binary, stacks and runtime take about 10 MiB outside the
// heap, so the heap gets 40 MiB beyond the cache (TestStress measures it).
const memoryHeadroom = 40 << 20

// gcRoom is the room the GC tuner leaves above the heap the last
// collection kept (gctuner.go): less than memoryHeadroom, so that after
// find over 100,000 arrays the daemon stays under 1 KiB an array, and
// enough that the collector, which scans go-fuse's inodes each time,
// does not slow find beyond findfloor's pace (BENCH.md, Hierarchies of
// many arrays: 16 MiB made find 1.5 times slower).
const gcRoom = 24 << 20

// gcRoomShare makes the GC tuner's room at least a quarter of the heap
// kept: with a fixed room, find over 1,000,000 arrays (a heap of 600 MB)
// took 5.4 times findfloor's time, the collector scanning the heap for
// every 24 MiB of garbage (BENCH.md).
const gcRoomShare = 4

// options returns the engine options the flags ask for.
func (m *mountFlags) options() zarr.Options {
	size := int64(m.cacheSize)
	if size == 0 {
		size = -1 // the engine reads 0 as "default"; the flag's 0 disables
	}
	return zarr.Options{CacheSize: size, Live: m.live > 0}
}

// logger returns the logger the flags ask for and a function closing its
// file.
func (m *mountFlags) logger(e *env) (*log.Logger, func(), error) {
	if m.logFile == "" {
		return log.New(e.stderr, "zarrfs: ", log.LstdFlags), func() {}, nil
	}
	f, err := os.OpenFile(m.logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("log file: %w", err)
	}
	return log.New(f, "zarrfs: ", log.LstdFlags), func() { f.Close() }, nil
}

var mountCommand = command{
	name: "mount", args: "[flags] STORE MOUNTPOINT", nargs: [2]int{2, 2},
	short: "mount STORE in the foreground (or --daemon); SIGINT/SIGTERM unmount",
	summary: "Mount STORE read-only at MOUNTPOINT and serve it in the foreground until it is\n" +
		"unmounted; SIGINT or SIGTERM unmounts it (a second signal exits at once).\n" +
		"With --daemon, return once the mount answers and serve it in the background,\n" +
		"as `zarrfs STORE MOUNTPOINT` does. A folder that is already a mount point is refused.\n" +
		"\n" + mountLayout,
	flags: func(fl *pflag.FlagSet) func(context.Context, *env, []string) error {
		var m mountSpec
		m.register(fl)
		fl.BoolVar(&m.daemon, "daemon", false, "return once the mount answers and keep serving it in the background; log to --log-file, syslog or else a file under $XDG_STATE_HOME/zarrfs")
		return func(ctx context.Context, e *env, args []string) error {
			return m.run(ctx, e, args[0], args[1])
		}
	},
}

// mountLayout describes the files of a mount, for mount -h and the man
// pages (README.md, "The layout", says the same at length).
const mountLayout = `Every group is a folder and every array a folder holding:
  zarr.json, .zarray …  its metadata documents, byte for byte as stored
  data                  the decoded elements: C order, little-endian (prod(shape) × itemsize bytes)
  data.npy              the same behind a NumPy header: np.load(path, mmap_mode="r")
  data.txt              (instead of data) variable-length strings, one element per line
  info.txt              shape, type, chunks, codecs, fill value, attributes, for people
  preview.png           a picture of the data, for file managers and image viewers
  data.hdr              an ENVI header: GDAL and QGIS open data as a raster
  data.npy.hdr          the same for data.npy
  data.nhdr             a NRRD header: Fiji, 3D Slicer, ParaView open data
and every group with arrays of NetCDF types also dataset.nc, its arrays as one NetCDF file
(CDO, NCO, ncview, Panoply, xarray). Extended attributes user.zarr.* carry the metadata.
data.npy, dataset.nc and preview.png show the decoded bytes again: they report no disk blocks,
so du counts each array once, but cp -r copies each array once per view.`

// mount mounts the opened hierarchy at mountpoint, unless it is already a
// mount point (zarrfs would stack on it, hiding the first mount).
func (m *mountFlags) mount(o *opened, mountpoint string, logger *log.Logger) (*fs.Server, error) {
	if err := notMounted(mountpoint); err != nil {
		return nil, err
	}
	m.setMemoryLimit()
	srv, err := fs.Mount(mountpoint, o.h, fs.Config{
		FsName:     o.spec,
		AllowOther: m.allowOther,
		UID:        m.uid,
		GID:        m.gid,
		Debug:      m.debug,
		Logger:     logger,

		ReadaheadKiB:  int(m.readahead >> 10),
		MaxBackground: m.maxBackground,

		Live:   m.live,
		Reopen: o.reopen,

		Views: view.Config{Previews: m.previews, PreviewBudget: int64(m.previewBudget), RootInfo: o.rootInfo()},
	})
	if err != nil {
		return nil, store.Errorf(o.st, err, "")
	}
	spareProcessor()
	// What opening read and dropped (a large .zmetadata is read whole,
	// then indexed) goes back to the system now: the heap would reuse
	// those pages, but the process's peak would keep them on top of
	// what walking a large tree adds (BENCH.md, Hierarchies of many
	// arrays).
	debug.FreeOSMemory()
	return srv, nil
}

// spareProcessor leaves the Go scheduler a processor that go-fuse's
// request readers cannot all hold, once the server has counted them:
// go-fuse lets one reader more than it counted processors (at least 2)
// wait for requests, each in a blocking read(2) that keeps its processor.
// When they hold every processor, the runtime's monitor takes processors
// back from them and, having taken one, keeps waking every 20 µs to look,
// which costs the daemon CPU time on every request (figures: BENCH.md,
// "A spare Go processor"). GOMAXPROCS in the environment wins.
func spareProcessor() {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	readers := max(runtime.GOMAXPROCS(0), 2) + 1
	runtime.GOMAXPROCS(readers + 1)
}

// serve waits until the mount is unmounted from outside or a signal
// arrives. On a signal it unmounts; when files are still open it detaches
// the mount lazily and keeps serving them until the last is closed, for at
// most grace, or until a second signal. ready, if not nil, is called once
// the mount is up.
func serve(e *env, srv *fs.Server, mountpoint string, grace time.Duration, logger *log.Logger, ready func(io.Writer)) error {
	done := make(chan struct{})
	go func() {
		srv.Wait()
		close(done)
	}()
	if ready != nil {
		ready(e.stdout)
	} else {
		fmt.Fprintf(e.stderr, "zarrfs: mounted at %s; Ctrl-C here or `zarrfs unmount %s` unmounts it\n",
			mountpoint, shellQuote(mountpoint))
	}
	select {
	case <-done:
		return nil
	case sig := <-e.signals:
		logger.Printf("%v: unmounting %s", sig, mountpoint)
	}
	if err := srv.Unmount(); err == nil {
		<-done
		return nil
	}
	if err := srv.Detach(); err != nil {
		return err
	}
	logger.Printf("files are still open: detached %s, serving them until they are closed (at most %v; signal again to exit now)",
		mountpoint, grace)
	select {
	case <-done:
	case <-time.After(grace):
		logger.Printf("grace period over: exiting with files still open")
	case sig := <-e.signals:
		logger.Printf("%v again: exiting with files still open", sig)
	}
	return nil
}

var unmountCommand = command{
	name: "unmount", args: "MOUNTPOINT", nargs: [2]int{1, 1},
	short:   "unmount a zarrfs mount",
	summary: "Unmount a zarrfs mount (the zarrfs mount process then exits).",
	flags: func(fl *pflag.FlagSet) func(context.Context, *env, []string) error {
		lazy := fl.BoolP("lazy", "z", false, "detach even while files are open")
		return func(_ context.Context, _ *env, args []string) error {
			return busyHint(fs.Unmount(args[0], *lazy), args[0])
		}
	},
}

// busyHint adds to an unmount's error, when the mount is busy, how to find
// what holds it and how to detach it anyway.
func busyHint(err error, mountpoint string) error {
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "busy") {
		return err
	}
	q := shellQuote(mountpoint)
	return fmt.Errorf("%w (files or folders in it are open: `fuser -vm %s` lists the processes; "+
		"`zarrfs unmount --lazy %s` detaches it now and it goes once they close them)", err, q, q)
}

// notMounted fails when mountpoint is already a live mount point (any
// file system, another zarrfs included), by /proc/self/mountinfo. A
// mount whose daemon is gone (fs.CheckMountpoint's statfs fails) is left
// to fs.Mount, which names the fusermount3 -u that clears it.
func notMounted(mountpoint string) error {
	abs, err := filepath.Abs(mountpoint)
	if err != nil {
		return nil
	}
	if fs.CheckMountpoint(abs) != nil {
		return nil
	}
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	if fstype, ok := mountedAt(string(info), abs); ok {
		return fmt.Errorf("%s is already a mount point (%s): unmount it first (zarrfs unmount %s) or choose another folder",
			mountpoint, fstype, shellQuote(mountpoint))
	}
	return nil
}

// mountedAt returns the file system type mounted at path according to
// the mountinfo text (proc(5): the fifth field is the mount point, octal
// escapes for spaces and such; the type follows the " - " separator).
func mountedAt(mountinfo, path string) (string, bool) {
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || unescapeMountinfo(f[4]) != path {
			continue
		}
		for i, x := range f {
			if x == "-" && i+1 < len(f) {
				return f[i+1], true
			}
		}
		return "unknown type", true
	}
	return "", false
}

// unescapeMountinfo undoes the \NNN octal escapes of mountinfo fields.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
