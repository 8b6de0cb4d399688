package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/zarrfs/zarrfs/store/diskcache"
)

// cacheCommand shows or empties the persistent disk cache that mounts
// and commands given --cache-dir read remote stores through.
var cacheCommand = command{
	name: "cache", args: "stats|clear --cache-dir DIR", nargs: [2]int{1, 1},
	short: "show or empty the disk cache folder of --cache-dir",
	summary: "stats: how much the disk cache folder DIR holds (entries, bytes, least and most\n" +
		"recently used), after removing what processes killed mid-write left there.\n" +
		"clear: remove every entry (mounts using the folder fetch again what they need).",
	flags: func(fl *pflag.FlagSet) func(context.Context, *env, []string) error {
		dir := fl.String("cache-dir", "", "the cache folder (as given to mount --cache-dir)")
		return func(_ context.Context, e *env, args []string) error {
			if *dir == "" {
				return errors.New("--cache-dir DIR is required")
			}
			switch args[0] {
			case "stats":
				st, err := diskcache.Usage(*dir)
				if errors.Is(err, os.ErrNotExist) {
					fmt.Fprintf(e.stdout, "%s: no disk cache (empty)\n", *dir)
					return nil
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "folder:    %s\nentries:   %d\nsize:      %s (%d bytes)\n", *dir, st.Entries, diskcache.FormatSize(st.Bytes), st.Bytes)
				if st.Entries > 0 {
					fmt.Fprintf(e.stdout, "oldest:    %s\nnewest:    %s\n", st.Oldest.Format(time.DateTime), st.Newest.Format(time.DateTime))
				}
				if st.Leftovers > 0 {
					fmt.Fprintf(e.stdout, "removed:   %d files left by processes killed while writing\n", st.Leftovers)
				}
				return nil
			case "clear":
				if err := diskcache.Clear(*dir); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%s: cleared\n", *dir)
				return nil
			}
			return fmt.Errorf("unknown action %q: want stats or clear", args[0])
		}
	},
}
