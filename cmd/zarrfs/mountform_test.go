package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestMountOptions is the -o table: every mount and store flag as an
// option, every generic option of mount(8), fstab and systemd accepted and
// ignored, rw and unknown or malformed options refused by name.
func TestMountOptions(t *testing.T) {
	type check func(m *mountSpec) bool
	cases := []struct {
		opt  string
		flag string // the flag the option sets ("" for a generic one)
		ok   check
		err  string // a part of the error, or "" when accepted
	}{
		{opt: "cache_size=2GiB", flag: "cache-size", ok: func(m *mountSpec) bool { return m.mf.cacheSize == 2<<30 }},
		{opt: "allow_other", flag: "allow-other", ok: func(m *mountSpec) bool { return m.mf.allowOther }},
		{opt: "uid=1000", flag: "uid", ok: func(m *mountSpec) bool { return m.mf.uid == 1000 }},
		{opt: "gid=1001", flag: "gid", ok: func(m *mountSpec) bool { return m.mf.gid == 1001 }},
		{opt: "debug", flag: "debug", ok: func(m *mountSpec) bool { return m.mf.debug }},
		{opt: "log_file=/var/log/zarrfs.log", flag: "log-file", ok: func(m *mountSpec) bool { return m.mf.logFile == "/var/log/zarrfs.log" }},
		{opt: "detach_grace=5s", flag: "detach-grace", ok: func(m *mountSpec) bool { return m.mf.grace == 5*time.Second }},
		{opt: "kernel_readahead=1MiB", flag: "kernel-readahead", ok: func(m *mountSpec) bool { return m.mf.readahead == 1<<20 }},
		{opt: "max_background=8", flag: "max-background", ok: func(m *mountSpec) bool { return m.mf.maxBackground == 8 }},
		{opt: "previews=false", flag: "previews", ok: func(m *mountSpec) bool { return !m.mf.previews }},
		{opt: "preview_budget=256MiB", flag: "preview-budget", ok: func(m *mountSpec) bool { return m.mf.previewBudget == 256<<20 }},
		{opt: "live=30s", flag: "live", ok: func(m *mountSpec) bool { return m.mf.live == 30*time.Second }},
		{opt: "store_timeout=10s", flag: "store-timeout", ok: func(m *mountSpec) bool { return m.sf.timeout == 10*time.Second }},
		{opt: "store_concurrency=4", flag: "store-concurrency", ok: func(m *mountSpec) bool { return m.sf.concurrency == 4 }},
		{opt: "store_retries=2", flag: "store-retries", ok: func(m *mountSpec) bool { return m.sf.retries == 2 }},
		{opt: "s3_endpoint=http://127.0.0.1:7070", flag: "s3-endpoint", ok: func(m *mountSpec) bool { return m.sf.s3.Endpoint == "http://127.0.0.1:7070" }},
		{opt: "s3_region=eu-west-1", flag: "s3-region", ok: func(m *mountSpec) bool { return m.sf.s3.Region == "eu-west-1" }},
		{opt: "s3_path_style", flag: "s3-path-style", ok: func(m *mountSpec) bool { return m.sf.s3.PathStyle }},
		{opt: "s3_anonymous", flag: "s3-anonymous", ok: func(m *mountSpec) bool { return m.sf.s3.Anonymous }},
		{opt: "ref=dev", flag: "ref", ok: func(m *mountSpec) bool { return m.sf.ref == "dev" }},
		{opt: "refs_allow_local", flag: "refs-allow-local", ok: func(m *mountSpec) bool { return m.sf.refsAllowLocal }},
		{opt: "cache_dir=/var/cache/zarrfs", flag: "cache-dir", ok: func(m *mountSpec) bool { return m.sf.cacheDir == "/var/cache/zarrfs" }},
		{opt: "cache_dir_size=2GiB", flag: "cache-dir-size", ok: func(m *mountSpec) bool { return m.sf.cacheDirSize == 2<<30 }},
		{opt: "cache_offline", flag: "cache-offline", ok: func(m *mountSpec) bool { return m.sf.cacheOffline }},
		// A switch can be turned off, and the flag's own name works too.
		{opt: "allow_other,allow_other=false", ok: func(m *mountSpec) bool { return !m.mf.allowOther }},
		{opt: "cache-size=512MiB", ok: func(m *mountSpec) bool { return m.mf.cacheSize == 512<<20 }},
		// Empty options, as in "ro,,cache_size=1GiB" or a trailing comma.
		{opt: "ro,,", ok: func(*mountSpec) bool { return true }},

		// mount(8) passes rw without ro: read-only all the same.
		{opt: "rw", ok: func(m *mountSpec) bool { return m.rw }},
		{opt: "rw,dev,suid", ok: func(m *mountSpec) bool { return m.rw }},
		{opt: "ro", ok: func(m *mountSpec) bool { return !m.rw }},
		{opt: "rw=1", err: `unknown option "rw=1"`},
		{opt: "bogus", err: `unknown option "bogus"`},
		{opt: "cache_size=lots", err: `option "cache_size=lots"`},
		{opt: "cache_size", err: `option "cache_size" needs a value`},
		{opt: "uid=-1", err: `option "uid=-1"`},
		{opt: "allow_other=maybe", err: `option "allow_other=maybe"`},
		{opt: "ro=1", err: `unknown option "ro=1"`},
		{opt: "foreground", err: `unknown option "foreground"`},
		{opt: "options=ro", err: `unknown option "options=ro"`},
		{opt: "help", err: `unknown option "help"`},
	}
	// What mount(8), mount.fuse3, fstab and systemd pass or leave in a line.
	for _, g := range []string{
		"ro", "defaults", "auto", "noauto", "nofail", "_netdev", "user", "users", "nouser", "owner", "group",
		"dev", "nodev", "suid", "nosuid", "exec", "noexec", "async", "sync",
		"atime", "noatime", "relatime", "norelatime", "strictatime", "nostrictatime", "diratime", "nodiratime",
		"lazytime", "nolazytime", "silent", "loud", "user=alice", "comment=systemd.automount",
		"x-systemd.automount", "x-systemd.mount-timeout=30", "x-systemd.requires=network-online.target",
		"x-systemd.idle-timeout=1min", "x-gvfs-show", "x-mount.mkdir",
		"ro,dev,suid", "ro,noexec,nosuid,nodev", // as mount.fuse3 passes them
	} {
		cases = append(cases, struct {
			opt, flag string
			ok        check
			err       string
		}{opt: g, ok: func(m *mountSpec) bool { return !m.optionFlags.Lookup("cache-size").Changed }})
	}

	covered := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.opt, func(t *testing.T) {
			fl := pflag.NewFlagSet("test", pflag.ContinueOnError)
			var m mountSpec
			m.register(fl)
			if err := fl.Parse([]string{"-o", tc.opt}); err != nil {
				t.Fatal(err)
			}
			err := m.applyOptions()
			switch {
			case tc.err != "" && err == nil:
				t.Errorf("accepted; want an error with %q", tc.err)
			case tc.err != "" && !strings.Contains(err.Error(), tc.err):
				t.Errorf("error %q; want one with %q", err, tc.err)
			case tc.err == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.err == "" && !tc.ok(&m):
				t.Errorf("the flags are not as -o %s says", tc.opt)
			}
		})
		covered[tc.flag] = true
	}
	// Every flag -o may set is in the table: a new mount or store flag
	// gets a row here.
	var m mountSpec
	m.register(pflag.NewFlagSet("test", pflag.ContinueOnError))
	m.optionFlags.VisitAll(func(f *pflag.Flag) {
		if !covered[f.Name] {
			t.Errorf("flag --%s has no -o %s row", f.Name, strings.ReplaceAll(f.Name, "-", "_"))
		}
	})
}

