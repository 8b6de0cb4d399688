// Package s3test runs a real S3 server for tests: versitygw
// (github.com/versity/versitygw, v1.8.0) with its posix backend on a free
// loopback port and a temporary directory, stopped when the test ends.
//
// The binary is looked up in PATH, then in $GOPATH/bin (go install puts
// it there). Without it a test skips, unless ZARRFS_REQUIRE_PEERS=1 (make
// test sets it), when it fails.
package s3test

import (
	"bytes"
	"context"
	"go/build"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Credentials of the server's root account.
const (
	AccessKey = "zarrfs-test"
	SecretKey = "zarrfs-test-secret"
)

// Server is a running versitygw.
type Server struct {
	Endpoint string // http://127.0.0.1:PORT
	Addr     string // 127.0.0.1:PORT
	Dir      string // the posix backend's root: a bucket is a directory in it

	bin string
	t   testing.TB

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	log  bytes.Buffer
}

// Binary returns the path of versitygw, or "" when it is not installed.
func Binary() string {
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		gopath = build.Default.GOPATH
	}
	for _, dir := range filepath.SplitList(gopath) {
		p := filepath.Join(dir, "bin", "versitygw")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// Start starts versitygw for the test, or skips (fails with
// ZARRFS_REQUIRE_PEERS=1) when it is not installed.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		msg := "versitygw not found in PATH or $GOPATH/bin (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0)"
		if os.Getenv("ZARRFS_REQUIRE_PEERS") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := &Server{Addr: addr, Endpoint: "http://" + addr, Dir: t.TempDir(), bin: bin, t: t}
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// Restart starts the server again after Stop, on the same port and
// directory.
func (s *Server) Restart() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return
	}
	cmd := exec.Command(s.bin, "--port", s.Addr, "posix", s.Dir)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+AccessKey, "ROOT_SECRET_KEY="+SecretKey)
	cmd.Stdout, cmd.Stderr = &s.log, &s.log
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start versitygw: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-done:
			s.t.Fatalf("versitygw exited at start: %s", s.log.String())
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			s.t.Fatalf("versitygw did not listen on %s within 20s: %s", s.Addr, s.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.cmd, s.done = cmd, done
}

// Stop kills the server (as a crash would) and waits for it to exit.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Env returns the environment variables that point an S3 client (zarrfs)
// at the server with its root credentials.
func (s *Server) Env() []string {
	return []string{
		"AWS_ENDPOINT_URL=" + s.Endpoint,
		"AWS_ACCESS_KEY_ID=" + AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_REGION=us-east-1",
	}
}

// MakeBucket creates a bucket with the S3 API and returns its directory
// in the posix backend.
func (s *Server) MakeBucket(name string) string {
	s.t.Helper()
	c, err := minio.New(s.Addr, &minio.Options{
		Creds: credentials.NewStaticV4(AccessKey, SecretKey, ""), Region: "us-east-1",
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.MakeBucket(ctx, name, minio.MakeBucketOptions{}); err != nil {
		s.t.Fatalf("make bucket %s: %v", name, err)
	}
	return filepath.Join(s.Dir, name)
}
