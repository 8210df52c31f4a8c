package pvesim

import (
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"
)

// A node's block devices and mounts as lsblk(8) and findmnt(8) (util-linux)
// show them, derived from the disks (disks.go) and the Ceph OSDs: the boot
// disk the PVE installer partitioned (BIOS boot, ESP, LVM with the pve VG:
// swap, root, the data thin pool), OSD disks with the LVM that ceph-volume
// creates (VG ceph-<uuid>, LV osd-block-<uuid>, a BlueStore label that
// blkid reports as ceph_bluestore), and what the installer mounts.

type blockDev struct {
	name, kname string // /dev/sda, sda; /dev/mapper/pve-root, dm-1
	majMin      string
	typ         string // disk, part, lvm, crypt
	fstype      string
	mount       string
	size        int64
	model       string
	serial      string
	rota        bool
	pttype      string
	children    []*blockDev
	// disk is the whole disk this device is or lives on.
	disk *simDisk
	// aliases are other paths of the device (/dev/disk/by-id/...).
	aliases []string
}

func (b *blockDev) shortName() string {
	if strings.HasPrefix(b.name, "/dev/mapper/") {
		return strings.TrimPrefix(b.name, "/dev/mapper/")
	}
	return strings.TrimPrefix(b.name, "/dev/")
}

// partName is the kernel name of partition n of disk dev.
func partName(dev string, n int) string {
	if strings.Contains(path.Base(dev), "nvme") {
		return fmt.Sprintf("%sp%d", dev, n)
	}
	return fmt.Sprintf("%s%d", dev, n)
}

// dmName escapes an LVM name as device-mapper does: dashes doubled,
// VG and LV joined by one dash.
func dmName(vg, lv string) string {
	return strings.ReplaceAll(vg, "-", "--") + "-" + strings.ReplaceAll(lv, "-", "--")
}

