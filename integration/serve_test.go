package integration

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// The served trees (zarrfs serve webdav|nfs) read through clients nobody
// here wrote, against the FUSE mount of the same store: every file listed
// with its size and read byte for byte.

// served is a running `zarrfs serve`.
type served struct {
	cmd    *exec.Cmd
	stderr *peertest.Buffer
	first  string // the first line it printed
	exited chan struct{}
	err    error
}

// startServe runs `zarrfs serve PROTO --addr 127.0.0.1:0 [flags] STORE` and
// waits for the line saying where it listens; it is stopped with SIGTERM
// in t.Cleanup, which checks that it exits cleanly.
func startServe(t testing.TB, proto, store string, flags ...string) *served {
	t.Helper()
	args := append(append([]string{"serve", proto, "--addr", "127.0.0.1:0"}, flags...), store)
	s := &served{cmd: exec.Command(zarrfsBin, args...), stderr: &peertest.Buffer{}, exited: make(chan struct{})}
	s.cmd.Stderr = s.stderr
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		first := true
		for sc.Scan() {
			if first {
				lines <- sc.Text()
				first = false
			}
		}
		s.err = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() { s.stop(t) })
	select {
	case s.first = <-lines:
	case <-s.exited:
		t.Fatalf("zarrfs %s exited: %v\n%s", strings.Join(args, " "), s.err, s.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("zarrfs %s: not serving after 30 s\n%s", strings.Join(args, " "), s.stderr.String())
	}
	return s
}

// stop sends SIGTERM and checks that the server exits 0 within 10 s.
func (s *served) stop(t testing.TB) {
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		if s.err != nil {
			t.Errorf("zarrfs serve after SIGTERM: %v\n%s", s.err, s.stderr.String())
		}
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
		t.Errorf("zarrfs serve: still running 10 s after SIGTERM")
	}
}

var urlRE = regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)

// url is the WebDAV server's URL, from its first line.
func (s *served) url(t testing.TB) string {
	u := urlRE.FindString(s.first)
	if u == "" {
		t.Fatalf("no URL in %q", s.first)
	}
	return u
}

