package pvesim

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

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
	}
}

func fileProgram(name string) *sshProgram {
	switch name {
	case "cat":
		return &sshProgram{run: sshCat, readsStdin: func(argv []string) bool {
			files := 0
			for _, a := range argv[1:] {
				if a == "-" {
					return true
				}
				if a != "--" {
					files++
				}
			}
			return files == 0
		}}
	case "stat":
		return &sshProgram{run: sshStat}
	case "install":
		return &sshProgram{run: sshInstall, readsStdin: func(argv []string) bool {
			return slices.Contains(argv[1:], "/dev/stdin")
		}}
	case "mv":
		return &sshProgram{run: sshMv}
	case "rm":
		return &sshProgram{run: sshRm}
	}
	return nil
}

func isPVEPath(p string) bool { return p == "/etc/pve" || strings.HasPrefix(p, "/etc/pve/") }

// writableTree reports whether the simulator keeps files at p: under /etc,
// /usr/local and /root. Elsewhere the node acts like a read-only file
// system.
func writableTree(p string) bool {
	return strings.HasPrefix(p, "/etc/") || strings.HasPrefix(p, "/usr/local/") || strings.HasPrefix(p, "/root/")
}

// pmxcfsAttrs are the fixed mode and owner of files in /etc/pve: pmxcfs
// refuses chmod and chown to anything else.
func pmxcfsAttrs(p string) (uint32, string, string) {
	if strings.HasPrefix(p, "/etc/pve/priv/") {
		return 0o600, "root", "www-data"
	}
	return 0o640, "root", "www-data"
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
			mode, owner, group := pmxcfsAttrs(p)
			return &simFile{Content: content, Mode: mode, Owner: owner, Group: group}, nil
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
		mode, owner, group := pmxcfsAttrs(p)
		d.PVEFiles[p] = &simFile{Content: f.Content, Mode: mode, Owner: owner, Group: group}
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

// knownUsers and knownGroups exist on every node.
var (
	knownUsers  = []string{"root", "www-data", "nobody", "ceph", "_chrony", "postfix", "sshd", SSHSudoUser, SSHNoSudoUser}
	knownGroups = []string{"root", "www-data", "nogroup", "ceph", "adm", "ssl-cert", "systemd-journal", "_chrony", "postfix", SSHSudoUser, SSHNoSudoUser}
)

// splitOperands separates options from operands, honouring "--".
func splitOperands(args []string, withValue map[string]bool) (opts map[string]string, operands []string, bad string) {
	opts = map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return opts, append(operands, args[i+1:]...), ""
		case strings.HasPrefix(a, "--") && strings.Contains(a, "="):
			k, v, _ := strings.Cut(a, "=")
			opts[k] = v
		case withValue[a]:
			if i+1 >= len(args) {
				return nil, nil, a
			}
			opts[a] = args[i+1]
			i++
		case strings.HasPrefix(a, "-") && len(a) > 1:
			opts[a] = ""
		default:
			operands = append(operands, a)
		}
	}
	return opts, operands, ""
}

func sshCat(x *sshExec) int {
	code := 0
	named := false
	for _, a := range x.argv[1:] {
		if a == "--" {
			continue
		}
		named = true
		if a == "-" {
			x.stdout.Write(x.stdin)
			continue
		}
		f, err := x.readFile(a)
		if err != nil {
			x.errf("cat: %s: %v\n", a, err)
			code = 1
			continue
		}
		x.stdout.Write(f.Content)
	}
	if !named {
		x.stdout.Write(x.stdin)
	}
	return code
}

func sshStat(x *sshExec) int {
	opts, files, bad := splitOperands(x.argv[1:], map[string]bool{"-c": true})
	if bad != "" {
		x.errf("stat: option requires an argument -- '%s'\nTry 'stat --help' for more information.\n", strings.TrimPrefix(bad, "-"))
		return 1
	}
	format, ok := opts["-c"]
	if !ok {
		format, ok = opts["--format"]
	}
	if !ok {
		x.errf("stat: pvesim simulates only stat -c FORMAT\n")
		return 1
	}
	if len(files) == 0 {
		x.errf("stat: missing operand\nTry 'stat --help' for more information.\n")
		return 1
	}
	code := 0
	for _, p := range files {
		kind, mode, owner, group, size := "regular file", uint32(0), "", "", 0
		if x.isDir(path.Clean(p)) {
			kind, mode, owner, group, size = "directory", 0o755, "root", "root", 4096
		} else {
			f, err := x.lookupFile(p)
			if err != nil {
				x.errf("stat: cannot statx '%s': %v\n", p, err)
				code = 1
				continue
			}
			mode, owner, group, size = f.Mode, f.Owner, f.Group, len(f.Content)
			if size == 0 {
				kind = "regular empty file"
			}
		}
		var b strings.Builder
		for i := 0; i < len(format); i++ {
			if format[i] != '%' || i+1 >= len(format) {
				b.WriteByte(format[i])
				continue
			}
			i++
			switch format[i] {
			case 'a':
				b.WriteString(strconv.FormatUint(uint64(mode), 8))
			case 'U':
				b.WriteString(owner)
			case 'G':
				b.WriteString(group)
			case 's':
				b.WriteString(strconv.Itoa(size))
			case 'n':
				b.WriteString(p)
			case 'F':
				b.WriteString(kind)
			case '%':
				b.WriteByte('%')
			default:
				b.WriteByte('?')
			}
		}
		x.outf("%s\n", b.String())
	}
	return code
}

