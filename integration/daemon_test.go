package integration

import (
	"bytes"
	"errors"
	"net"
	nethttp "net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/remote/remotetest"
)

// The tests of the mount(8) form and the daemon (issue 29): zarrfs STORE
// MOUNTPOINT -o OPTIONS, mount --daemon, mount -t fuse.zarrfs and fstab
// lines through mount.fuse3, and the install and the package.

// daemonsAt returns the live (not zombie) zarrfs processes whose command
// line names mnt.
func daemonsAt(mnt string) []int {
	var pids []int
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(mnt)) || !bytes.Contains(cmdline, []byte("zarrfs")) {
			continue
		}
		// The state is the field after the parenthesised command name.
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); err != nil || i < 0 || bytes.HasPrefix(stat[i+1:], []byte(" Z")) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// waitNoDaemon waits up to limit for every zarrfs process serving mnt to
// exit, and fails t when one is left.
func waitNoDaemon(t *testing.T, mnt string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		pids := daemonsAt(mnt)
		if len(pids) == 0 {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Errorf("zarrfs processes %v still serve %s %v later", pids, mnt, limit)
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			return time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// daemonMount makes an example store and an empty mount point, and
// unmounts and ends any daemon left at the end of t.
func daemonMount(t *testing.T) (store, mnt string) {
	t.Helper()
	needFuse(t)
	dir := t.TempDir()
	store, mnt = filepath.Join(dir, "example"), filepath.Join(dir, "mnt")
	mustZarrfs(t, "example", store)
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		unmount(mnt)
		for _, pid := range daemonsAt(mnt) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return store, mnt
}

// checkServes checks that mnt shows the example store: a listing and the
// bytes zarrfs cat gives for one array.
func checkServes(t *testing.T, store, mnt string) {
	t.Helper()
	if !isMountpoint(mnt) {
		t.Fatalf("%s is not mounted", mnt)
	}
	arr := exampleArray(t, store)
	got, err := os.ReadFile(filepath.Join(mnt, arr, "data"))
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, arr+"/data", got, mustZarrfs(t, "cat", store, arr))
}

// checkNothingLeft checks that a refused mount left mnt as it was: not a
// mount point, not a dead mount (ENOTCONN), and no zarrfs serving it.
func checkNothingLeft(t *testing.T, mnt string) {
	t.Helper()
	if _, err := os.Stat(mnt); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat %s: %v", mnt, err)
	}
	if isMountpoint(mnt) {
		t.Errorf("%s is mounted", mnt)
	}
	waitNoDaemon(t, mnt, 2*time.Second)
}

// TestDaemonMountForm runs the mount(8) form and zarrfs mount --daemon:
// each returns once the mount answers, with nothing on its standard
// streams, and leaves a daemon serving the store until umount,
// fusermount3 -u or SIGTERM ends it.
func TestDaemonMountForm(t *testing.T) {
	for _, tc := range []struct {
		name string
		args func(store, mnt, log string) []string
		end  func(t *testing.T, mnt string)
	}{
		{"form-umount", func(store, mnt, log string) []string {
			return []string{store, mnt, "-o", "ro,defaults,_netdev,nofail,cache_size=64MiB,store_timeout=5s,log_file=" + log}
		}, func(t *testing.T, mnt string) { run(t, "umount", mnt) }},
		{"form-fusermount3", func(store, mnt, log string) []string {
			return []string{"-o", "ro", store, mnt, "--log-file", log, "-o", "nodev,nosuid,x-systemd.automount"}
		}, func(t *testing.T, mnt string) { run(t, "fusermount3", "-u", mnt) }},
		{"daemon-sigterm", func(store, mnt, log string) []string {
			return []string{"mount", "--daemon", "--log-file", log, store, mnt}
		}, func(t *testing.T, mnt string) {
			pids := daemonsAt(mnt)
			if len(pids) != 1 {
				t.Fatalf("zarrfs processes serving %s: %v, want one", mnt, pids)
			}
			syscall.Kill(pids[0], syscall.SIGTERM)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, mnt := daemonMount(t)
			logFile := filepath.Join(t.TempDir(), "zarrfs.log")
			start := time.Now()
			// runZarrfs waits for the standard streams to close too: a
			// daemon that kept them would hold it for two minutes.
			r := runZarrfs(t, tc.args(store, mnt, logFile)...)
			took := time.Since(start)
			if r.err != nil || len(r.stdout) != 0 || len(r.stderr) != 0 {
				t.Fatalf("status %v, stdout %q, stderr %q; want 0 and nothing", r.err, r.stdout, r.stderr)
			}
			t.Logf("returned, mounted, in %v", took)
			checkServes(t, store, mnt)
			if pids := daemonsAt(mnt); len(pids) != 1 {
				t.Errorf("zarrfs processes serving %s: %v, want one", mnt, pids)
			}
			tc.end(t, mnt)
			t.Logf("daemon gone %v after the unmount", waitNoDaemon(t, mnt, 5*time.Second))
			if isMountpoint(mnt) {
				t.Errorf("%s still mounted", mnt)
			}
			log, _ := os.ReadFile(logFile)
			if !strings.Contains(string(log), "mounted dir "+store+" at "+mnt) {
				t.Errorf("the log file does not say it mounted:\n%s", log)
			}
		})
	}
}

