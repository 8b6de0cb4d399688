package integration

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// TestMountSIGTERM: with no open files, SIGTERM unmounts and exits 0
// within 5 s.
func TestMountSIGTERM(t *testing.T) {
	needFuse(t)
	store := filepath.Join(t.TempDir(), "example")
	mustZarrfs(t, "example", store)
	m := mountStore(t, store)
	err, took := m.signalAndWait(t, syscall.SIGTERM, 5*time.Second)
	if err != nil {
		t.Errorf("zarrfs mount exited with %v after SIGTERM\n%s", err, m.stderr.String())
	}
	if took > 5*time.Second {
		t.Errorf("exit took %v", took)
	}
	if isMountpoint(m.dir) {
		t.Error("still mounted after SIGTERM")
	}
}

// holderProgram opens a file, says "open", and on a line from standard
// input reads from the open descriptor, prints the bytes in hex and exits.
const holderProgram = `
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
print("open", flush=True)
sys.stdin.readline()
print(os.pread(fd, 16, 0).hex(), flush=True)
os.close(fd)
`

// TestMountSIGTERMWithOpenFile: SIGTERM while another process holds a file
// open detaches the mount at once; the holder can still read; zarrfs exits
// when it closes, within the grace period.
func TestMountSIGTERMWithOpenFile(t *testing.T) {
	needFuse(t)
	peertest.NeedPython(t)
	store := filepath.Join(t.TempDir(), "example")
	mustZarrfs(t, "example", store)
	arr := exampleArray(t, store)
	want := mustZarrfs(t, "cat", store, arr)
	m := mountStore(t, store)

	holder := exec.Command(peertest.Python, "-c", holderProgram, filepath.Join(m.dir, arr, "data"))
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	holder.Stderr = os.Stderr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		holder.Process.Kill()
		holder.Wait()
	}()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "open" {
		t.Fatalf("the holder did not open the file: %q", lines.Text())
	}
	start := time.Now()
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The mount point is detached promptly although a file is open.
	for isMountpoint(m.dir) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("still attached 5 s after SIGTERM with a file open")
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case <-m.exited:
		t.Fatalf("zarrfs exited (%v) while a file was still open", m.waitErr)
	default:
	}
	// The open descriptor still reads.
	fmt.Fprintln(stdin, "read")
	if !lines.Scan() {
		t.Fatal("the holder printed nothing after the read")
	}
	if got, wantHex := lines.Text(), fmt.Sprintf("%x", want[:min(16, len(want))]); got != wantHex {
		t.Errorf("read from the open descriptor after SIGTERM: %s, want %s", got, wantHex)
	}
	holder.Wait()
	select {
	case <-m.exited:
		if m.waitErr != nil {
			t.Errorf("zarrfs exited with %v", m.waitErr)
		}
	case <-time.After(35 * time.Second): // the grace period is 30 s
		t.Fatalf("zarrfs did not exit after the last file closed\n%s", m.stderr.String())
	}
}

// TestDemo: `zarrfs demo MNT` mounts the example and answers ls; SIGINT
// unmounts it and exits 0.
func TestDemo(t *testing.T) {
	needFuse(t)
	mnt := filepath.Join(t.TempDir(), "demo")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	m := startMount(t, mnt, "demo", mnt)
	out := run(t, "ls", mnt)
	if !strings.Contains(string(out), "info.txt") {
		t.Errorf("ls %s = %q, want the example's root with info.txt", mnt, out)
	}
	if n := len(strings.Fields(string(out))); n < 3 {
		t.Errorf("ls %s shows %d entries", mnt, n)
	}
	err, _ := m.signalAndWait(t, syscall.SIGINT, 5*time.Second)
	if err != nil {
		t.Errorf("zarrfs demo exited with %v after SIGINT\n%s", err, m.stderr.String())
	}
	if isMountpoint(mnt) {
		t.Error("still mounted after SIGINT")
	}
}