// TestMountFormRefusals checks that the mount(8) form refuses bad options
// and arguments with one line and status 1 or 2 before it starts a daemon
// (run in-process, a daemon would be this test binary) or mounts anything.
func TestMountFormRefusals(t *testing.T) {
	dir := t.TempDir()
	store, mnt := filepath.Join(dir, "store"), filepath.Join(dir, "mnt")
	for _, d := range []string{store, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{store, mnt, "-o", "ro,frobnicate=3"}, 1, `zarrfs: unknown option "frobnicate=3"`},
		{[]string{"mount", "--daemon", store, mnt, "-o", "rw,bogus"}, 1, `zarrfs mount: unknown option "bogus"`},
		{[]string{"mount", store, mnt, "-o", "cache_size"}, 1, `zarrfs mount: option "cache_size" needs a value`},
		{[]string{store, mnt, "--no-such-flag"}, 2, "zarrfs: unknown flag: --no-such-flag"},
		{[]string{store, mnt, "extra"}, 2, "zarrfs: want arguments STORE MOUNTPOINT, got 3"},
		{[]string{store}, 2, `zarrfs: unknown command "` + store + `"`},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		if code != tc.code || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, tc.want) {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want %d and one line starting %q", tc.args, code, out, errOut, tc.code, tc.want)
		}
	}
}

