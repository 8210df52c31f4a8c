package pvesim

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// errno is a file error printed as the strerror text coreutils show.
type errno string

func (e errno) Error() string { return string(e) }

const (
	errNoEnt  errno = "No such file or directory"
	errIsDir  errno = "Is a directory"
	errAccess errno = "Permission denied"
	errPerm   errno = "Operation not permitted"
	errROFS   errno = "Read-only file system"
)

// fileHook makes a path a view of simulator state instead of a stored
// file: read returns the content (false: the file does not exist), write
// replaces it (nil: the file is read-only, writes fail with EPERM). Ceph's
// /etc/pve/ceph.conf plugs in here.
type fileHook struct {
	read  func(x *sshExec) ([]byte, bool)
	write func(x *sshExec, content []byte) error
	// remove deletes the file (nil: EPERM).
	remove func(x *sshExec) error
}

// nodeFiles are the paths that are views of simulator state.
func nodeFiles() map[string]*fileHook {
	return map[string]*fileHook{
		"/etc/hostname": {read: func(x *sshExec) ([]byte, bool) {
			return []byte(x.node + "\n"), true
		}},
		"/etc/tuned/active_profile": {read: func(x *sshExec) ([]byte, bool) {
			return []byte(x.s.execState(x.node).Tuned + "\n"), true
		}},
		"/etc/ssh/ssh_host_ed25519_key.pub": {read: func(x *sshExec) ([]byte, bool) {
			signer, err := x.s.hostSigner(x.node)
			if err != nil {
				return nil, false
			}
			line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))
			return []byte(line + " root@" + x.node + "\n"), true
		}},
		// /etc/ceph/ceph.conf is PVE's symlink to /etc/pve/ceph.conf.
		"/etc/pve/ceph.conf":  cephConfFile(),
		"/etc/ceph/ceph.conf": cephConfFile(),
		// network_files.go
		"/etc/network/interfaces":     interfacesFile(),
		"/etc/network/interfaces.new": interfacesNewFile(),
	}
}

func isPVEPath(p string) bool { return p == "/etc/pve" || strings.HasPrefix(p, "/etc/pve/") }

// writableTree reports whether the simulator keeps files at p: under /etc,
// /usr/local, /root and /var/lib (state of local programs, such as the
// provider's network rollback). Elsewhere the node acts like a read-only
// file system.
func writableTree(p string) bool {
	return strings.HasPrefix(p, "/etc/") || strings.HasPrefix(p, "/usr/local/") || strings.HasPrefix(p, "/root/") ||
		strings.HasPrefix(p, "/var/lib/")
}

// Files in /etc/pve have a fixed owner, group and mode (pmxcfsMode):
// pmxcfs refuses chmod and chown to anything else.
const pmxcfsOwner, pmxcfsGroup = "root", "www-data"

// pmxcfsMode is the fixed mode of the file p in /etc/pve.
func pmxcfsMode(p string) uint32 {
	if strings.HasPrefix(p, "/etc/pve/priv/") {
		return 0o600
	}
	return 0o640
}

func (x *sshExec) domain() *authDomain {
	return x.s.st.Domains[x.s.st.Nodes[x.node].Domain]
}

// isDir reports whether p is a directory on the node.
func (x *sshExec) isDir(p string) bool {
	if slices.Contains(defaultDirs, p) || slices.Contains(x.s.execState(x.node).Dirs, p) || x.isPVELockDir(p) {
		return true
	}
	if strings.HasPrefix(p, "/etc/pve/nodes/") && x.s.st.Nodes[strings.TrimPrefix(p, "/etc/pve/nodes/")] != nil {
		return true
	}
	prefix := p + "/"
	for f := range x.s.execState(x.node).Files {
		if strings.HasPrefix(f, prefix) {
			return true
		}
	}
	for f := range x.domain().PVEFiles {
		if strings.HasPrefix(f, prefix) {
			return true
		}
	}
	return false
}