// mountedFiles returns every file under dir with its bytes, by slash path.
func mountedFiles(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// sameFiles checks that got holds exactly want's files with want's bytes.
func sameFiles(t testing.TB, client string, got, want map[string][]byte) {
	t.Helper()
	if len(want) < 50 {
		t.Fatalf("the mount shows only %d files", len(want))
	}
	var missing, extra, differ []string
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			missing = append(missing, p)
		case !bytes.Equal(g, w):
			differ = append(differ, fmt.Sprintf("%s (%d bytes, mount %d)", p, len(g), len(w)))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			extra = append(extra, p)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	sort.Strings(differ)
	if len(missing)+len(extra)+len(differ) > 0 {
		t.Errorf("%s: missing %v; not in the mount %v; different %v", client, missing, extra, differ)
	}
}

// exampleMounted writes the example hierarchy and mounts it, returning the
// store and every file of the mount.
func exampleMounted(t testing.TB) (string, map[string][]byte) {
	t.Helper()
	store := filepath.Join(t.TempDir(), "example")
	mustZarrfs(t, "example", store)
	m := mountStore(t, store)
	return store, mountedFiles(t, m.dir)
}

// rclone (a WebDAV client), curl (ranges) and GDAL's /vsicurl/ (data.hdr
// found beside data) read the WebDAV server's tree as the mount shows it.
func TestServeWebDAVClients(t *testing.T) {
	peertest.NeedCommands(t, "rclone", "rclone")
	store, want := exampleMounted(t)
	s := startServe(t, "webdav", store)
	u := s.url(t)

	// rclone lists every file with its size and copies every byte.
	dst := filepath.Join(t.TempDir(), "copy")
	run(t, "rclone", "copy", "--config", "/dev/null", "--webdav-url", u, ":webdav:", dst)
	sameFiles(t, "rclone copy", mountedFiles(t, dst), want)
	lsl := run(t, "rclone", "lsl", "--config", "/dev/null", "--webdav-url", u, ":webdav:")
	for p, b := range want {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^ *%d .* %s$`, len(b), regexp.QuoteMeta(p))).Match(lsl) {
			t.Errorf("rclone lsl: no line for %s of %d bytes", p, len(b))
		}
	}

	t.Run("curl", func(t *testing.T) {
		peertest.NeedCommands(t, "curl", "curl")
		data := want["temperature/data"]
		got := run(t, "curl", "-sSf", "-r", "1000-200999", u+"temperature/data")
		sameBytes(t, "curl -r 1000-200999", got, data[1000:201000])
		code := run(t, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-r", fmt.Sprintf("%d-", len(data)), u+"temperature/data")
		if string(code) != "416" {
			t.Errorf("curl of a range past the end: %s, want 416", code)
		}
		code = run(t, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "DELETE", u+"temperature/data")
		if string(code) != "405" {
			t.Errorf("curl -X DELETE: %s, want 405", code)
		}
		code = run(t, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--path-as-is", u+"temperature/../lat/data")
		if string(code) != "400" {
			t.Errorf("curl of a path with ..: %s, want 400", code)
		}
	})

	t.Run("gdal", func(t *testing.T) {
		peertest.NeedCommands(t, "gdal-bin", "gdalinfo")
		for _, arr := range []string{"temperature", "image"} {
			viaHTTP := run(t, "gdalinfo", "-checksum", "/vsicurl/"+u+arr+"/data")
			if !bytes.Contains(viaHTTP, []byte("Driver: ENVI")) || !bytes.Contains(viaHTTP, []byte("Checksum=")) {
				t.Errorf("gdalinfo /vsicurl/ %s/data: not read as ENVI with data.hdr:\n%s", arr, viaHTTP)
			}
			sums := regexp.MustCompile(`Checksum=\d+`).FindAll(viaHTTP, -1)
			local := filepath.Join(t.TempDir(), "data")
			os.WriteFile(local, want[arr+"/data"], 0o644)
			os.WriteFile(local+".hdr", want[arr+"/data.hdr"], 0o644)
			wantSums := regexp.MustCompile(`Checksum=\d+`).FindAll(run(t, "gdalinfo", "-checksum", local), -1)
			if fmt.Sprint(sums) != fmt.Sprint(wantSums) || len(sums) == 0 {
				t.Errorf("%s: checksums over HTTP %s, of the mount's bytes %s", arr, sums, wantSums)
			}
		}
	})
}

// A server asked to listen beyond loopback refuses unless told it may.
func TestServeRefusesRemoteAddr(t *testing.T) {
	store := filepath.Join(t.TempDir(), "example")
	mustZarrfs(t, "example", store)
	for _, proto := range []string{"webdav", "nfs"} {
		r := runZarrfs(t, "serve", proto, "--addr", "0.0.0.0:0", store)
		if r.err == nil || !strings.Contains(string(r.stderr), "--allow-remote") || bytes.Count(r.stderr, []byte("\n")) != 1 {
			t.Errorf("serve %s --addr 0.0.0.0:0: %v, %q", proto, r.err, r.stderr)
		}
	}
}

var portRE = regexp.MustCompile(`127\.0\.0\.1:(\d+)`)

// port is the NFS server's port, from its first line.
func (s *served) port(t testing.TB) string {
	m := portRE.FindStringSubmatch(s.first)
	if m == nil {
		t.Fatalf("no port in %q", s.first)
	}
	return m[1]
}

// libnfs's nfs-ls and nfs-cat (which MOUNT the directory of the file they
// read, after asking for the exports) and the Linux kernel's NFS client,
// where this kernel has one, read the NFS server's tree as the mount
// shows it.
func TestServeNFSClients(t *testing.T) {
	peertest.NeedCommands(t, "libnfs-utils", "nfs-ls", "nfs-cat")
	store, want := exampleMounted(t)
	s := startServe(t, "nfs", store)
	port := s.port(t)
	url := func(p string) string {
		if p != "" && !strings.Contains(p, "/") {
			// libnfs 4.0 mounts "" for nfs://HOST/FILE and then fails
			// on its own ("mount_cb: (null)") after the server's MNT
			// succeeded; "//FILE" mounts "/".
			p = "/" + p
		}
		return fmt.Sprintf("nfs://127.0.0.1/%s?version=3&nfsport=%s&mountport=%s", p, port, port)
	}
	// nfs-ls -R: "MODE NLINK UID GID SIZE PATH" per entry.
	sizes := map[string]int{}
	for _, line := range strings.Split(string(run(t, "nfs-ls", "-R", url(""))), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || strings.HasPrefix(f[0], "d") {
			continue
		}
		n := 0
		fmt.Sscan(f[4], &n)
		sizes[strings.Join(f[5:], " ")] = n
	}
	got := map[string][]byte{}
	for p, b := range want {
		if n, ok := sizes[p]; !ok || n != len(b) {
			t.Errorf("nfs-ls -R: %s: size %d (listed %v), want %d", p, n, ok, len(b))
		}
		got[p] = run(t, "nfs-cat", url(p))
	}
	for p := range sizes {
		if _, ok := want[p]; !ok {
			got[p] = nil // listed but not in the mount: sameFiles says so
		}
	}
	sameFiles(t, "nfs-ls and nfs-cat", got, want)

	t.Run("kernel", func(t *testing.T) {
		fsys, _ := os.ReadFile("/proc/filesystems")
		if !regexp.MustCompile(`(?m)\snfs$`).Match(fsys) {
			t.Skip("this kernel has no NFS client (no nfs in /proc/filesystems)")
		}
		peertest.NeedCommands(t, "nfs-common", "mount.nfs")
		if os.Getuid() != 0 {
			t.Skip("mounting NFS needs root")
		}
		mnt := t.TempDir()
		run(t, "mount", "-t", "nfs", "-o", fmt.Sprintf("vers=3,tcp,port=%s,mountport=%s,nolock,ro", port, port), "127.0.0.1:/", mnt)
		defer exec.Command("umount", "-l", mnt).Run()
		sameFiles(t, "the kernel's NFS client", mountedFiles(t, mnt), want)
	})
}