// TestDaemonMountFormRW: the options mount(8) passes without ro (rw,
// with mount.fuse3's dev,suid) and an fstab line's defaults mount
// read-only; rw says so in one line on the caller's standard error.
func TestDaemonMountFormRW(t *testing.T) {
	for _, tc := range []struct {
		opts, notice string
	}{
		{"rw,dev,suid", "mounting read-only (option rw)\n"},
		{"defaults", ""},
	} {
		t.Run(tc.opts, func(t *testing.T) {
			store, mnt := daemonMount(t)
			logFile := filepath.Join(t.TempDir(), "zarrfs.log")
			r := runZarrfs(t, store, mnt, "-o", tc.opts, "--log-file", logFile)
			if r.err != nil || len(r.stdout) != 0 || strings.Count(string(r.stderr), "\n") != min(len(tc.notice), 1) || !strings.HasSuffix(string(r.stderr), tc.notice) {
				t.Fatalf("status %v, stdout %q, stderr %q; want 0 and one line ending %q", r.err, r.stdout, r.stderr, tc.notice)
			}
			t.Logf("stderr: %q", r.stderr)
			checkServes(t, store, mnt)
			info, err := os.ReadFile("/proc/self/mountinfo")
			if err != nil {
				t.Fatal(err)
			}
			checkReadOnly(t, info, mnt)
			run(t, "umount", mnt)
			waitNoDaemon(t, mnt, 5*time.Second)
		})
	}
}

// TestDaemonRefusals: every error before the daemon detaches reaches the
// caller's standard error as one line, with status 1, and leaves nothing
// mounted and no process behind.
func TestDaemonRefusals(t *testing.T) {
	store, mnt := daemonMount(t)
	missing := filepath.Join(t.TempDir(), "missing.zarr")
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		mnt  string
		want string
	}{
		{"missing store", []string{missing, mnt}, mnt, missing},
		{"missing store, --daemon", []string{"mount", "--daemon", missing, mnt}, mnt, missing},
		{"unknown option", []string{store, mnt, "-o", "ro,cache_sise=1GiB"}, mnt, `unknown option "cache_sise=1GiB"`},
		{"bad value", []string{store, mnt, "-o", "store_timeout=soon"}, mnt, `option "store_timeout=soon"`},
		{"missing mount point", []string{store, mnt + "-missing"}, mnt + "-missing", "no such file or directory"},
		{"mount point is a file", []string{store, file}, file, "not a directory"},
		{"unwritable log file", []string{store, mnt, "--log-file", "/proc/zarrfs.log"}, mnt, "log file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runZarrfs(t, tc.args...)
			var ee *exec.ExitError
			if !errors.As(r.err, &ee) || ee.ExitCode() != 1 || len(r.stdout) != 0 ||
				strings.Count(string(r.stderr), "\n") != 1 || !strings.Contains(string(r.stderr), tc.want) {
				t.Errorf("status %v, stdout %q, stderr %q; want 1 and one line with %q", r.err, r.stdout, r.stderr, tc.want)
			}
			checkNothingLeft(t, tc.mnt)
		})
	}
}