// hashUUID is a stable UUID-shaped string.
func hashUUID(parts ...any) string {
	a, b := hash64(append(parts, "a")...), hash64(append(parts, "b")...)
	h := fmt.Sprintf("%016x%016x", a, b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// blockDevices builds node's device tree. Caller holds s.mu.
func (x *sshExec) blockDevices() []*blockDev {
	s := x.s
	ns := s.st.Nodes[x.node]
	disks := append([]*simDisk(nil), s.nodeDisks(ns)...)
	sort.Slice(disks, func(i, j int) bool { return disks[i].DevPath < disks[j].DevPath })
	var cs *cephState
	if d := s.st.Domains[ns.Domain]; d != nil {
		cs = d.Ceph
	}
	dm := 0
	nextDM := func() (string, string) {
		k := fmt.Sprintf("dm-%d", dm)
		mm := fmt.Sprintf("252:%d", dm)
		dm++
		return k, mm
	}
	lv := func(name, fstype, mount string, size int64, disk *simDisk) *blockDev {
		k, mm := nextDM()
		return &blockDev{name: "/dev/mapper/" + name, kname: k, majMin: mm, typ: "lvm", fstype: fstype, mount: mount, size: size, disk: disk}
	}
	var out []*blockDev
	sdN, nvmeN := 0, 0
	for _, d := range disks {
		b := &blockDev{name: d.DevPath, kname: strings.TrimPrefix(d.DevPath, "/dev/"), typ: "disk", size: d.Size,
			model: strings.ReplaceAll(d.Model, "_", " "), serial: d.Serial, rota: d.Type == "hdd", disk: d}
		if strings.Contains(d.DevPath, "nvme") {
			b.majMin = fmt.Sprintf("259:%d", nvmeN)
			nvmeN++
		} else {
			b.majMin = fmt.Sprintf("8:%d", sdN*16)
			sdN++
		}
		byID := strings.ReplaceAll(d.Model, " ", "_") + "_" + d.Serial
		b.aliases = append(b.aliases, "/dev/disk/by-id/"+byID)
		if d.Type == "nvme" {
			b.aliases = append(b.aliases, "/dev/disk/by-id/nvme-"+byID)
		} else {
			b.aliases = append(b.aliases, "/dev/disk/by-id/ata-"+byID)
		}
		if d.WWN != "" {
			b.aliases = append(b.aliases, "/dev/disk/by-id/wwn-"+d.WWN)
		}
		if d.GPT || d.Boot || d.Partitions {
			b.pttype = "gpt"
		}
		part := func(n int, fstype, mount string, size int64) *blockDev {
			p := &blockDev{name: partName(d.DevPath, n), typ: "part", fstype: fstype, mount: mount, size: size, disk: d}
			p.kname = strings.TrimPrefix(p.name, "/dev/")
			maj, minor, _ := strings.Cut(b.majMin, ":")
			mi, _ := strconv.Atoi(minor)
			p.majMin = fmt.Sprintf("%s:%d", maj, mi+n)
			return p
		}
		switch {
		case d.Boot:
			// The PVE installer's layout: BIOS boot, ESP, LVM (pve VG).
			const biosBoot, esp = 1031168, 1 << 30
			pv := part(3, "LVM2_member", "", d.Size-biosBoot-esp-(1<<20))
			swap, root, meta := int64(8<<30), d.Size/4, int64(1<<30)
			data := pv.size - swap - root - 2*meta - (4 << 30)
			// dm numbers in the order the installer creates them; the
			// thin pool shows under both of its metadata and data LVs.
			swapLV, rootLV := lv("pve-swap", "swap", "[SWAP]", swap, d), lv("pve-root", "ext4", "/", root, d)
			tmeta, tdata := lv("pve-data_tmeta", "", "", meta, d), lv("pve-data_tdata", "", "", data, d)
			tpool := lv("pve-data-tpool", "", "", data, d)
			tpool.children = []*blockDev{lv("pve-data", "", "", data, d)}
			tmeta.children, tdata.children = []*blockDev{tpool}, []*blockDev{tpool}
			pv.children = []*blockDev{swapLV, rootLV, tmeta, tdata}
			b.children = []*blockDev{part(1, "", "", biosBoot), part(2, "vfat", "/boot/efi", esp), pv}
		case len(x.s.diskOSDs(ns, d)) > 0 && cs != nil:
			b.fstype = "LVM2_member"
			vg := "ceph-" + hashUUID(x.node, d.DevPath, "vg")
			for _, id := range cs.osdIDs() {
				o := cs.OSDs[id]
				if o.Host != x.node {
					continue
				}
				add := func(kind string, size int64, fstype string) {
					l := lv(dmName(vg, "osd-"+kind+"-"+o.UUID), fstype, "", size, d)
					if o.Encrypted && kind == "block" {
						l.fstype = "crypto_LUKS"
						k, mm := nextDM()
						l.children = []*blockDev{{name: "/dev/mapper/" + hashUUID(o.UUID, "luks")[:23], kname: k, majMin: mm, typ: "crypt",
							fstype: "ceph_bluestore", size: size - (16 << 20), disk: d}}
					}
					b.children = append(b.children, l)
				}
				if o.Dev == d.DevPath {
					add("block", o.Size, "ceph_bluestore")
				}
				if o.DBDev == d.DevPath {
					add("db", d.Size/10, "")
				}
				if o.WALDev == d.DevPath {
					add("wal", 1<<30, "")
				}
			}
		case d.LVM:
			b.fstype = "LVM2_member"
		case d.Partitions:
			b.children = []*blockDev{part(1, "", "", d.Size-(2<<20))}
		}
		out = append(out, b)
	}
	return out
}

// walkBlock calls f for b and every device below it.
func walkBlock(devs []*blockDev, f func(*blockDev)) {
	for _, b := range devs {
		f(b)
		walkBlock(b.children, f)
	}
}

// resolveBlockDev finds the device a path names: its /dev or /dev/mapper
// name or a /dev/disk/by-id link.
func (x *sshExec) resolveBlockDev(p string) *blockDev {
	p = path.Clean(p)
	var found *blockDev
	walkBlock(x.blockDevices(), func(b *blockDev) {
		if found != nil {
			return
		}
		if b.name == p || "/dev/"+b.kname == p {
			found = b
			return
		}
		for _, a := range b.aliases {
			if a == p {
				found = b
			}
		}
	})
	return found
}

// pathExists reports whether p is a directory, a file or a mount point.
func (x *sshExec) pathExists(p string) bool {
	p = path.Clean(p)
	if x.isDir(p) {
		return true
	}
	if _, err := x.lookupFile(p); err == nil {
		return true
	}
	for _, m := range x.mounts() {
		if m.target == p {
			return true
		}
	}
	return x.resolveBlockDev(p) != nil
}

// jsonStr is a JSON string or null for "".
func jsonStr(s string) string {
	if s == "" {
		return "null"
	}
	return strconv.Quote(s)
}

// humanSize is lsblk's size without -b: binary units, one decimal.
func humanSize(n int64) string {
	units := []string{"B", "K", "M", "G", "T", "P"}
	f := float64(n)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 || f == math.Trunc(f) {
		return fmt.Sprintf("%d%s", int64(f), units[i])
	}
	return fmt.Sprintf("%.1f%s", f, units[i])
}

var lsblkColumns = map[string]bool{
	"NAME": true, "KNAME": true, "PATH": true, "MAJ:MIN": true, "RM": true, "SIZE": true, "RO": true, "TYPE": true,
	"FSTYPE": true, "MOUNTPOINT": true, "MOUNTPOINTS": true, "MODEL": true, "SERIAL": true, "ROTA": true, "PTTYPE": true, "PKNAME": true,
}

func sshLsblk(x *sshExec) int {
	cols := []string{"NAME", "MAJ:MIN", "RM", "SIZE", "RO", "TYPE", "MOUNTPOINTS"}
	jsonOut, bytes, paths, nodeps, noheadings := false, false, false, false, false
	var devs []string
	args := x.argv[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-J" || a == "--json":
			jsonOut = true
		case a == "-b" || a == "--bytes":
			bytes = true
		case a == "-p" || a == "--paths":
			paths = true
		case a == "-d" || a == "--nodeps":
			nodeps = true
		case a == "-n" || a == "--noheadings":
			noheadings = true
		case a == "-l" || a == "--list":
		case a == "-o" || a == "--output" || strings.HasPrefix(a, "--output=") || (strings.HasPrefix(a, "-o") && len(a) > 2):
			var v string
			switch {
			case strings.HasPrefix(a, "--output="):
				v = strings.TrimPrefix(a, "--output=")
			case len(a) > 2 && a[1] != '-':
				v = a[2:]
			default:
				if i+1 >= len(args) {
					x.errf("lsblk: option requires an argument -- 'o'\nTry 'lsblk --help' for more information.\n")
					return 1
				}
				i++
				v = args[i]
			}
			cols = nil
			for _, c := range strings.Split(v, ",") {
				c = strings.ToUpper(strings.TrimSpace(c))
				if !lsblkColumns[c] {
					x.errf("lsblk: unknown column: %s\n", c)
					return 1
				}
				cols = append(cols, c)
			}
		case a == "--":
			devs = append(devs, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-"):
			x.errf("lsblk: pvesim simulates only -J -b -p -d -n -l -o, not %s\n", a)
			return 1
		default:
			devs = append(devs, a)
		}
	}
	all := x.blockDevices()
	var shown []*blockDev
	code := 0
	if len(devs) == 0 {
		shown = all
	} else {
		missing := 0
		for _, d := range devs {
			b := x.resolveBlockDev(d)
			if b == nil {
				x.errf("lsblk: %s: not a block device\n", d)
				missing++
				continue
			}
			shown = append(shown, b)
		}
		switch {
		case missing == len(devs):
			code = 32
		case missing > 0:
			code = 64
		}
	}
	parentOf := map[*blockDev]*blockDev{}
	walkBlock(all, func(b *blockDev) {
		for _, c := range b.children {
			parentOf[c] = b
		}
	})
	value := func(b *blockDev, col string, asJSON bool) string {
		name := func(d *blockDev) string {
			if paths {
				return d.name
			}
			return d.shortName()
		}
		str := func(s string) string {
			if asJSON {
				return jsonStr(s)
			}
			return s
		}
		boolean := func(v bool) string {
			if asJSON {
				return strconv.FormatBool(v)
			}
			if v {
				return "1"
			}
			return "0"
		}
		switch col {
		case "NAME":
			return str(name(b))
		case "KNAME":
			return str(b.kname)
		case "PATH":
			return str(b.name)
		case "MAJ:MIN":
			return str(b.majMin)
		case "RM", "RO":
			return boolean(false)
		case "ROTA":
			return boolean(b.rota)
		case "SIZE":
			if bytes {
				return strconv.FormatInt(b.size, 10)
			}
			return str(humanSize(b.size))
		case "TYPE":
			return str(b.typ)
		case "FSTYPE":
			return str(b.fstype)
		case "MOUNTPOINT":
			return str(b.mount)
		case "MOUNTPOINTS":
			return b.mount // JSON: an array, see below
		case "MODEL":
			if b.typ != "disk" {
				return str("")
			}
			return str(b.model)
		case "SERIAL":
			if b.typ != "disk" {
				return str("")
			}
			return str(b.serial)
		case "PTTYPE":
			return str(b.pttype)
		case "PKNAME":
			if p := parentOf[b]; p != nil {
				return str(p.kname)
			}
			return str("")
		}
		return str("")
	}
	if jsonOut {
		var w strings.Builder
		var emit func(list []*blockDev, depth int)
		emit = func(list []*blockDev, depth int) {
			ind := strings.Repeat("   ", depth)
			for i, b := range list {
				if i == 0 {
					w.WriteString(ind + "{\n")
				}
				var fields []string
				for _, c := range cols {
					v := value(b, c, true)
					if c == "MOUNTPOINTS" {
						v = "[\n" + ind + "       " + jsonStr(b.mount) + "\n" + ind + "   ]"
					}
					fields = append(fields, fmt.Sprintf("%s   %q: %s", ind, strings.ToLower(c), v))
				}
				if len(b.children) > 0 && !nodeps {
					fields = append(fields, fmt.Sprintf("%s   \"children\": [\n", ind))
				}
				w.WriteString(strings.Join(fields, ",\n"))
				if len(b.children) > 0 && !nodeps {
					emit(b.children, depth+2)
					w.WriteString("\n" + ind + "   ]")
				}
				if i < len(list)-1 {
					w.WriteString("\n" + ind + "},{\n")
				} else {
					w.WriteString("\n" + ind + "}")
				}
			}
		}
		w.WriteString("{\n   \"blockdevices\": [\n")
		emit(shown, 2)
		if len(shown) == 0 {
			w.WriteString("\n")
		}
		w.WriteString("\n   ]\n}\n")
		x.outf("%s", w.String())
		return code
	}
	if !noheadings {
		x.outf("%s\n", strings.Join(cols, " "))
	}
	var list func([]*blockDev)
	list = func(ds []*blockDev) {
		for _, b := range ds {
			var vals []string
			for _, c := range cols {
				vals = append(vals, value(b, c, false))
			}
			x.outf("%s\n", strings.TrimRight(strings.Join(vals, " "), " "))
			if !nodeps {
				list(b.children)
			}
		}
	}
	list(shown)
	return code
}
