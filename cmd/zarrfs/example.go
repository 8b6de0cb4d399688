package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/zarr/example"
)

var exampleCommand = command{
	name: "example", args: "DIR", nargs: [2]int{1, 1},
	short: "write the built-in example hierarchy to DIR",
	summary: "Write the built-in example hierarchy to the directory DIR (created if missing; must be empty)\n" +
		"or to an empty s3://bucket/prefix.",
	flags: func(fl *pflag.FlagSet) func(context.Context, *env, []string) error {
		sf := storeFlagsFor(fl)
		return func(ctx context.Context, _ *env, args []string) error {
			if strings.HasPrefix(strings.ToLower(args[0]), "s3://") {
				return writeExampleS3(ctx, args[0], sf)
			}
			return writeExample(ctx, args[0])
		}
	},
}

// writeExample writes the example hierarchy into the empty or missing
// directory path.
func writeExample(ctx context.Context, path string) error {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return fmt.Errorf("example: %w", err)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return fmt.Errorf("example: %w", err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("example: %s is not empty", path)
	}
	st, err := dir.Open(path, dir.Options{})
	if err != nil {
		return fmt.Errorf("example: %w", err)
	}
	defer st.Close()
	if err := example.Write(ctx, st); err != nil {
		return store.Errorf(st, err, "")
	}
	return nil
}

var demoCommand = command{
	name: "demo", args: "[flags] [MOUNTPOINT]", nargs: [2]int{0, 1},
	short: "write the example to a temporary store and mount it",
	summary: "Write the example hierarchy to a temporary directory and mount it at MOUNTPOINT\n" +
		"(created if missing; default: a new temporary directory); Ctrl-C unmounts it and removes\n" +
		"the temporary files.",
	flags: func(fl *pflag.FlagSet) func(context.Context, *env, []string) error {
		var mf mountFlags
		mf.register(fl)
		return func(ctx context.Context, e *env, args []string) (err error) {
			logger, closeLog, err := mf.logger(e)
			if err != nil {
				return err
			}
			defer closeLog()
			storeDir, err := os.MkdirTemp("", "zarrfs-demo-store-")
			if err != nil {
				return fmt.Errorf("demo: %w", err)
			}
			defer func() { err = errors.Join(err, os.RemoveAll(storeDir)) }()
			mountpoint := ""
			if len(args) > 0 {
				mountpoint = args[0]
				if err := os.Mkdir(mountpoint, 0o755); err == nil {
					defer func() { err = errors.Join(err, os.Remove(mountpoint)) }()
				} else if !errors.Is(err, os.ErrExist) {
					return fmt.Errorf("demo: %w", err)
				}
			} else {
				if mountpoint, err = os.MkdirTemp("", "zarrfs-demo-"); err != nil {
					return fmt.Errorf("demo: %w", err)
				}
				defer func() { err = errors.Join(err, os.Remove(mountpoint)) }()
			}
			if err := writeExample(ctx, storeDir); err != nil {
				return err
			}
			o, err := openHierarchy(ctx, storeDir, nil, mf.options())
			if err != nil {
				return err
			}
			defer o.close()
			srv, err := mf.mount(o, mountpoint, logger)
			if err != nil {
				return err
			}
			return serve(e, srv, mountpoint, mf.grace, logger, func(w io.Writer) { demoHelp(w, mountpoint) })
		}
	},
}

// demoHelp prints what to try on the demo mount.
func demoHelp(w io.Writer, mountpoint string) {
	abs, err := filepath.Abs(mountpoint)
	if err != nil {
		abs = mountpoint
	}
	t := filepath.Join(abs, "temperature")
	fmt.Fprintf(w, "The example hierarchy is mounted at %s. Try, in another terminal:\n\n", abs)
	fmt.Fprintf(w, "  ls -R %s\n", shellQuote(abs))
	fmt.Fprintf(w, "  od -A d -t f4 -N 64 %s\n", shellQuote(filepath.Join(t, "data")))
	fmt.Fprintf(w, "  python3 -c 'import numpy as np; print(np.load(%q, mmap_mode=\"r\")[0])'\n", filepath.Join(t, "data.npy"))
	fmt.Fprintf(w, "  getfattr -d %s\n", shellQuote(filepath.Join(t, "data")))
	fmt.Fprintf(w, "  cat %s\n\n", shellQuote(filepath.Join(t, "zarr.json")))
	fmt.Fprintf(w, "Press Ctrl-C here to unmount and remove the example.\n")
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	for _, r := range s {
		if !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}
