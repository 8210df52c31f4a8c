package pvesim

import (
	"errors"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

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
	case "cp":
		return &sshProgram{run: sshCp}
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
		if (ownerSet && owner != pmxcfsOwner) || (groupSet && group != pmxcfsGroup) {
			x.errf("install: cannot change ownership of '%s': %v\n", dst, errPerm)
			return 1
		}
		if uint32(mode) != pmxcfsMode(path.Clean(dst)) {
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

// sshCp is cp SOURCE DEST for one regular file. Without -p a new file
// gets the source's mode (less the umask 022) and root's ownership, and
// an existing one keeps its own; -p (--preserve, -a) keeps the source's.
func sshCp(x *sshExec) int {
	opts, operands, _ := splitOperands(x.argv[1:], nil)
	preserve := false
	for o := range opts {
		switch o {
		case "-p", "--preserve", "-a", "--archive":
			preserve = true
		case "-f", "--force", "-T", "--no-target-directory":
		default:
			x.errf("cp: pvesim simulates only the options -p, -a, -f and -T, not %s\n", o)
			return 1
		}
	}
	_, noTargetDir := opts["-T"]
	if len(operands) == 0 {
		x.errf("cp: missing file operand\nTry 'cp --help' for more information.\n")
		return 1
	}
	if len(operands) == 1 {
		x.errf("cp: missing destination file operand after '%s'\nTry 'cp --help' for more information.\n", operands[0])
		return 1
	}
	if len(operands) != 2 {
		x.errf("cp: pvesim simulates cp SOURCE DEST with exactly two operands\n")
		return 1
	}
	src, dst := operands[0], operands[1]
	f, err := x.readFile(src)
	if err != nil {
		if errors.Is(err, errIsDir) {
			x.errf("cp: -r not specified; omitting directory '%s'\n", src)
			return 1
		}
		x.errf("cp: cannot stat '%s': %v\n", src, err)
		return 1
	}
	if x.isDir(path.Clean(dst)) {
		if noTargetDir {
			x.errf("cp: cannot overwrite directory '%s' with non-directory\n", dst)
			return 1
		}
		dst = path.Join(dst, path.Base(src))
	}
	if path.Clean(src) == path.Clean(dst) {
		x.errf("cp: '%s' and '%s' are the same file\n", src, dst)
		return 1
	}
	out := &simFile{Content: append([]byte(nil), f.Content...), Mode: f.Mode &^ 0o022, Owner: "root", Group: "root"}
	if !x.root {
		out.Owner, out.Group = x.user, x.user
	}
	if old, err := x.lookupFile(dst); err == nil && !preserve {
		out.Mode, out.Owner, out.Group = old.Mode, old.Owner, old.Group
	}
	if preserve {
		out.Mode, out.Owner, out.Group = f.Mode, f.Owner, f.Group
	}
	if !x.root {
		x.errf("cp: cannot create regular file '%s': %v\n", dst, errAccess)
		return 1
	}
	if err := x.storeFile(dst, out); err != nil {
		x.errf("cp: cannot create regular file '%s': %v\n", dst, err)
		return 1
	}
	return 0
}