// TestDaemonHangingStore: --daemon over an HTTP store whose server accepts
// connections and never answers fails within the store timeout, with the
// error on the caller's standard error and no half-made mount.
func TestDaemonHangingStore(t *testing.T) {
	_, mnt := daemonMount(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	const timeout = 2 * time.Second
	url := "http://" + ln.Addr().String() + "/store.zarr"
	for _, args := range [][]string{
		{"mount", "--daemon", "--store-timeout", timeout.String(), url, mnt},
		{url, mnt, "-o", "ro,store_timeout=" + timeout.String()},
	} {
		start := time.Now()
		r := runZarrfs(t, args...)
		took := time.Since(start)
		if !isCleanExit1(r) || strings.Count(string(r.stderr), "\n") != 1 || !strings.Contains(string(r.stderr), ln.Addr().String()) {
			t.Errorf("%q: status %v, stderr %q; want 1 and one line naming the store", args, r.err, r.stderr)
		}
		if took > timeout+3*time.Second {
			t.Errorf("%q: failed after %v; want within the store timeout, %v", args, took, timeout)
		}
		t.Logf("%q: failed in %v: %s", args, took, bytes.TrimSpace(r.stderr))
		checkNothingLeft(t, mnt)
	}
}

// TestDaemonSyslog: a daemon without --log-file logs to syslog. Where no
// system logger holds /dev/log (containers, this sandbox), the test listens
// there itself and reads the daemon's lines; where one does, it checks
// that the daemon found it (no warning to the caller).
func TestDaemonSyslog(t *testing.T) {
	store, mnt := daemonMount(t)
	var got peertest.Buffer
	listening := true
	if st, err := os.Lstat("/dev/log"); err == nil {
		c, err := net.Dial("unixgram", "/dev/log")
		if err == nil {
			c.Close()
			listening = false
		} else if st.Mode()&os.ModeSocket != 0 && errors.Is(err, syscall.ECONNREFUSED) {
			os.Remove("/dev/log") // a socket nobody listens on (a test run killed before its cleanup)
		}
	}
	if listening {
		if os.Getuid() != 0 {
			t.Skip("no /dev/log and not root: cannot stand in for syslog")
		}
		conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: "/dev/log", Net: "unixgram"})
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove("/dev/log")
		defer conn.Close()
		go func() {
			buf := make([]byte, 64<<10)
			for {
				n, err := conn.Read(buf)
				if err != nil {
					return
				}
				got.Write(append(buf[:n:n], '\n'))
			}
		}()
	}
	r := runZarrfs(t, store, mnt, "-o", "ro")
	if r.err != nil || len(r.stderr) != 0 {
		t.Fatalf("status %v, stderr %q; want 0 and nothing (a daemon without syslog warns)", r.err, r.stderr)
	}
	run(t, "umount", mnt)
	waitNoDaemon(t, mnt, 5*time.Second)
	if !listening {
		t.Log("/dev/log is a system logger's: checked only that the daemon reached it, not what it logged")
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(got.String(), "mounted dir "+store+" at "+mnt) || !strings.Contains(got.String(), "zarrfs[") {
		if time.Now().After(deadline) {
			t.Fatalf("syslog did not get the daemon's line; it got:\n%s", got.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDaemonCallerGone: a caller killed, or interrupted, while its daemon
// is still opening a slow store leaves nothing behind: the daemon finds
// nobody to report to once it has mounted, unmounts and exits.
func TestDaemonCallerGone(t *testing.T) {
	store, mnt := daemonMount(t)
	url, srv := serveHTTP(t, store)
	srv.SetFault(func(*nethttp.Request, int64) remotetest.Action {
		return remotetest.Action{Delay: 300 * time.Millisecond}
	})
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			var out peertest.Buffer
			logFile := filepath.Join(t.TempDir(), "zarrfs.log")
			caller := exec.Command(zarrfsBin, url, mnt, "-o", "ro,store_timeout=30s,log_file="+logFile)
			caller.Stdout, caller.Stderr = &out, &out
			if err := caller.Start(); err != nil {
				t.Fatal(err)
			}
			// Once the child runs, the caller is waiting for it (and has
			// its signal handlers); the store's delay keeps it from
			// mounting for a while yet.
			for deadline := time.Now().Add(10 * time.Second); len(daemonsAt(mnt)) < 2; {
				if time.Now().After(deadline) {
					t.Fatalf("no daemon started within 10 s: %s", out.String())
				}
				time.Sleep(5 * time.Millisecond)
			}
			caller.Process.Signal(sig)
			start := time.Now()
			err := caller.Wait()
			if sig == syscall.SIGINT {
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out.String(), "interrupt before the mount answered") {
					t.Errorf("interrupted caller: %v, output %q; want status 1 and one line saying so", err, out.String())
				}
				if took := time.Since(start); took > 2*time.Second {
					t.Errorf("the interrupted caller took %v to return", took)
				}
			}
			t.Logf("daemon gone %v after its caller", waitNoDaemon(t, mnt, 30*time.Second))
			checkNothingLeft(t, mnt)
			// Killed, the caller leaves the daemon to find out by itself
			// (an interrupted one stops it, which may be before it mounts).
			log, _ := os.ReadFile(logFile)
			if sig == syscall.SIGKILL && !strings.Contains(string(log), "then unmounted it: the caller is gone") {
				t.Errorf("the daemon did not mount and then unmount; its log:\n%s", log)
			}
		})
	}
}

