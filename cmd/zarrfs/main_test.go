package main

import (
	"bytes"
	"context"
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