// TestDocsFromFlags checks that the man pages and the completions come
// from the same flags as -h: every flag of every command is in its man
// page and offered by completion.
func TestDocsFromFlags(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := runCLI(t, "man", dir); code != 0 {
		t.Fatalf("zarrfs man: status %d: %s", code, errOut)
	}
	root := newRoot(&env{})
	cmds := append(root.Commands(), root)
	for _, c := range cmds {
		if c.Hidden || c.Name() == "help" {
			continue
		}
		page := "zarrfs-" + c.Name() + ".1"
		sub := []string{c.Name()}
		if c == root {
			page, sub = "zarrfs.1", nil
		}
		man, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil {
			t.Errorf("%s: %v", c.CommandPath(), err)
			continue
		}
		_, completions, _ := runCLI(t, append(append([]string{"__complete"}, sub...), "--")...)
		c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
			if !strings.Contains(string(man), `\fB--`+f.Name+`\fP`) {
				t.Errorf("%s: --%s is not in %s", c.CommandPath(), f.Name, page)
			}
			if !strings.Contains(completions, "--"+f.Name) {
				t.Errorf("%s: completion does not offer --%s", c.CommandPath(), f.Name)
			}
		})
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		code, out, errOut := runCLI(t, "completion", shell)
		if code != 0 || !strings.Contains(out, "__complete") {
			t.Errorf("completion %s: status %d, stderr %q, script without __complete", shell, code, errOut)
		}
	}
	// The mount(8) form completes files (STORE) beside the subcommands,
	// then directories (MOUNTPOINT).
	if _, out, _ := runCLI(t, "__complete", ""); !strings.HasPrefix(out, "mount\t") || !strings.HasSuffix(out, "\n:0\n") {
		t.Errorf("completion of the first argument:\n%s", out)
	}
	if _, out, _ := runCLI(t, "__complete", "store", ""); out != ":16\n" {
		t.Errorf("completion of MOUNTPOINT:\n%s", out)
	}
	if code, _, _ := runCLI(t, "completion", "powershell"); code != 2 {
		t.Errorf("completion powershell: status %d, want 2", code)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, errOut := runCLI(t, args...)
		if code != 0 || !strings.HasPrefix(out, "zarrfs ") || !strings.Contains(out, " go1.") || strings.Count(out, "\n") != 1 || errOut != "" {
			t.Errorf("%q: status %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// TestStateLogFile: a daemon without syslog logs under the XDG state
// directory, or /var/log for root.
func TestStateLogFile(t *testing.T) {
	tmp := t.TempDir()
	for _, tc := range []struct {
		euid      int
		xdg, home string
		want      string // "" for an error
	}{
		{0, "", "", "/var/log/zarrfs.log"},
		{1000, tmp + "/state", tmp + "/home", tmp + "/state/zarrfs/zarrfs.log"},
		{1000, "", tmp + "/home", tmp + "/home/.local/state/zarrfs/zarrfs.log"},
		{1000, "relative", tmp + "/home", tmp + "/home/.local/state/zarrfs/zarrfs.log"},
		{1000, "", "", ""},
	} {
		env := map[string]string{"XDG_STATE_HOME": tc.xdg, "HOME": tc.home}
		got, err := stateLogFile(tc.euid, func(k string) string { return env[k] })
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("euid %d, XDG_STATE_HOME %q, HOME %q: %q, %v; want %q", tc.euid, tc.xdg, tc.home, got, err, tc.want)
		}
		if tc.want != "" && tc.euid != 0 {
			if st, err := os.Stat(filepath.Dir(got)); err != nil || !st.IsDir() {
				t.Errorf("%s: not made: %v", filepath.Dir(got), err)
			}
		}
	}
}
