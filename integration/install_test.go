package integration

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// needRoot skips t unless it runs as root (mount(8) of a fuse.zarrfs
// line, installing into /usr, dpkg -i); CI runs as root.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("not root: mount(8), installing into /usr/local/bin and dpkg -i need root (CI runs as root)")
	}
}

// lockInstall holds an exclusive lock while a test puts zarrfs where
// mount.fuse3 looks for it (/usr/local/bin, /usr/bin), so that two test
// runs on one machine do not install over each other.
func lockInstall(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "zarrfs-integration-install.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
}

// installedZarrfs is where the mount tests put the binary: mount.fuse3
// runs `zarrfs` through /bin/sh with PATH reset to the system's
// (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin), so a
// PATH of the test's own is not seen.
const installedZarrfs = "/usr/local/bin/zarrfs"

// installForMount copies the built binary to installedZarrfs for the
// length of t. It skips t when a zarrfs it did not put there is in the
// way.
func installForMount(t *testing.T) {
	t.Helper()
	if _, err := os.Lstat(installedZarrfs); err == nil {
		t.Skipf("%s exists (an installed zarrfs): not replacing it for the test", installedZarrfs)
	}
	b, err := os.ReadFile(zarrfsBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(installedZarrfs, b, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(installedZarrfs) })
}

// TestMountHelper mounts through util-linux mount(8) and mount.fuse3, as
// a user and the boot do: mount -t fuse.zarrfs STORE MNT -o OPTIONS, and
// an fstab line (mount --fstab FILE MNT) with the options of a network
// mount at boot; umount ends the daemon. Without -o ro mount(8) passes rw:
// the mount is read-only all the same (as a write-protected ISO image's),
// with one notice, as is an fstab line that says defaults.
func TestMountHelper(t *testing.T) {
	needRoot(t)
	if _, err := exec.LookPath("mount.fuse3"); err != nil {
		peertest.Missing(t, "mount.fuse3 (Debian's fuse3)")
	}
	lockInstall(t)
	installForMount(t)
	store, mnt := daemonMount(t)
	fstab := filepath.Join(t.TempDir(), "fstab")
	line := store + " " + mnt + " fuse.zarrfs defaults,noauto,_netdev,nofail,x-systemd.automount,x-systemd.mount-timeout=30,cache_size=64MiB,allow_other 0 0\n"
	if err := os.WriteFile(fstab, []byte("# zarrfs test\n"+line), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"mount -t", []string{"-t", "fuse.zarrfs", store, mnt, "-o", "ro,cache_size=64MiB,store_timeout=10s"}},
		{"mount --fstab defaults", []string{"--fstab", fstab, mnt}},
		{"mount -t without -o", []string{"-t", "fuse.zarrfs", store, mnt}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			out, stderr, err := runTool("mount", tc.args...)
			if err != nil {
				t.Fatalf("mount %s: %v\n%s%s", strings.Join(tc.args, " "), err, out, stderr)
			}
			t.Logf("mount returned, mounted, in %v", time.Since(start))
			checkServes(t, store, mnt)
			info, err := os.ReadFile("/proc/self/mountinfo")
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(info, []byte(" "+mnt+" ")) || !bytes.Contains(info, []byte(" fuse.zarrfs ")) {
				t.Errorf("/proc/self/mountinfo has no fuse.zarrfs mount at %s", mnt)
			}
			checkReadOnly(t, info, mnt)
			if n := strings.Count(string(stderr), "mounting read-only"); n > 1 {
				t.Errorf("the read-only notice came %d times: %q", n, stderr)
			}
			run(t, "umount", mnt)
			waitNoDaemon(t, mnt, 5*time.Second)
			if isMountpoint(mnt) {
				t.Errorf("%s still mounted after umount", mnt)
			}
		})
	}
}

// checkReadOnly checks that mountinfo (of /proc/self) shows mnt mounted
// read-only and that a write there fails with EROFS.
func checkReadOnly(t *testing.T, mountinfo []byte, mnt string) {
	t.Helper()
	for _, l := range strings.Split(string(mountinfo), "\n") {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS … - TYPE SOURCE SUPEROPTIONS:
		// FUSE's ro is the superblock's.
		f := strings.Fields(l)
		sep := slices.Index(f, "-")
		if len(f) > 5 && f[4] == mnt && sep > 0 && len(f) > sep+3 &&
			!slices.Contains(strings.Split(f[5], ","), "ro") && !slices.Contains(strings.Split(f[sep+3], ","), "ro") {
			t.Errorf("%s is mounted %s (superblock %s), not ro", mnt, f[5], f[sep+3])
		}
	}
	err := os.WriteFile(filepath.Join(mnt, "new"), nil, 0o644)
	if !errors.Is(err, syscall.EROFS) {
		t.Errorf("creating a file in %s: %v; want EROFS", mnt, err)
	}
}

