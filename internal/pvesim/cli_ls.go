package pvesim

import (
	"path"
	"sort"
	"strings"
)

// --- ls ---
//
// GNU ls as a non-interactive SSH command prints it (stdout is no
// terminal, so one name per line): -1, -a, -A, -p (a '/' after
// directories) and -d. Names are sorted in byte order, as ls does in the
// C locale; under a UTF-8 locale GNU ls collates (case and punctuation
// weigh less), so callers must not depend on the order. With more than
// one operand, file operands come first, then each directory as
// "<dir>:" and its entries, separated by an empty line. An operand that
// does not exist is "ls: cannot access '<p>': No such file or directory"
// and exit 2 (coreutils' LS_FAILURE for a command-line argument).

func sshLs(x *sshExec) int {
	all, almost, slash, dirOnly := false, false, false, false
	var operands []string
	args := x.argv[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case a == "--all":
			all = true
		case a == "--almost-all":
			almost = true
		case a == "--directory":
			dirOnly = true
		case a == "--indicator-style=slash":
			slash = true
		case strings.HasPrefix(a, "--"):
			x.errf("ls: pvesim simulates only -1, -a, -A, -d and -p, not '%s'\n", a)
			return 2
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for _, c := range a[1:] {
				switch c {
				case '1':
				case 'a':
					all = true
				case 'A':
					almost = true
				case 'p':
					slash = true
				case 'd':
					dirOnly = true
				default:
					// GNU ls has many more options; say which are simulated.
					x.errf("ls: pvesim simulates only -1, -a, -A, -d and -p, not -%c\n", c)
					return 2
				}
			}
		default:
			operands = append(operands, a)
		}
	}
	if len(operands) == 0 {
		operands = []string{"."}
	}
	name := func(n string, dir bool) string {
		if slash && dir {
			return n + "/"
		}
		return n
	}
	code := 0
	var files []string
	var dirs []string
	for _, op := range operands {
		p := op
		if !strings.HasPrefix(p, "/") {
			p = "/root/" + p // the SSH session's working directory is root's home
		}
		p = path.Clean(p)
		switch {
		case x.isDir(p):
			if dirOnly {
				files = append(files, name(op, true))
			} else {
				dirs = append(dirs, op)
			}
		default:
			if _, err := x.lookupFile(p); err != nil {
				x.errf("ls: cannot access '%s': %v\n", op, err)
				code = 2
				continue
			}
			files = append(files, name(op, false))
		}
	}
	sort.Strings(files)
	sort.Strings(dirs)
	printed := false
	for _, f := range files {
		x.outf("%s\n", f)
		printed = true
	}
	headers := len(operands) > 1
	for _, d := range dirs {
		if printed {
			x.outf("\n")
		}
		if headers {
			x.outf("%s:\n", d)
		}
		p := d
		if !strings.HasPrefix(p, "/") {
			p = "/root/" + p
		}
		entries := x.dirEntries(path.Clean(p))
		if all {
			x.outf("%s\n%s\n", name(".", true), name("..", true))
		}
		for _, e := range entries {
			if strings.HasPrefix(e.name, ".") && !all && !almost {
				continue
			}
			x.outf("%s\n", name(e.name, e.dir))
		}
		printed = true
	}
	return code
}

type dirEntry struct {
	name string
	dir  bool
}

// dirEntries are the names directly in directory p, sorted: the default
// and created directories, stored files and /etc/pve's, and the files
// that are views of simulator state.
func (x *sshExec) dirEntries(p string) []dirEntry {
	prefix := p + "/"
	if p == "/" {
		prefix = "/"
	}
	seen := map[string]bool{}
	var out []dirEntry
	add := func(full string) {
		if !strings.HasPrefix(full, prefix) || full == p {
			return
		}
		rest := strings.TrimPrefix(full, prefix)
		n, _, _ := strings.Cut(rest, "/")
		if n == "" || seen[n] {
			return
		}
		seen[n] = true
		out = append(out, dirEntry{name: n, dir: x.isDir(prefix + n)})
	}
	for _, d := range defaultDirs {
		add(d)
	}
	st := x.s.execState(x.node)
	for _, d := range st.Dirs {
		add(d)
	}
	for f := range st.Files {
		add(f)
	}
	for f := range x.domain().PVEFiles {
		add(f)
	}
	for f, h := range x.s.nodeOS.files {
		if h.read != nil {
			if _, ok := h.read(x); ok {
				add(f)
			}
		}
	}
	if p == "/etc/pve/nodes" {
		for n := range x.s.st.Nodes {
			if x.s.st.Nodes[n].Domain == x.s.st.Nodes[x.node].Domain {
				add(prefix + n)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