// lookupFile returns the file at p as root sees it.
func (x *sshExec) lookupFile(p string) (*simFile, error) {
	p = path.Clean(p)
	if h := x.s.nodeOS.files[p]; h != nil && h.read != nil {
		content, ok := h.read(x)
		if !ok {
			return nil, errNoEnt
		}
		if isPVEPath(p) {
			return &simFile{Content: content, Mode: pmxcfsMode(p), Owner: pmxcfsOwner, Group: pmxcfsGroup}, nil
		}
		return &simFile{Content: content, Mode: 0o644, Owner: "root", Group: "root"}, nil
	}
	if x.isDir(p) {
		return nil, errIsDir
	}
	var f *simFile
	if isPVEPath(p) {
		f = x.domain().PVEFiles[p]
	} else {
		f = x.s.execState(x.node).Files[p]
	}
	if f == nil {
		return nil, errNoEnt
	}
	return f, nil
}

// readFile is lookupFile with the caller's read permission.
func (x *sshExec) readFile(p string) (*simFile, error) {
	f, err := x.lookupFile(p)
	if err != nil {
		return nil, err
	}
	if !x.root && f.Mode&0o004 == 0 {
		return nil, errAccess
	}
	return f, nil
}

// storeFile creates or replaces the file at p; the caller checked
// permissions. Files in /etc/pve get pmxcfs's fixed attributes.
func (x *sshExec) storeFile(p string, f *simFile) error {
	p = path.Clean(p)
	if h := x.s.nodeOS.files[p]; h != nil {
		if h.write == nil {
			return errPerm
		}
		return h.write(x, f.Content)
	}
	if x.isDir(p) {
		return errIsDir
	}
	if !isPVEPath(p) && !writableTree(p) {
		return errROFS
	}
	if !x.isDir(path.Dir(p)) {
		return errNoEnt
	}
	if isPVEPath(p) {
		if err := x.pmxcfsWritable(); err != nil {
			return err
		}
		d := x.domain()
		if d.PVEFiles == nil {
			d.PVEFiles = map[string]*simFile{}
		}
		d.PVEFiles[p] = &simFile{Content: f.Content, Mode: pmxcfsMode(p), Owner: pmxcfsOwner, Group: pmxcfsGroup}
		x.changed = true
		return nil
	}
	st := x.s.execState(x.node)
	if st.Files == nil {
		st.Files = map[string]*simFile{}
	}
	st.Files[p] = f
	x.changed = true
	return nil
}

// pmxcfsWritable refuses writes to /etc/pve without quorum, as pmxcfs
// turns read-only then.
func (x *sshExec) pmxcfsWritable() error {
	ns := x.s.st.Nodes[x.node]
	if cc := x.s.clusterOf(x.node); cc != nil && !x.s.quorate(ns.Domain, cc) {
		return errAccess
	}
	return nil
}

// removeFile deletes the file at p.
func (x *sshExec) removeFile(p string) error {
	p = path.Clean(p)
	if h := x.s.nodeOS.files[p]; h != nil {
		if h.remove != nil {
			return h.remove(x)
		}
		return errPerm
	}
	if x.isDir(p) {
		return errIsDir
	}
	if isPVEPath(p) {
		d := x.domain()
		if d.PVEFiles[p] == nil {
			return errNoEnt
		}
		if err := x.pmxcfsWritable(); err != nil {
			return err
		}
		delete(d.PVEFiles, p)
		x.changed = true
		return nil
	}
	st := x.s.execState(x.node)
	if st.Files[p] == nil {
		return errNoEnt
	}
	delete(st.Files, p)
	x.changed = true
	return nil
}

// makeDirs creates p and its missing parents.
func (x *sshExec) makeDirs(p string) error {
	p = path.Clean(p)
	var missing []string
	for d := p; !x.isDir(d); d = path.Dir(d) {
		if _, err := x.lookupFile(d); err == nil {
			return fmt.Errorf("%w", errIsDir) // a file where a directory should be
		}
		if !writableTree(d + "/") {
			return errROFS
		}
		missing = append(missing, d)
	}
	st := x.s.execState(x.node)
	st.Dirs = append(st.Dirs, missing...)
	sort.Strings(st.Dirs)
	if len(missing) > 0 {
		x.changed = true
	}
	return nil
}

// pmxcfs locks as the nodes' shell sees them.
//
// PVE serialises writers of a file in /etc/pve with a lock directory:
// cfs_lock_file('ceph.conf') is mkdir /etc/pve/priv/lock/file-ceph_conf
// (mkdir fails while another holder has it), and rmdir releases it
// (PVE::Cluster::cfs_lock). pmxcfs forgets a lock after 120 s. A tool that
// edits ceph.conf by hand takes the same lock to keep PVE's API from
// writing in between.

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
