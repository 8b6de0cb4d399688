package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs the command line in-process and returns the exit status and
// the output.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), &env{stdout: &out, stderr: &errOut}, args)
	return code, out.String(), errOut.String()
}

func TestUsage(t *testing.T) {
	code, out, _ := runCLI(t)
	if code != 2 || !strings.Contains(out, "zarrfs STORE MOUNTPOINT") || !strings.Contains(out, "\n  mount ") {
		t.Errorf("no arguments: status %d, usage %q", code, out)
	}
	if code, out, _ := runCLI(t, "-h"); code != 0 || !strings.Contains(out, "\n  demo ") {
		t.Errorf("-h: status %d, usage %q", code, out)
	}
	if code, _, errOut := runCLI(t, "frobnicate"); code != 2 || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: status %d, stderr %q", code, errOut)
	}
}

func TestSubcommandHelp(t *testing.T) {
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, c.name, "-h")
			if code != 0 || !strings.Contains(out, "Usage:\n  zarrfs "+c.name) || errOut != "" {
				t.Errorf("status %d, stdout %q, stderr %q", code, out, errOut)
			}
		})
	}
	_, out, _ := runCLI(t, "mount", "--help")
	_, root, _ := runCLI(t, "--help")
	for _, file := range []string{"data.npy.hdr", "dataset.nc", "preview.png", "info.txt"} {
		if !strings.Contains(out, file) || !strings.Contains(root, file) {
			t.Errorf("zarrfs -h or mount -h does not describe %s", file)
		}
	}
	for _, flag := range []string{"--cache-size", "--allow-other", "--uid", "--gid", "--debug", "--log-file"} {
		if !strings.Contains(out, flag) {
			t.Errorf("mount -h does not mention %s:\n%s", flag, out)
		}
	}
}

func TestArgumentErrors(t *testing.T) {
	for _, args := range [][]string{
		{"ls"},
		{"ls", "a", "b", "c"},
		{"info", "store"},
		{"cat", "store"},
		{"mount", "store"},
		{"unmount"},
		{"example"},
		{"demo", "a", "b"},
		{"tree", "--no-such-flag", "store"},
		{"mount", "--cache-size", "lots", "a", "b"},
	} {
		code, out, errOut := runCLI(t, args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "zarrfs "+args[0]+": ") {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want 2 and one line on stderr", args, code, out, errOut)
		}
	}
}

func TestMissingStore(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.zarr")
	for _, args := range [][]string{{"ls", missing}, {"tree", missing}, {"info", missing, "a"}, {"cat", missing, "a"}} {
		code, out, errOut := runCLI(t, args...)
		if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, missing) {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want 1 and one line naming the store", args, code, out, errOut)
		}
	}
}

func TestExampleRefusesNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "example", dir)
	if code != 1 || !strings.Contains(errOut, "not empty") {
		t.Errorf("status %d, stderr %q", code, errOut)
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine("a: b\n  c\r\nd\n"); got != "a: b c d" {
		t.Errorf("oneLine = %q", got)
	}
}

// TestMistypedCommand: a word that cannot be a STORE and is close to a
// subcommand is named as an unknown command with the suggestion (with 2
// arguments, the mount(8) form's error about the STORE gets it as a hint);
// an existing file is a STORE.
func TestMistypedCommand(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"mnt", "a", "b"}, 2, `zarrfs: unknown command "mnt": did you mean "mount"? (see zarrfs -h)`},
		{[]string{"mount-it", "a", "b", "c"}, 2, `zarrfs: unknown command "mount-it" (see zarrfs -h)`},
	} {
		code, _, errOut := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: status %d, stderr %q; want %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
	// Two words are the mount(8) form, which would start a daemon here:
	// the hint its error gets is checked without running it.
	root := newRoot(&env{})
	for word, want := range map[string]string{"lss": "ls", "treee": "tree", "xyzzy": ""} {
		if got := suggestion(root, []string{word, "a"}); got != want {
			t.Errorf("suggestion for %q: %q, want %q", word, got, want)
		}
	}
	if err := os.Mkdir("mnt", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, errOut := runCLI(t, "mnt", "a", "b"); strings.Contains(errOut, "did you mean") {
		t.Errorf("an existing folder named mnt taken for a mistyped command: %q", errOut)
	}
}

// TestMountedAt reads /proc/self/mountinfo lines, escapes included.
func TestMountedAt(t *testing.T) {
	info := "36 35 98:0 / /mnt/a\\040b rw,noatime master:1 - fuse.zarrfs /data/x.zarr ro\n" +
		"37 35 98:0 / /tmp/m rw - ext4 /dev/sda1 rw\n"
	for _, c := range []struct {
		path, fstype string
		ok           bool
	}{
		{"/mnt/a b", "fuse.zarrfs", true},
		{"/tmp/m", "ext4", true},
		{"/tmp", "", false},
		{"/mnt/a\\040b", "", false},
	} {
		if fstype, ok := mountedAt(info, c.path); fstype != c.fstype || ok != c.ok {
			t.Errorf("mountedAt(%q) = %q, %v; want %q, %v", c.path, fstype, ok, c.fstype, c.ok)
		}
	}
	if err := notMounted("/proc"); err == nil || !strings.Contains(err.Error(), "already a mount point (proc)") {
		t.Errorf("notMounted(/proc) = %v", err)
	}
	if err := notMounted(t.TempDir()); err != nil {
		t.Errorf("notMounted(a new folder) = %v", err)
	}
}

// TestBusyHint: a busy unmount names fuser and the lazy unmount.
func TestBusyHint(t *testing.T) {
	err := busyHint(errors.New("unmount /tmp/m: device or resource busy"), "/tmp/m")
	if !strings.Contains(err.Error(), "fuser -vm /tmp/m") || !strings.Contains(err.Error(), "zarrfs unmount --lazy /tmp/m") {
		t.Errorf("busy: %v", err)
	}
	if err := busyHint(errors.New("not a mount point"), "/x"); err.Error() != "not a mount point" {
		t.Errorf("not busy: %v", err)
	}
}

// FuzzMountedAt: any mountinfo text and path, never a panic.
func FuzzMountedAt(f *testing.F) {
	f.Add("36 35 98:0 / /mnt/a\\040b rw - fuse.zarrfs x ro\n", "/mnt/a b")
	f.Add("1 2 3 4 /x\\", "/x\\")
	f.Add("1 2 3 4 \\777\\0 -", "")
	f.Fuzz(func(t *testing.T, info, path string) {
		mountedAt(info, path)
	})
}
