package pvesim

import (
	"path"
	"sort"
	"strings"
	"time"
)

// pmxcfs locks and /etc/pve/ceph.conf as the nodes' shell sees them.
//
// PVE serialises writers of a file in /etc/pve with a lock directory:
// cfs_lock_file('ceph.conf') is mkdir /etc/pve/priv/lock/file-ceph_conf
// (mkdir fails while another holder has it), and rmdir releases it
// (PVE::Cluster::cfs_lock). pmxcfs forgets a lock after 120 s. A tool that
// edits ceph.conf by hand takes the same lock to keep PVE's API from
// writing in between.

// cephConfFile is /etc/pve/ceph.conf: the Ceph state rendered, written
// back by line edits under the pmxcfs rules.
func cephConfFile() *fileHook {
	return &fileHook{
		read: func(x *sshExec) ([]byte, bool) {
			cs := x.domain().Ceph
			if cs == nil {
				return nil, false
			}
			return []byte(cs.confText()), true
		},
		write: func(x *sshExec, content []byte) error {
			if err := x.pmxcfsWritable(); err != nil {
				return err
			}
			x.s.writeConf(x, content)
			x.changed = true
			return nil
		},
	}
}

// lockName returns the lock's name when p is a lock directory path.
func lockName(p string) (string, bool) {
	p = path.Clean(p)
	if path.Dir(p) != pveLockDir {
		return "", false
	}
	return path.Base(p), true
}

// pveLockHeld reports whether lock is held (and not expired).
func (x *sshExec) pveLockHeld(name string) bool {
	t, ok := x.domain().locks[name]
	return ok && time.Since(t) < pmxcfsLockTimeout
}

// isPVELockDir reports whether p is the lock directory or a held lock.
func (x *sshExec) isPVELockDir(p string) bool {
	p = path.Clean(p)
	if p == pveLockDir {
		return true
	}
	name, ok := lockName(p)
	return ok && x.pveLockHeld(name)
}

func sshMkdir(x *sshExec) int {
	opts, dirs, bad := splitOperands(x.argv[1:], map[string]bool{"-m": true})
	if bad != "" {
		x.errf("mkdir: option requires an argument -- '%s'\nTry 'mkdir --help' for more information.\n", strings.TrimPrefix(bad, "-"))
		return 1
	}
	_, parents := opts["-p"]
	if _, ok := opts["--parents"]; ok {
		parents = true
	}
	if len(dirs) == 0 {
		x.errf("mkdir: missing operand\nTry 'mkdir --help' for more information.\n")
		return 1
	}
	code := 0
	for _, d := range dirs {
		p := path.Clean(d)
		if !x.root {
			x.errf("mkdir: cannot create directory '%s': %v\n", d, errAccess)
			code = 1
			continue
		}
		if name, ok := lockName(p); ok {
			if err := x.pmxcfsWritable(); err != nil {
				x.errf("mkdir: cannot create directory '%s': %v\n", d, err)
				code = 1
				continue
			}
			if x.pveLockHeld(name) {
				if !parents {
					x.errf("mkdir: cannot create directory '%s': File exists\n", d)
					code = 1
				}
				continue
			}
			dom := x.domain()
			if dom.locks == nil {
				dom.locks = map[string]time.Time{}
			}
			dom.locks[name] = time.Now()
			continue
		}
		if x.isDir(p) || p == pveLockDir {
			if !parents {
				x.errf("mkdir: cannot create directory '%s': File exists\n", d)
				code = 1
			}
			continue
		}
		if _, err := x.lookupFile(p); err == nil {
			x.errf("mkdir: cannot create directory '%s': File exists\n", d)
			code = 1
			continue
		}
		if isPVEPath(p) {
			x.errf("mkdir: pvesim keeps directories under /etc/pve only as pmxcfs locks in %s, not '%s'\n", pveLockDir, d)
			code = 1
			continue
		}
		if !parents && !x.isDir(path.Dir(p)) {
			x.errf("mkdir: cannot create directory '%s': No such file or directory\n", d)
			code = 1
			continue
		}
		if err := x.makeDirs(p); err != nil {
			x.errf("mkdir: cannot create directory '%s': %v\n", d, err)
			code = 1
		}
	}
	return code
}

func sshRmdir(x *sshExec) int {
	_, dirs, _ := splitOperands(x.argv[1:], nil)
	if len(dirs) == 0 {
		x.errf("rmdir: missing operand\nTry 'rmdir --help' for more information.\n")
		return 1
	}
	code := 0
	for _, d := range dirs {
		p := path.Clean(d)
		if !x.root {
			x.errf("rmdir: failed to remove '%s': %v\n", d, errAccess)
			code = 1
			continue
		}
		if name, ok := lockName(p); ok {
			if !x.pveLockHeld(name) {
				x.errf("rmdir: failed to remove '%s': No such file or directory\n", d)
				code = 1
				continue
			}
			delete(x.domain().locks, name)
			x.changed = true
			continue
		}
		st := x.s.execState(x.node)
		i := sort.SearchStrings(st.Dirs, p)
		switch {
		case i < len(st.Dirs) && st.Dirs[i] == p:
			prefix := p + "/"
			for f := range st.Files {
				if strings.HasPrefix(f, prefix) {
					x.errf("rmdir: failed to remove '%s': Directory not empty\n", d)
					code = 1
					goto next
				}
			}
			for _, o := range st.Dirs {
				if strings.HasPrefix(o, prefix) {
					x.errf("rmdir: failed to remove '%s': Directory not empty\n", d)
					code = 1
					goto next
				}
			}
			st.Dirs = append(st.Dirs[:i], st.Dirs[i+1:]...)
			x.changed = true
		case x.isDir(p):
			x.errf("rmdir: failed to remove '%s': Device or resource busy\n", d)
			code = 1
		default:
			if _, err := x.lookupFile(p); err == nil {
				x.errf("rmdir: failed to remove '%s': Not a directory\n", d)
			} else {
				x.errf("rmdir: failed to remove '%s': No such file or directory\n", d)
			}
			code = 1
		}
	next:
	}
	return code
}