func sshInstall(x *sshExec) int {
	opts, operands, bad := splitOperands(x.argv[1:], map[string]bool{"-m": true, "-o": true, "-g": true})
	if bad != "" {
		x.errf("install: option requires an argument -- '%s'\nTry 'install --help' for more information.\n", strings.TrimPrefix(bad, "-"))
		return 1
	}
	get := func(short, long string) (string, bool) {
		if v, ok := opts[short]; ok {
			return v, true
		}
		v, ok := opts[long]
		return v, ok
	}
	_, dirMode := opts["-d"]
	if _, ok := opts["--directory"]; ok {
		dirMode = true
	}
	_, noTargetDir := opts["-T"]
	modeStr, modeSet := get("-m", "--mode")
	owner, ownerSet := get("-o", "--owner")
	group, groupSet := get("-g", "--group")
	mode := uint64(0o755) // install's default
	if modeSet {
		m, err := strconv.ParseUint(modeStr, 8, 32)
		if err != nil || m > 0o7777 {
			x.errf("install: invalid mode '%s'\n", modeStr)
			return 1
		}
		mode = m
	}
	if !ownerSet {
		owner = "root"
	}
	if !groupSet {
		group = "root"
	}
	if !slices.Contains(knownUsers, owner) {
		x.errf("install: invalid user '%s'\n", owner)
		return 1
	}
	if !slices.Contains(knownGroups, group) {
		x.errf("install: invalid group '%s'\n", group)
		return 1
	}
	if dirMode {
		if len(operands) == 0 {
			x.errf("install: missing file operand\nTry 'install --help' for more information.\n")
			return 1
		}
		code := 0
		for _, d := range operands {
			if !x.root {
				x.errf("install: cannot create directory '%s': %v\n", d, errAccess)
				code = 1
				continue
			}
			if err := x.makeDirs(d); err != nil {
				x.errf("install: cannot create directory '%s': %v\n", d, err)
				code = 1
			}
		}
		return code
	}
	if len(operands) != 2 {
		x.errf("install: pvesim simulates install SOURCE DEST with exactly two operands\n")
		return 1
	}
	src, dst := operands[0], operands[1]
	if x.isDir(path.Clean(dst)) {
		if noTargetDir {
			x.errf("install: cannot overwrite directory '%s' with non-directory\n", dst)
			return 1
		}
		dst = path.Join(dst, path.Base(src))
	}
	var content []byte
	if src == "/dev/stdin" {
		content = append([]byte(nil), x.stdin...)
	} else {
		f, err := x.readFile(src)
		if err != nil {
			x.errf("install: cannot stat '%s': %v\n", src, err)
			return 1
		}
		content = append([]byte(nil), f.Content...)
	}
	if !x.root {
		x.errf("install: cannot create regular file '%s': %v\n", dst, errAccess)
		return 1
	}
	if err := x.storeFile(dst, &simFile{Content: content, Mode: uint32(mode), Owner: owner, Group: group}); err != nil {
		x.errf("install: cannot create regular file '%s': %v\n", dst, err)
		return 1
	}
	if isPVEPath(path.Clean(dst)) && x.s.nodeOS.files[path.Clean(dst)] == nil {
		// pmxcfs accepted the file with its fixed attributes; install's
		// chown and chmod fail unless they ask for exactly those.
		fmode, fowner, fgroup := pmxcfsAttrs(path.Clean(dst))
		if (ownerSet && owner != fowner) || (groupSet && group != fgroup) {
			x.errf("install: cannot change ownership of '%s': %v\n", dst, errPerm)
			return 1
		}
		if uint32(mode) != fmode {
			x.errf("install: cannot change permissions of '%s': %v\n", dst, errPerm)
			return 1
		}
	}
	return 0
}

func sshMv(x *sshExec) int {
	opts, operands, _ := splitOperands(x.argv[1:], nil)
	_, noTargetDir := opts["-T"]
	if len(operands) != 2 {
		x.errf("mv: pvesim simulates mv SOURCE DEST with exactly two operands\n")
		return 1
	}
	src, dst := operands[0], operands[1]
	f, err := x.lookupFile(src)
	if err != nil {
		if errors.Is(err, errIsDir) {
			x.errf("mv: pvesim does not move directories ('%s')\n", src)
			return 1
		}
		x.errf("mv: cannot stat '%s': %v\n", src, err)
		return 1
	}
	if x.isDir(path.Clean(dst)) {
		if noTargetDir {
			x.errf("mv: cannot overwrite directory '%s' with non-directory\n", dst)
			return 1
		}
		dst = path.Join(dst, path.Base(src))
	}
	if !x.root {
		x.errf("mv: cannot move '%s' to '%s': %v\n", src, dst, errAccess)
		return 1
	}
	moved := *f
	if err := x.storeFile(dst, &moved); err != nil {
		x.errf("mv: cannot move '%s' to '%s': %v\n", src, dst, err)
		return 1
	}
	if path.Clean(src) != path.Clean(dst) {
		if err := x.removeFile(src); err != nil {
			x.errf("mv: cannot remove '%s': %v\n", src, err)
			return 1
		}
	}
	return 0
}

func sshRm(x *sshExec) int {
	opts, operands, _ := splitOperands(x.argv[1:], nil)
	_, force := opts["-f"]
	if _, ok := opts["--force"]; ok {
		force = true
	}
	if len(operands) == 0 && !force {
		x.errf("rm: missing operand\nTry 'rm --help' for more information.\n")
		return 1
	}
	code := 0
	for _, p := range operands {
		if !x.root {
			if _, err := x.lookupFile(p); err == nil || errors.Is(err, errIsDir) {
				x.errf("rm: cannot remove '%s': %v\n", p, errAccess)
				code = 1
				continue
			}
		}
		err := x.removeFile(p)
		switch {
		case err == nil:
		case errors.Is(err, errNoEnt) && force:
		default:
			x.errf("rm: cannot remove '%s': %v\n", p, err)
			code = 1
		}
	}
	return code
}