// TestMakeInstall runs make install and make uninstall into a DESTDIR and
// checks each file: the binary, the man pages, and the completion scripts,
// which must be what the installed binary prints.
func TestMakeInstall(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		peertest.Missing(t, "make")
	}
	tmp := t.TempDir()
	dest := filepath.Join(tmp, "dest")
	vars := []string{"DESTDIR=" + dest, "PREFIX=/opt/zarrfs", "BIN=" + filepath.Join(tmp, "zarrfs"), "DOCDIR=" + filepath.Join(tmp, "docs")}
	run(t, "make", append([]string{"-C", peertest.RepoRoot(), "--no-print-directory", "install"}, vars...)...)
	root := filepath.Join(dest, "opt/zarrfs")
	bin := filepath.Join(root, "bin/zarrfs")
	want := map[string]fs.FileMode{
		"bin/zarrfs":                                  0o755,
		"share/man/man1/zarrfs.1":                     0o644,
		"share/man/man1/zarrfs-mount.1":               0o644,
		"share/man/man1/zarrfs-ls.1":                  0o644,
		"share/bash-completion/completions/zarrfs":    0o644,
		"share/zsh/site-functions/_zarrfs":            0o644,
		"share/fish/vendor_completions.d/zarrfs.fish": 0o644,
	}
	for name, mode := range want {
		st, err := os.Stat(filepath.Join(root, name))
		if err != nil {
			t.Error(err)
			continue
		}
		if st.Mode().Perm() != mode || st.Size() == 0 {
			t.Errorf("%s: mode %v, %d bytes; want %v and not empty", name, st.Mode().Perm(), st.Size(), mode)
		}
	}
	// make build records the commit; go reads it from a clone, as CI's,
	// but not from a git worktree (whose .git is a file).
	version := run(t, bin, "version")
	if !bytes.HasPrefix(version, []byte("zarrfs ")) || !bytes.Contains(version, []byte(" go1.")) {
		t.Errorf("installed zarrfs version: %q", version)
	}
	if st, err := os.Stat(filepath.Join(peertest.RepoRoot(), ".git")); err == nil && st.IsDir() {
		head := bytes.TrimSpace(run(t, "git", "-C", peertest.RepoRoot(), "rev-parse", "HEAD"))
		if !bytes.Contains(version, []byte("commit "+string(head))) {
			t.Errorf("zarrfs version %q does not name the commit %s", version, head)
		}
	} else {
		t.Logf("a git worktree: go records no commit; zarrfs version says %q", bytes.TrimSpace(version))
	}
	for file, shell := range map[string]string{
		"share/bash-completion/completions/zarrfs":    "bash",
		"share/zsh/site-functions/_zarrfs":            "zsh",
		"share/fish/vendor_completions.d/zarrfs.fish": "fish",
	} {
		got, _ := os.ReadFile(filepath.Join(root, file))
		if !bytes.Equal(got, run(t, bin, "completion", shell)) {
			t.Errorf("%s is not what zarrfs completion %s prints", file, shell)
		}
	}
	if _, err := exec.LookPath("man"); err == nil {
		out := run(t, "man", "-l", filepath.Join(root, "share/man/man1/zarrfs.1"))
		for _, want := range []string{"zarrfs STORE MOUNTPOINT", "fuse.zarrfs", "--cache-size", "--options"} {
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("man zarrfs does not show %q", want)
			}
		}
	}

	run(t, "make", append([]string{"-C", peertest.RepoRoot(), "--no-print-directory", "uninstall"}, vars...)...)
	filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("make uninstall left %s", p)
		}
		return err
	})
}

