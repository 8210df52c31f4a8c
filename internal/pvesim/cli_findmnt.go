package pvesim

import (
	"fmt"
	"path"
	"strings"
)

// mountEntry is one line of the node's mount table.
type mountEntry struct {
	target, source, fstype, options string
}

// mounts is node's mount table (the parts that matter): root on the pve
// VG, the ESP, pmxcfs on /etc/pve, tmpfs on /run and (Debian trixie) /tmp,
// and the tmpfs of each OSD's data directory.
func (x *sshExec) mounts() []mountEntry {
	m := []mountEntry{
		{"/", "/dev/mapper/pve-root", "ext4", "rw,relatime,errors=remount-ro"},
		{"/run", "tmpfs", "tmpfs", "rw,nosuid,nodev,noexec,relatime,size=6577412k,mode=755,inode64"},
		{"/boot/efi", "/dev/sda2", "vfat", "rw,relatime,fmask=0022,dmask=0022,codepage=437,iocharset=iso8859-1,shortname=mixed,errors=remount-ro"},
		{"/etc/pve", "/dev/fuse", "fuse", "rw,nosuid,nodev,relatime,user_id=0,group_id=0,default_permissions,allow_other"},
	}
	if x.s.rel.atLeast9() {
		m = append(m, mountEntry{"/tmp", "tmpfs", "tmpfs", "rw,nosuid,nodev,size=32889072k,nr_inodes=1048576,inode64"})
	}
	ns := x.s.st.Nodes[x.node]
	if d := x.s.st.Domains[ns.Domain]; d != nil && d.Ceph != nil {
		for _, id := range d.Ceph.osdIDs() {
			if d.Ceph.OSDs[id].Host == x.node {
				m = append(m, mountEntry{fmt.Sprintf("/var/lib/ceph/osd/ceph-%d", id), "tmpfs", "tmpfs", "rw,relatime,inode64"})
			}
		}
	}
	return m
}

// mountOf returns the mount that holds p (the longest target prefix).
func (x *sshExec) mountOf(p string) mountEntry {
	p = path.Clean(p)
	best := mountEntry{}
	for _, m := range x.mounts() {
		if (p == m.target || strings.HasPrefix(p, strings.TrimSuffix(m.target, "/")+"/")) && len(m.target) >= len(best.target) {
			best = m
		}
	}
	return best
}

func sshFindmnt(x *sshExec) int {
	cols := []string{"TARGET", "SOURCE", "FSTYPE", "OPTIONS"}
	jsonOut, noheadings := false, false
	target := ""
	args := x.argv[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-J" || a == "--json":
			jsonOut = true
		case a == "-n" || a == "--noheadings":
			noheadings = true
		case a == "-T" || a == "--target" || a == "-o" || a == "--output":
			if i+1 >= len(args) {
				x.errf("findmnt: option requires an argument -- '%s'\nTry 'findmnt --help' for more information.\n", strings.TrimLeft(a, "-")[:1])
				return 1
			}
			i++
			if a == "-T" || a == "--target" {
				target = args[i]
				continue
			}
			cols = nil
			for _, c := range strings.Split(args[i], ",") {
				c = strings.ToUpper(strings.TrimSpace(c))
				switch c {
				case "TARGET", "SOURCE", "FSTYPE", "OPTIONS":
				default:
					x.errf("findmnt: unknown column: %s\n", c)
					return 1
				}
				cols = append(cols, c)
			}
		case strings.HasPrefix(a, "--target="):
			target = strings.TrimPrefix(a, "--target=")
		case strings.HasPrefix(a, "--output="):
			args = append(args[:i+1], append([]string{strings.TrimPrefix(a, "--output=")}, args[i+1:]...)...)
			args[i] = "-o"
			i--
		default:
			x.errf("findmnt: pvesim simulates only findmnt [-J] [-n] [-o COLUMNS] -T PATH, not %s\n", a)
			return 1
		}
	}
	if target == "" {
		x.errf("findmnt: pvesim simulates only findmnt [-J] [-n] [-o COLUMNS] -T PATH\n")
		return 1
	}
	if !x.pathExists(target) {
		return 1 // findmnt -T of a missing path prints nothing
	}
	m := x.mountOf(target)
	val := func(c string) string {
		switch c {
		case "TARGET":
			return m.target
		case "SOURCE":
			return m.source
		case "FSTYPE":
			return m.fstype
		}
		return m.options
	}
	if jsonOut {
		var fields []string
		for _, c := range cols {
			fields = append(fields, fmt.Sprintf("         %q: %s", strings.ToLower(c), jsonStr(val(c))))
		}
		x.outf("{\n   \"filesystems\": [\n      {\n%s\n      }\n   ]\n}\n", strings.Join(fields, ",\n"))
		return 0
	}
	if !noheadings {
		x.outf("%s\n", strings.Join(cols, " "))
	}
	var vals []string
	for _, c := range cols {
		vals = append(vals, val(c))
	}
	x.outf("%s\n", strings.Join(vals, " "))
	return 0
}
