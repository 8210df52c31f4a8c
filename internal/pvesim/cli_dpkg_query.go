package pvesim

import (
	"sort"
	"strings"
)

// --- dpkg-query ---

// dpkgPackage is one package the node's dpkg database knows.
type dpkgPackage struct {
	name, version, arch string
	multiArch           bool
}

// dpkgPackages lists the packages of interest the node has installed.
func (x *sshExec) dpkgPackages() map[string]dpkgPackage {
	rel := x.s.rel
	p := x.s.cephPkgs(x.node)
	out := map[string]dpkgPackage{
		"pve-manager": {name: "pve-manager", version: rel.Version, arch: "all"},
		"proxmox-ve":  {name: "proxmox-ve", version: map[bool]string{true: "9.1.0", false: "8.4.0"}[rel.atLeast9()], arch: "all"},
	}
	for _, n := range cephClientPkgs {
		out[n] = dpkgPackage{name: n, version: p.Client, arch: "amd64", multiArch: strings.HasPrefix(n, "lib")}
	}
	if p.Installed {
		for _, n := range cephServerPkgs {
			arch := "amd64"
			if n == "ceph-volume" || n == "ceph-mgr-modules-core" || strings.HasPrefix(n, "python3-ceph-") {
				arch = "all"
			}
			out[n] = dpkgPackage{name: n, version: p.Version, arch: arch}
		}
	}
	if p.Extras {
		for _, n := range []string{"gdisk", "nvme-cli"} {
			out[n] = dpkgPackage{name: n, version: extraPkgVersion(rel, n), arch: "amd64"}
		}
	}
	if !x.s.benchState(x.node).FioMissing {
		v := "3.39-1"
		if !rel.atLeast9() {
			v = "3.33-3"
		}
		out["fio"] = dpkgPackage{name: "fio", version: v, arch: "amd64"}
	}
	return out
}

// sshDpkgQuery is dpkg-query -W [-f FORMAT] [PACKAGE...] (--show).
func sshDpkgQuery(x *sshExec) int {
	format := "${binary:Package}\t${Version}\n"
	show := false
	var names []string
	args := x.argv[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-W" || a == "--show":
			show = true
		case a == "-f" || a == "--showformat":
			if i+1 >= len(args) {
				x.errf("dpkg-query: error: --showformat needs a value\n\nUse --help for help about querying packages.\n")
				return 2
			}
			i++
			format = args[i]
		case strings.HasPrefix(a, "--showformat="):
			format = strings.TrimPrefix(a, "--showformat=")
		case strings.HasPrefix(a, "-f") && len(a) > 2:
			format = a[2:]
		case a == "--":
			names = append(names, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-"):
			x.errf("dpkg-query: error: unknown option %s\n\nUse --help for help about querying packages.\n", a)
			return 2
		default:
			names = append(names, a)
		}
	}
	if !show {
		x.errf("dpkg-query: pvesim simulates only -W/--show\n")
		return 2
	}
	pkgs := x.dpkgPackages()
	if len(names) == 0 {
		for n := range pkgs {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	code := 0
	for _, n := range names {
		p, ok := pkgs[strings.TrimSuffix(n, ":amd64")]
		if !ok {
			x.errf("dpkg-query: no packages found matching %s\n", n)
			code = 1
			continue
		}
		x.outf("%s", dpkgFormat(format, p))
	}
	return code
}

// dpkgFormat expands ${field} and the backslash escapes of a showformat.
func dpkgFormat(format string, p dpkgPackage) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		switch {
		case c == '\\' && i+1 < len(format):
			i++
			switch format[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '\\':
				b.WriteByte('\\')
			default:
				b.WriteByte('\\')
				b.WriteByte(format[i])
			}
		case c == '$' && i+1 < len(format) && format[i+1] == '{':
			end := strings.IndexByte(format[i:], '}')
			if end < 0 {
				b.WriteString(format[i:])
				return b.String()
			}
			field := format[i+2 : i+end]
			if k, _, ok := strings.Cut(field, ";"); ok {
				field = k // ${Package;-20}: width ignored
			}
			b.WriteString(dpkgField(field, p))
			i += end
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func dpkgField(field string, p dpkgPackage) string {
	switch strings.ToLower(field) {
	case "package":
		return p.name
	case "binary:package":
		if p.multiArch {
			return p.name + ":" + p.arch
		}
		return p.name
	case "version":
		return p.version
	case "architecture":
		return p.arch
	case "status":
		return "install ok installed"
	case "db:status-abbrev":
		return "ii "
	case "db:status-want":
		return "install"
	case "db:status-status":
		return "installed"
	case "db:status-eflag":
		return "ok"
	}
	return ""
}
