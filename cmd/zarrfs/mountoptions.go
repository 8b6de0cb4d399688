package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// The -o options of the mount(8) form and of zarrfs mount: every mount and
// store flag as NAME=VALUE, and the generic options of mount(8), fstab and
// systemd, which zarrfs accepts and ignores.

// register registers the mount and store flags and -o on fl.
func (m *mountSpec) register(fl *pflag.FlagSet) {
	m.optionFlags = pflag.NewFlagSet("options", pflag.ContinueOnError)
	m.optionFlags.SortFlags = false
	m.mf.register(m.optionFlags)
	m.sf = storeFlagsFor(m.optionFlags)
	fl.AddFlagSet(m.optionFlags)
	fl.StringArrayVarP(&m.options, "options", "o", nil,
		"mount options, comma-separated: every flag above as NAME=VALUE with underscores (cache_size=2GiB, store_timeout=10s)\n"+
			"or NAME for a switch (allow_other); ro, rw (mounted read-only all the same) and the generic options of mount(8), fstab and systemd are accepted")
}

// genericOptions are the options mount(8), fstab and systemd pass or
// leave in a line, which zarrfs accepts: the mount is read-only and holds
// no devices, set-user-ID or executable files whatever they say, and the
// others are for mount(8) and systemd alone. rw is noted elsewhere.
var genericOptions = map[string]bool{
	"ro": true, "defaults": true, "auto": true, "noauto": true, "nofail": true, "_netdev": true,
	"user": true, "users": true, "nouser": true, "owner": true, "group": true,
	"dev": true, "nodev": true, "suid": true, "nosuid": true, "exec": true, "noexec": true,
	"async": true, "sync": true, "atime": true, "noatime": true, "relatime": true, "norelatime": true,
	"strictatime": true, "nostrictatime": true, "diratime": true, "nodiratime": true,
	"lazytime": true, "nolazytime": true, "silent": true, "loud": true,
}

// isGenericOption reports whether opt (NAME or NAME=VALUE) is one of the
// generic options: those above, user=NAME (libmount's, for user mounts),
// and x-* and comment=… (options for userspace programs such as
// x-systemd.automount).
func isGenericOption(opt string) bool {
	name, _, hasValue := strings.Cut(opt, "=")
	switch {
	case strings.HasPrefix(name, "x-") || name == "comment":
		return true
	case name == "user":
		return true
	}
	return genericOptions[name] && !hasValue
}

// applyOptions sets the flags the -o options name. It refuses any option
// that is neither a flag nor generic, naming it; rw sets m.rw.
func (m *mountSpec) applyOptions() error {
	for _, arg := range m.options {
		for _, opt := range strings.Split(arg, ",") {
			if err := m.applyOption(opt); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *mountSpec) applyOption(opt string) error {
	name, value, hasValue := strings.Cut(opt, "=")
	switch {
	case opt == "":
		return nil
	case opt == "rw":
		// mount(8) passes rw whenever ro is absent, so it cannot tell a
		// default from a choice: mount read-only, as a write-protected
		// ISO image does, and say so (run).
		m.rw = true
		return nil
	case isGenericOption(opt):
		return nil
	}
	f := m.optionFlags.Lookup(strings.ReplaceAll(name, "_", "-"))
	if f == nil {
		return fmt.Errorf("unknown option %q", opt)
	}
	if !hasValue {
		if f.NoOptDefVal == "" {
			return fmt.Errorf("option %q needs a value (%s=…)", name, name)
		}
		value = f.NoOptDefVal
	}
	if err := m.optionFlags.Set(f.Name, value); err != nil {
		return fmt.Errorf("option %q: %v", opt, err)
	}
	return nil
}