// TestDebPackage builds the package with make deb, installs it with
// dpkg -i, mounts with mount -t fuse.zarrfs through the installed
// /usr/bin/zarrfs, and removes it with dpkg -r, which must leave none of
// its files.
func TestDebPackage(t *testing.T) {
	needRoot(t)
	for _, tool := range []string{"dpkg-deb", "dpkg", "make", "mount.fuse3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: make deb and dpkg -i need Debian's dpkg, make and fuse3", tool)
		}
	}
	lockInstall(t)
	if out, _, err := runTool("dpkg-query", "-W", "-f=${Status}", "zarrfs"); err == nil && bytes.Contains(out, []byte("installed")) {
		t.Skipf("a zarrfs package is installed (%s): not replacing it for the test", out)
	}
	if _, err := os.Lstat(installedZarrfs); err == nil {
		t.Skipf("%s exists and would shadow the package's /usr/bin/zarrfs for mount.fuse3", installedZarrfs)
	}
	tmp := t.TempDir()
	// gzip, not xz: the same package, built in a sixth of the time.
	run(t, "make", "-C", peertest.RepoRoot(), "--no-print-directory", "deb", "DEBDIR="+tmp, "DEB_COMPRESS=gzip",
		"BIN="+filepath.Join(tmp, "zarrfs"), "DOCDIR="+filepath.Join(tmp, "docs"), "DEBROOT="+filepath.Join(tmp, "root"))
	arch := strings.TrimSpace(string(run(t, "dpkg", "--print-architecture")))
	debs, _ := filepath.Glob(filepath.Join(tmp, "zarrfs_*_"+arch+".deb"))
	if len(debs) != 1 {
		t.Fatalf("make deb made %v; want one zarrfs_VERSION_%s.deb", debs, arch)
	}
	deb := debs[0]
	if dep := run(t, "dpkg-deb", "-f", deb, "Depends"); strings.TrimSpace(string(dep)) != "fuse3" {
		t.Errorf("Depends: %q, want fuse3", dep)
	}
	contents := string(run(t, "dpkg-deb", "-c", deb))
	files := []string{
		"/usr/bin/zarrfs",
		"/usr/share/man/man1/zarrfs.1.gz",
		"/usr/share/man/man1/zarrfs-mount.1.gz",
		"/usr/share/bash-completion/completions/zarrfs",
		"/usr/share/zsh/vendor-completions/_zarrfs",
		"/usr/share/fish/vendor_completions.d/zarrfs.fish",
	}
	for _, f := range files {
		if !strings.Contains(contents, "."+f+"\n") {
			t.Errorf("the package has no %s:\n%s", f, contents)
		}
	}

	t.Cleanup(func() { runTool("dpkg", "--purge", "zarrfs") })
	dpkg(t, "-i", deb)
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("after dpkg -i: %v", err)
		}
	}
	// bash-completion finds the package's script by itself.
	checkBashCompletion(t, "")
	store, mnt := daemonMount(t)
	if out, stderr, err := runTool("mount", "-t", "fuse.zarrfs", store, mnt, "-o", "ro"); err != nil {
		t.Fatalf("mount -t fuse.zarrfs with the package installed: %v\n%s%s", err, out, stderr)
	}
	checkServes(t, store, mnt)
	run(t, "umount", mnt)
	waitNoDaemon(t, mnt, 5*time.Second)

	dpkg(t, "-r", "zarrfs")
	for _, f := range files {
		if _, err := os.Lstat(f); err == nil {
			t.Errorf("dpkg -r left %s", f)
		}
	}
	if out, _, _ := runTool("dpkg-query", "-W", "-f=${Status}", "zarrfs"); bytes.Contains(out, []byte(" installed")) {
		t.Errorf("after dpkg -r the package is %q", out)
	}
}

// dpkg runs dpkg with args, waiting a while for another dpkg or apt (a
// package install in the background) to release its lock.
func dpkg(t *testing.T, args ...string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		out, stderr, err := runTool("dpkg", args...)
		if err == nil {
			return
		}
		if !bytes.Contains(stderr, []byte("lock")) || time.Now().After(deadline) {
			t.Fatalf("dpkg %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
		}
		time.Sleep(2 * time.Second)
	}
}

// bashCompletion is the file of bash-completion that defines the helpers
// cobra's bash script uses, and loads scripts from their installed place.
const bashCompletion = "/usr/share/bash-completion/bash_completion"

// completeProgram completes the words of each of its lines with the
// completion function bash registered for zarrfs, one line of candidates
// per line, as bash does at a TAB after the last word.
const completeProgram = `
source ` + bashCompletion + `
[ -n "$1" ] && source "$1"
__load_completion zarrfs 2>/dev/null
fn=$(complete -p zarrfs | sed -E 's/.*-F ([^ ]+).*/\1/')
while IFS= read -r line; do
	read -ra COMP_WORDS <<<"$line"
	[ "${line: -1}" = " " ] && COMP_WORDS+=("")
	COMP_LINE=$line COMP_POINT=${#line} COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) COMPREPLY=()
	"$fn" zarrfs "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}" 2>/dev/null
	echo "${COMPREPLY[*]}"
done
`

// checkBashCompletion completes command lines in bash with the script
// (or, with script "", the one bash-completion loads from where it is
// installed) and checks the candidates.
func checkBashCompletion(t *testing.T, script string) {
	t.Helper()
	if _, err := os.Stat(bashCompletion); err != nil {
		peertest.Missing(t, "bash-completion (Debian's bash-completion)")
	}
	cases := []struct{ line, want string }{
		{"zarrfs mo", "mount"},
		{"zarrfs mount --cache-s", "--cache-size"},
		{"zarrfs mount --daem", "--daemon"},
		{"zarrfs -o ro --fore", "--foreground"},
		{"zarrfs completion ", "bash zsh fish"},
		{"zarrfs ver", "version"},
	}
	var in strings.Builder
	for _, c := range cases {
		in.WriteString(c.line + "\n")
	}
	cmd := exec.Command("bash", "-c", completeProgram, "bash", script)
	cmd.Stdin = strings.NewReader(in.String())
	// The script runs zarrfs __complete: the binary under test first.
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(zarrfsBin)+":"+os.Getenv("PATH"))
	if script == "" {
		cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for i, c := range cases {
		if i >= len(got) || got[i] != c.want {
			t.Errorf("bash completes %q to %q; want %q", c.line, got[min(i, len(got)-1)], c.want)
		}
	}
}

// TestCompletionBash completes zarrfs command lines in bash with the
// script zarrfs completion bash prints.
func TestCompletionBash(t *testing.T) {
	script := filepath.Join(t.TempDir(), "zarrfs.bash")
	if err := os.WriteFile(script, mustZarrfs(t, "completion", "bash"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkBashCompletion(t, script)
}