// TestMountInterruptedWhileOpening: SIGINT stops zarrfs while it waits
// for a store that never answers, with no --store-timeout to end the wait:
// the foreground mount exits, and an interrupted caller's daemon goes too.
func TestMountInterruptedWhileOpening(t *testing.T) {
	store, mnt := daemonMount(t)
	url, srv := serveHTTP(t, store)
	srv.SetFault(func(*nethttp.Request, int64) remotetest.Action { return remotetest.Action{Hang: true} })
	// requests counts every request so far (Counts resets): a request of
	// one subtest's process may arrive after it was counted.
	total := 0
	requests := func() int {
		for _, c := range srv.Counts() {
			total += c
		}
		return total
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"mount", []string{"mount", "--store-timeout", "0", url, mnt}},
		{"daemon", []string{url, mnt, "-o", "ro,store_timeout=0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out peertest.Buffer
			cmd := exec.Command(zarrfsBin, tc.args...)
			cmd.Stdout, cmd.Stderr = &out, &out
			before := requests()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(10 * time.Second); requests() <= before; {
				if time.Now().After(deadline) {
					t.Fatalf("no request to the store within 10 s: %s", out.String())
				}
				time.Sleep(5 * time.Millisecond)
			}
			start := time.Now()
			cmd.Process.Signal(syscall.SIGINT)
			err := cmd.Wait()
			took := time.Since(start)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out.String(), "interrupt") {
				t.Errorf("status %v, output %q; want 1 and a line saying it was interrupted", err, out.String())
			}
			if took > 2*time.Second {
				t.Errorf("exited %v after SIGINT", took)
			}
			t.Logf("exited %v after SIGINT: %s", took, strings.TrimSpace(out.String()))
			waitNoDaemon(t, mnt, 3*time.Second)
			checkNothingLeft(t, mnt)
		})
	}
}

// TestDaemonStaleMountpoint: a mount point left dead by a killed zarrfs is
// refused before the daemon detaches, naming the command that clears it,
// and the daemon does not stay.
func TestDaemonStaleMountpoint(t *testing.T) {
	store, mnt := daemonMount(t)
	m := startMount(t, mnt, "mount", store, mnt)
	m.signalAndWait(t, syscall.SIGKILL, 5*time.Second)
	r := runZarrfs(t, store, mnt, "-o", "ro")
	if !isCleanExit1(r) || strings.Count(string(r.stderr), "\n") != 1 || !strings.Contains(string(r.stderr), "fusermount3 -u "+mnt) {
		t.Errorf("status %v, stderr %q; want 1 and one line naming fusermount3 -u", r.err, r.stderr)
	}
	waitNoDaemon(t, mnt, 2*time.Second)
}
