package pvesim

import (
	"fmt"
	"math"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// fio(1) on a simulated node: the options a disk benchmark uses, answers
// in fio's JSON shape (fio 3.39 on Debian trixie, 3.33 on bookworm), and
// figures from a model of the node's drives. Writing to a device that
// holds something - partitions, LVM, a filesystem, a Ceph OSD - destroys
// it, as it does on a real node (fio opens block devices without O_EXCL
// and refuses only devices that are mounted themselves): an OSD on it
// crashes and its data is gone, and the write is recorded for
// Sim.DiskOverwrites.
//
// The model (per drive family, deterministic, per job at queue depth 1):
// a 4 KiB write that must be durable (O_SYNC/O_DSYNC, or a write plus
// fsync) costs syncLat; datacenter SSDs with power-loss protection
// acknowledge it from their capacitor-backed cache (Intel DC S3500 about
// 6,000, D3-S4510 about 10,000 IOPS), consumer QLC NVMe drives must write
// through to NAND (Intel 660p, Samsung PM981a: 650-800 IOPS, the
// reference lab measured about 800). Larger blocks add size/bandwidth.
// More jobs scale sub-linearly (jobs^jobExp) and saturate softly below
// the drive's ceiling; consumer drives barely scale and stay under a
// thousand. Writes without sync hit the drive's cache
// (the 660p: about 6,000 at QD1). A file adds the filesystem's cost (ext4
// journals O_SYNC's metadata). Latency percentiles follow from the mean
// with a tail that is heavier on consumer drives, quantised to fio's
// histogram buckets.

type diskPerf struct {
	family      string
	syncLat     float64 // µs per durable 4 KiB write, one job, QD1
	plainLat    float64 // µs per 4 KiB O_DIRECT write without sync
	writeMBs    float64 // sustained write bandwidth, MB/s (= bytes/µs)
	jobExp      float64 // IOPS grow with jobs^jobExp
	maxSyncIOPS float64 // ceiling of durable 4 KiB writes
	maxIOPS     float64 // ceiling of plain 4 KiB writes
	tail        float64 // 1 = datacenter drive; larger = heavier latency tail
	readLat     float64 // µs per 4 KiB read
	readMBs     float64
}

var diskPerfModels = []struct {
	re   *regexp.Regexp
	perf diskPerf
}{
	{regexp.MustCompile(`SSDSC2BB\d+G4`), diskPerf{family: "Intel DC S3500", syncLat: 165, plainLat: 118, writeMBs: 410,
		jobExp: 0.62, maxSyncIOPS: 11500, maxIOPS: 11500, tail: 1, readLat: 95, readMBs: 500}},
	{regexp.MustCompile(`SSDSC2BB\d+G[67]`), diskPerf{family: "Intel DC S3510/S3520", syncLat: 240, plainLat: 160, writeMBs: 135,
		jobExp: 0.55, maxSyncIOPS: 5500, maxIOPS: 5500, tail: 1, readLat: 100, readMBs: 450}},
	{regexp.MustCompile(`SSDSC2KB`), diskPerf{family: "Intel D3-S4510", syncLat: 98, plainLat: 72, writeMBs: 510,
		jobExp: 0.65, maxSyncIOPS: 18000, maxIOPS: 18000, tail: 1, readLat: 80, readMBs: 560}},
	{regexp.MustCompile(`SSDPEKNW`), diskPerf{family: "Intel 660p (QLC)", syncLat: 1050, plainLat: 140, writeMBs: 1000,
		jobExp: 0.12, maxSyncIOPS: 1000, maxIOPS: 220000, tail: 2.4, readLat: 110, readMBs: 1800}},
	{regexp.MustCompile(`MZVLB`), diskPerf{family: "Samsung PM981a", syncLat: 1300, plainLat: 90, writeMBs: 1800,
		jobExp: 0.18, maxSyncIOPS: 950, maxIOPS: 360000, tail: 2.2, readLat: 85, readMBs: 3000}},
}

// perfOf returns a disk's model; unknown models get a cautious default
// by type.
func perfOf(d *simDisk) diskPerf {
	m := strings.ToUpper(d.Model)
	for _, e := range diskPerfModels {
		if e.re.MatchString(m) {
			return e.perf
		}
	}
	switch d.Type {
	case "hdd":
		lat := 8300.0 // 7200 rpm
		if d.RPM >= 10000 {
			lat = 5200
		}
		return diskPerf{family: "HDD", syncLat: lat, plainLat: lat * 0.9, writeMBs: 180, jobExp: 0.1, maxSyncIOPS: 1.3e6 / lat,
			maxIOPS: 1.3e6 / lat, tail: 1.6, readLat: lat, readMBs: 200}
	case "nvme":
		return diskPerf{family: "NVMe", syncLat: 900, plainLat: 60, writeMBs: 1500, jobExp: 0.3, maxSyncIOPS: 2500, maxIOPS: 200000,
			tail: 2, readLat: 80, readMBs: 2500}
	}
	return diskPerf{family: "SATA SSD", syncLat: 600, plainLat: 110, writeMBs: 400, jobExp: 0.4, maxSyncIOPS: 3000, maxIOPS: 40000,
		tail: 1.8, readLat: 100, readMBs: 500}
}

// ramPerf is a filesystem in memory (tmpfs).
var ramPerf = diskPerf{family: "RAM", syncLat: 3, plainLat: 3, writeMBs: 6000, jobExp: 0.9, maxSyncIOPS: 900000, maxIOPS: 900000,
	tail: 1.5, readLat: 2, readMBs: 9000}

// benchState is what fio did on a node.
type benchState struct {
	// FioMissing: fio is not installed (it is not part of PVE).
	FioMissing bool            `json:"fio_missing,omitempty"`
	Overwrites []DiskOverwrite `json:"overwrites,omitempty"`
}

func (s *Sim) benchState(node string) *benchState {
	ns := s.st.Nodes[node]
	if ns.Bench == nil {
		ns.Bench = &benchState{}
	}
	return ns.Bench
}

// fioJob is one fio job from the command line.
type fioJob struct {
	name, filename, rw, ioengine string
	bs, size                     int64
	iodepth, numjobs             int
	direct, sync, fsync          bool
	dsync                        bool // sync=dsync or fdatasync
	runtime                      float64
	timeBased, group, unlink     bool
	allowMountedWrite            bool
	output                       string
	options                      [][2]string // as given, for "job options"
}

func (j *fioJob) writes() bool { return j.rw == "write" || j.rw == "randwrite" }

// fioSize parses fio's sizes: a number with an optional k/m/g/t suffix
// (powers of 1024; "b" bytes).
func fioSize(v string) (int64, bool) {
	re := regexp.MustCompile(`^(\d+)([kKmMgGtT]?)(i?[bB])?$`)
	m := re.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, false
	}
	shift := map[string]uint{"": 0, "k": 10, "m": 20, "g": 30, "t": 40}[strings.ToLower(m[2])]
	return n << shift, true
}

func fioBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "", "1", "true", "yes", "on":
		return true, true
	case "0", "false", "no", "off":
		return false, true
	}
	return false, false
}

var fioRWHelp = "        valid values: read       Sequential read\n" +
	"                    : write      Sequential write\n" +
	"                    : trim       Sequential trim\n" +
	"                    : randread   Random read\n" +
	"                    : randwrite  Random write\n" +
	"                    : randtrim   Random trim\n" +
	"                    : rw         Sequential read and write mix\n" +
	"                    : readwrite  Sequential read and write mix\n" +
	"                    : randrw     Random read and write mix\n" +
	"                    : trimwrite  Trim and write mix, trims preceding writes\n" +
	"                    : randtrimwrite Randomly trim and write mix, trims preceding writes\n\n"

// parseFio reads fio's command line: --opt=value or --opt value, flags.
func (x *sshExec) parseFio() (*fioJob, int, bool) {
	j := &fioJob{rw: "read", ioengine: "psync", bs: 4096, iodepth: 1, numjobs: 1, output: "normal"}
	flags := map[string]bool{"time_based": true, "group_reporting": true}
	args := x.argv[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			x.errf("fio: pvesim simulates job options on the command line only (--name=...), not job files (%s)\n", a)
			return nil, 1, false
		}
		key, val, has := strings.Cut(a[2:], "=")
		if !has && !flags[key] && key != "version" {
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				i++
				val = args[i]
			}
		}
		bad := func() (*fioJob, int, bool) {
			x.errf("fio: failed parsing %s=%s\n", key, val)
			return nil, 1, false
		}
		switch key {
		case "version":
			if x.s.rel.atLeast9() {
				x.outf("fio-3.39\n")
			} else {
				x.outf("fio-3.33\n")
			}
			return nil, 0, false
		case "name":
			j.name = val
		case "filename":
			j.filename = val
		case "rw", "readwrite":
			switch val {
			case "read", "write", "randread", "randwrite":
				j.rw = val
			case "trim", "randtrim", "rw", "readwrite", "randrw", "trimwrite", "randtrimwrite":
				x.errf("fio: pvesim simulates rw=read, write, randread and randwrite, not %s\n", val)
				return nil, 1, false
			default:
				x.errf("fio: failed parsing rw=%s\n%s", val, fioRWHelp)
				return nil, 1, false
			}
		case "bs", "blocksize":
			n, ok := fioSize(val)
			if !ok || n <= 0 {
				return bad()
			}
			j.bs = n
		case "size":
			n, ok := fioSize(val)
			if !ok || n <= 0 {
				return bad()
			}
			j.size = n
		case "iodepth", "numjobs":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return bad()
			}
			if key == "iodepth" {
				j.iodepth = n
			} else {
				j.numjobs = n
			}
		case "runtime":
			v := strings.TrimSuffix(val, "s")
			mult := 1.0
			if strings.HasSuffix(val, "m") {
				v, mult = strings.TrimSuffix(val, "m"), 60
			}
			n, err := strconv.ParseFloat(v, 64)
			if err != nil || n < 0 {
				return bad()
			}
			j.runtime = n * mult
		case "direct", "fsync", "fdatasync", "time_based", "group_reporting", "unlink", "allow_mounted_write", "randrepeat", "norandommap", "end_fsync":
			b, ok := fioBool(val)
			if !ok && key != "fsync" && key != "fdatasync" {
				return bad()
			}
			if !ok { // fsync=N: every N writes
				n, err := strconv.Atoi(val)
				if err != nil || n < 0 {
					return bad()
				}
				b = n > 0
			}
			switch key {
			case "direct":
				j.direct = b
			case "fsync":
				j.fsync = b
			case "fdatasync":
				j.fsync, j.dsync = b, b
			case "time_based":
				j.timeBased = b
			case "group_reporting":
				j.group = b
			case "unlink":
				j.unlink = b
			case "allow_mounted_write":
				j.allowMountedWrite = b
			}
		case "sync":
			switch val {
			case "", "1", "sync":
				j.sync = true
			case "dsync":
				j.sync, j.dsync = true, true
			case "0", "none":
			default:
				return bad()
			}
		case "ioengine":
			switch val {
			case "psync", "sync", "pvsync", "pvsync2", "libaio", "io_uring", "posixaio":
				j.ioengine = val
			default:
				x.errf("fio: engine %s not loadable\nfio: failed to load engine\n", val)
				return nil, 1, false
			}
		case "output-format":
			switch val {
			case "json", "normal", "json+":
				j.output = val
			default:
				x.errf("fio: pvesim simulates --output-format=json and normal, not %s\n", val)
				return nil, 1, false
			}
		default:
			x.errf("fio: unrecognized option '%s'\nfio: unrecognized option '%s'\n", a, a)
			return nil, 1, false
		}
		if key != "output-format" {
			j.options = append(j.options, [2]string{key, val})
		}
	}
	if j.name == "" {
		x.errf("No job(s) defined\n\n")
		x.errf("fio-3.39\nfio [options] [job options] <job file(s)>\n")
		return nil, 1, false
	}
	if j.filename == "" {
		j.filename = "/root/" + j.name + ".0.0" // the login's working directory
	}
	return j, 0, true
}

// fioTarget is what a job's filename is on the node.
type fioTarget struct {
	dev   *blockDev // a block device
	disk  *simDisk  // the drive that does the I/O
	fs    string    // "" for a device, else the filesystem type
	mount mountEntry
	exist bool // the file exists already
}

func sshFio(x *sshExec) int {
	if x.s.benchState(x.node).FioMissing {
		if x.viaSudo {
			x.errf("sudo: fio: command not found\n")
			return 1
		}
		x.errf("bash: line 1: fio: command not found\n")
		return 127
	}
	j, code, ok := x.parseFio()
	if !ok {
		return code
	}
	t, errno, where := x.fioResolve(j)
	if errno != 0 {
		return x.fioFail(j, errno, where)
	}
	if t.dev != nil && j.writes() && t.dev.mount != "" && t.dev.mount != "[SWAP]" && !j.allowMountedWrite {
		x.errf("fio: %s appears mounted, and 'allow_mounted_write' isn't set. Aborting.\n", j.filename)
		return 1
	}
	res := x.fioModel(j, t)
	if j.writes() && t.dev != nil {
		x.fioOverwrite(j, t)
	}
	if t.dev == nil {
		st := x.s.execState(x.node)
		p := path.Clean(j.filename)
		switch {
		case j.unlink:
			delete(st.Files, p)
		case !t.exist:
			// The laid-out file stays (its content is not kept).
			if st.Files == nil {
				st.Files = map[string]*simFile{}
			}
			st.Files[p] = &simFile{Mode: 0o644, Owner: "root", Group: "root"}
		}
		x.changed = true
	}
	if j.output == "normal" {
		x.fioNormal(j, res)
	} else {
		x.outf("%s", x.fioJSON(j, res, t, 0, ""))
	}
	return 0
}

// fioResolve finds the job's target; errno and where describe a failure
// to open it.
func (x *sshExec) fioResolve(j *fioJob) (fioTarget, int, string) {
	p := path.Clean(j.filename)
	if b := x.resolveBlockDev(p); b != nil {
		if !x.root {
			return fioTarget{}, 13, "file:filesetup.c:805, func=open(" + j.filename + "), error=Permission denied"
		}
		return fioTarget{dev: b, disk: b.disk}, 0, ""
	}
	if x.isDir(p) {
		return fioTarget{}, 21, "file:filesetup.c:150, func=unlink, error=Is a directory"
	}
	m := x.mountOf(p)
	_, err := x.lookupFile(p)
	exist := err == nil
	if strings.HasPrefix(p, "/dev/") && !exist {
		// Not a device: fio would create a regular file in devtmpfs.
		m = mountEntry{target: "/dev", source: "udev", fstype: "devtmpfs"}
	}
	if !exist && j.size == 0 {
		x.errf("%s: you need to specify size=\n", j.name)
		return fioTarget{}, 22, "file:filesetup.c:1155, func=total_file_size, error=Invalid argument"
	}
	if m.fstype == "fuse" {
		if j.direct {
			x.errf("fio: looks like your file system does not support direct=1/buffered=0\n")
		}
		return fioTarget{}, 22, "file:filesetup.c:805, func=open(" + j.filename + "), error=Invalid argument"
	}
	if !x.root && !strings.HasPrefix(p, "/tmp/") && !strings.HasPrefix(p, "/var/tmp/") {
		return fioTarget{}, 13, "file:filesetup.c:805, func=open(" + j.filename + "), error=Permission denied"
	}
	// fio creates missing parent directories.
	var missing []string
	for d := path.Dir(p); !x.isDir(d); d = path.Dir(d) {
		if _, err := x.lookupFile(d); err == nil {
			return fioTarget{}, 20, "file:filesetup.c:805, func=open(" + j.filename + "), error=Not a directory"
		}
		missing = append(missing, d)
	}
	if len(missing) > 0 {
		st := x.s.execState(x.node)
		st.Dirs = append(st.Dirs, missing...)
		sort.Strings(st.Dirs)
		x.changed = true
	}
	t := fioTarget{fs: m.fstype, mount: m, exist: exist}
	if b := x.resolveBlockDev(m.source); b != nil {
		t.disk = b.disk
	}
	return t, 0, ""
}

// fioFail prints an open failure: the error line and, in JSON, a job
// with its errno.
func (x *sshExec) fioFail(j *fioJob, errno int, where string) int {
	x.errf("fio: pid=0, err=%d/%s\n", errno, where)
	if j.output != "normal" {
		x.outf("%s", x.fioJSON(j, fioResult{}, fioTarget{}, errno, ""))
	}
	return 1
}

// fioResult is what one run measured, for the whole group.
type fioResult struct {
	iops       float64 // all jobs
	latNS      float64 // mean completion latency per I/O
	writeLatNS float64 // with fsync: the write's part of latNS
	syncLatNS  float64 // with fsync: the fsync's part
	runtimeMS  int64
	tail       float64
	ios        int64
}

// fioModel computes a run's figures from the drive, the job and the
// filesystem.
func (x *sshExec) fioModel(j *fioJob, t fioTarget) fioResult {
	perf := ramPerf
	switch {
	case t.fs == "tmpfs" || t.fs == "devtmpfs":
	case t.disk != nil:
		perf = perfOf(t.disk)
		if d := t.disk; d.SyncWriteIOPS > 0 {
			// The lab measured this drive: one job's durable 4 KiB writes
			// run at SyncWriteIOPS. Without PLP every flush goes to NAND or
			// platter, so more jobs barely add to it.
			// The latency is chosen so that one job, after the soft ceiling
			// below, gives exactly that figure.
			iops := float64(d.SyncWriteIOPS)
			if d.PLP {
				perf.maxSyncIOPS = max(perf.maxSyncIOPS, 2*iops)
			} else {
				perf.jobExp = min(perf.jobExp, 0.15)
				perf.maxSyncIOPS = 1.3 * iops
			}
			perf.syncLat = 1e6 * math.Pow(math.Pow(iops, -3)-math.Pow(perf.maxSyncIOPS, -3), 1.0/3)
		}
	}
	bs := float64(j.bs)
	durable := j.sync || j.fsync
	var lat, maxIOPS, exp float64
	switch {
	case !j.writes():
		lat = perf.readLat + math.Max(bs-4096, 0)/perf.readMBs
		maxIOPS, exp = perf.maxIOPS*4, 0.8
	case durable:
		lat = perf.syncLat + math.Max(bs-4096, 0)/perf.writeMBs
		maxIOPS, exp = perf.maxSyncIOPS, perf.jobExp
	case !j.direct && t.dev == nil:
		// Buffered: the page cache takes it.
		lat = 4 + bs/8000
		maxIOPS, exp = 600000, 0.9
	default:
		lat = perf.plainLat + math.Max(bs-4096, 0)/perf.writeMBs
		maxIOPS, exp = perf.maxIOPS, 0.75
	}
	if j.rw == "write" || j.rw == "read" {
		lat *= 0.96 // sequential
	}
	if t.dev == nil && j.writes() && durable && perf != ramPerf {
		// ext4: O_SYNC and fsync also commit the inode's mtime through the
		// journal; O_DSYNC and fdatasync only the data.
		if j.dsync {
			lat = lat*1.1 + 10
		} else {
			lat = lat*1.7 + 35
		}
	}
	// Deterministic per drive and job, within +-4 %.
	serial := ""
	if t.disk != nil {
		serial = t.disk.Serial
	}
	lat *= 0.96 + float64(hash64(x.node, serial, j.rw, j.bs, j.numjobs, durable, t.fs)%80)/1000
	// Jobs add IOPS sub-linearly and saturate softly at the drive's
	// ceiling; bandwidth is a hard limit.
	raw := 1e6 / lat * math.Pow(float64(j.numjobs), exp)
	iops := math.Pow(math.Pow(raw, -3)+math.Pow(maxIOPS, -3), -1.0/3)
	bwCap := perf.writeMBs * 1e6 / bs
	if !j.writes() {
		bwCap = perf.readMBs * 1e6 / bs
	}
	iops = math.Min(iops, bwCap)
	r := fioResult{iops: iops, latNS: float64(j.numjobs) / iops * 1e9, tail: perf.tail}
	if j.fsync && !j.sync {
		wl := perf.plainLat + math.Max(bs-4096, 0)/perf.writeMBs
		if !j.direct {
			wl = 4 + bs/8000
		}
		r.writeLatNS = math.Min(wl*1000, r.latNS*0.6)
		r.syncLatNS = r.latNS - r.writeLatNS
	}
	runtime := j.runtime
	if !j.timeBased || runtime == 0 {
		size := j.size
		if size == 0 && t.dev != nil {
			size = t.dev.size
		}
		done := float64(size) / bs / (iops / float64(j.numjobs))
		if runtime == 0 || done < runtime {
			runtime = done
		}
	}
	r.runtimeMS = int64(runtime*1000) + 1 + int64(hash64(j.name, runtime)%3)
	r.ios = int64(iops * float64(r.runtimeMS) / 1000)
	return r
}

// fioOverwrite records what a write to a device destroyed and applies it.
func (x *sshExec) fioOverwrite(j *fioJob, t fioTarget) {
	b, d := t.dev, t.dev.disk
	var held []string
	switch {
	case b.typ != "disk":
		held = append(held, "it is a "+map[string]string{"part": "partition", "lvm": "LVM volume", "crypt": "dm-crypt volume"}[b.typ]+" of "+d.DevPath)
	case d.Boot:
		held = append(held, "the node's boot disk (BIOS boot, EFI system partition, LVM volume group pve with the root filesystem)")
	}
	if b.typ == "disk" && !d.Boot {
		switch {
		case len(b.children) > 0:
			var names []string
			for _, c := range b.children {
				names = append(names, c.name)
			}
			held = append(held, "holds "+strings.Join(names, ", "))
		case b.fstype != "":
			held = append(held, b.fstype+" signature")
		}
	}
	ns := x.s.st.Nodes[x.node]
	osds := x.s.diskOSDs(ns, d)
	if len(held) == 0 && len(osds) == 0 {
		// An unused disk: its old partition table is gone, nothing else.
		d.GPT, d.Partitions, d.LVM = false, false, false
		return
	}
	if len(osds) > 0 {
		var names []string
		for _, id := range osds {
			names = append(names, fmt.Sprintf("osd.%d", id))
		}
		held = append(held, "Ceph "+strings.Join(names, ", "))
	}
	ow := DiskOverwrite{Node: x.node, Device: j.filename, Disk: d.DevPath, Held: strings.Join(held, "; "), OSDs: osds}
	st := x.s.benchState(x.node)
	st.Overwrites = append(st.Overwrites, ow)
	x.changed = true
	if cs := x.s.st.Domains[ns.Domain].Ceph; cs != nil && len(osds) > 0 {
		x.s.cephTickLocked(cs)
		for _, id := range osds {
			o := cs.OSDs[id]
			if o.Up {
				o.Up = false
				o.DownSince = cs.Clock
			}
			for _, p := range cs.Pools {
				for _, pg := range p.PGs {
					delete(pg.Copies, id)
				}
			}
			cs.DataLoss = append(cs.DataLoss, fmt.Sprintf("osd.%d (%s %s) was overwritten by fio at t=%.0fs: its BlueStore data is gone and the OSD crashed",
				id, x.node, d.DevPath, cs.Clock))
		}
		cs.Epoch++
		cs.settle()
	}
}

// platValue is fio's histogram bucket value for v nanoseconds
// (FIO_IO_U_PLAT_BITS 6: 64 buckets per power of two, reported at the
// bucket's middle).
func platValue(v float64) int64 {
	n := int64(v)
	if n < 128 {
		return n
	}
	msb := 63
	for n>>uint(msb) == 0 {
		msb--
	}
	errBits := uint(msb - 6)
	base := int64(1) << uint(msb)
	k := (n - base) >> errBits
	return base + int64((float64(k)+0.5)*float64(int64(1)<<errBits))
}

// fioPercentiles are fio's default percentile list with the multiples of
// the mean a datacenter drive shows; tail stretches the upper ones.
var fioPercentiles = []struct {
	key  string
	mult float64
}{
	{"1.000000", 0.62}, {"5.000000", 0.72}, {"10.000000", 0.78}, {"20.000000", 0.85}, {"30.000000", 0.9},
	{"40.000000", 0.95}, {"50.000000", 0.98}, {"60.000000", 1.02}, {"70.000000", 1.06}, {"80.000000", 1.12},
	{"90.000000", 1.25}, {"95.000000", 1.42}, {"99.000000", 2.3}, {"99.500000", 3.0}, {"99.900000", 5.2},
	{"99.950000", 6.8}, {"99.990000", 9.5},
}

// jv is one key of an ordered JSON object as fio prints it.
type jv struct {
	k string
	v any
}

func fioJSONValue(b *strings.Builder, v any, ind int) {
	pad := func(n int) string { return strings.Repeat("  ", n) }
	switch t := v.(type) {
	case []jv:
		b.WriteString("{\n")
		for i, kv := range t {
			b.WriteString(pad(ind+1) + strconv.Quote(kv.k) + " : ")
			fioJSONValue(b, kv.v, ind+1)
			if i < len(t)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(pad(ind) + "}")
	case [][]jv:
		b.WriteString("[\n")
		for i, o := range t {
			b.WriteString(pad(ind + 1))
			fioJSONValue(b, o, ind+1)
			if i < len(t)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(pad(ind) + "]")
	case string:
		b.WriteString(strconv.Quote(t))
	case int:
		b.WriteString(strconv.Itoa(t))
	case int64:
		b.WriteString(strconv.FormatInt(t, 10))
	case float64:
		fmt.Fprintf(b, "%f", t)
	}
}

// latStats is a clat_ns/lat_ns object.
func latStats(n int64, meanNS, tail float64, withPct bool) []jv {
	if n == 0 || meanNS == 0 {
		return []jv{{"min", 0}, {"max", 0}, {"mean", 0.0}, {"stddev", 0.0}, {"N", 0}}
	}
	stretch := func(m float64) float64 {
		if m <= 1.2 {
			return m
		}
		return 1 + (m-1)*tail
	}
	out := []jv{{"min", int64(meanNS * 0.5)}, {"max", int64(meanNS * stretch(9.5) * 1.4)}, {"mean", meanNS},
		{"stddev", meanNS * 0.35 * tail}, {"N", n}}
	if withPct {
		var pct []jv
		for _, p := range fioPercentiles {
			pct = append(pct, jv{p.key, platValue(meanNS * stretch(p.mult))})
		}
		out = append(out, jv{"percentile", pct})
	}
	return out
}

func ioStats(ios int64, bs int64, runtimeMS int64, r fioResult, share float64, fsyncSplit bool) []jv {
	iops := r.iops * share
	if ios == 0 {
		iops = 0
	}
	bw := int64(iops * float64(bs))
	clat := r.latNS
	if fsyncSplit {
		clat = r.writeLatNS
	}
	rt := runtimeMS
	if ios == 0 {
		rt = 0
	}
	return []jv{
		{"io_bytes", ios * bs}, {"io_kbytes", ios * bs / 1024}, {"bw_bytes", bw}, {"bw", bw / 1024}, {"iops", iops},
		{"runtime", rt}, {"total_ios", ios}, {"short_ios", 0}, {"drop_ios", 0},
		{"slat_ns", latStats(0, 0, 1, false)},
		{"clat_ns", latStats(ios, clat, r.tail, true)},
		{"lat_ns", latStats(ios, clat*1.0003, r.tail, false)},
		{"bw_min", int64(float64(bw/1024) * 0.9)}, {"bw_max", int64(float64(bw/1024) * 1.08)}, {"bw_agg", share * 100},
		{"bw_mean", float64(bw/1024) * 0.99}, {"bw_dev", float64(bw/1024) * 0.04 * r.tail}, {"bw_samples", rt / 500},
		{"iops_min", int64(iops * 0.9)}, {"iops_max", int64(iops * 1.08)}, {"iops_mean", iops * 0.99},
		{"iops_stddev", iops * 0.04 * r.tail}, {"iops_samples", rt / 500},
	}
}

// fioJSON renders --output-format=json.
func (x *sshExec) fioJSON(j *fioJob, r fioResult, t fioTarget, errno int, _ string) string {
	version := "fio-3.39"
	if !x.s.rel.atLeast9() {
		version = "fio-3.33"
	}
	now := time.Now()
	var opts []jv
	for _, o := range j.options {
		opts = append(opts, jv{o[0], o[1]})
	}
	jobsN := j.numjobs
	entries := jobsN
	if j.group {
		entries = 1
	}
	zero := ioStats(0, j.bs, 0, fioResult{}, 0, false)
	fsyncSplit := j.fsync && !j.sync
	var jobs [][]jv
	for e := 0; e < entries; e++ {
		share := 1.0 / float64(entries)
		ios := int64(float64(r.ios) * share)
		if errno != 0 {
			ios = 0
		}
		read, write := zero, zero
		if errno == 0 {
			if j.writes() {
				write = ioStats(ios, j.bs, r.runtimeMS, r, share, fsyncSplit)
			} else {
				read = ioStats(ios, j.bs, r.runtimeMS, r, share, false)
			}
		}
		syncIOs := int64(0)
		if fsyncSplit && errno == 0 {
			syncIOs = ios
		}
		syncLat := latStats(syncIOs, r.syncLatNS, r.tail, syncIOs > 0)
		elapsed, eta := r.runtimeMS/1000+1, 0
		if errno != 0 {
			elapsed, eta = 0, 2147483647
		}
		jobRuntime := r.runtimeMS * int64(jobsN/entries)
		job := []jv{
			{"jobname", j.name}, {"groupid", 0}, {"error", errno}, {"eta", eta}, {"elapsed", elapsed},
			{"job options", opts}, {"read", read}, {"write", write}, {"trim", zero},
			{"sync", []jv{{"total_ios", syncIOs}, {"lat_ns", syncLat}}},
			{"job_runtime", jobRuntime}, {"usr_cpu", 1.5}, {"sys_cpu", 11.8}, {"ctx", ios * 3}, {"majf", 0}, {"minf", 25},
			{"iodepth_level", []jv{{"1", 100.0 * float64(jobsN/entries)}, {"2", 0.0}, {"4", 0.0}, {"8", 0.0}, {"16", 0.0}, {"32", 0.0}, {">=64", 0.0}}},
			{"latency_depth", j.iodepth}, {"latency_target", 0}, {"latency_percentile", 100.0}, {"latency_window", 0},
		}
		jobs = append(jobs, job)
	}
	top := []jv{{"fio version", version}, {"timestamp", now.Unix()}, {"timestamp_ms", now.UnixMilli()},
		{"time", now.Format("Mon Jan _2 15:04:05 2006")}, {"jobs", jobs}}
	if errno == 0 && t.disk != nil {
		name := strings.TrimPrefix(t.disk.DevPath, "/dev/")
		top = append(top, jv{"disk_util", [][]jv{{{"name", name}, {"read_ios", 12}, {"write_ios", r.ios}, {"read_merges", 0},
			{"write_merges", 0}, {"read_ticks", 3}, {"write_ticks", int64(float64(r.ios) * r.latNS / 1e6)},
			{"in_queue", int64(float64(r.ios) * r.latNS / 1e6 * 1.2)}, {"util", 99.2}}}})
	}
	var b strings.Builder
	fioJSONValue(&b, top, 0)
	b.WriteString("\n")
	return b.String()
}

// fioNormal renders fio's default human-readable output, shortened.
func (x *sshExec) fioNormal(j *fioJob, r fioResult) {
	version := "fio-3.39"
	if !x.s.rel.atLeast9() {
		version = "fio-3.33"
	}
	x.outf("%s: (g=0): rw=%s, bs=(R) %dB-%dB, (W) %dB-%dB, (T) %dB-%dB, ioengine=%s, iodepth=%d\n",
		j.name, j.rw, j.bs, j.bs, j.bs, j.bs, j.bs, j.bs, j.ioengine, j.iodepth)
	x.outf("%s\nStarting %d process%s\n\n", version, j.numjobs, map[bool]string{true: "es", false: ""}[j.numjobs > 1])
	dir := "read"
	if j.writes() {
		dir = "write"
	}
	bw := r.iops * float64(j.bs)
	x.outf("%s: (groupid=0, jobs=%d): err= 0: pid=%d\n", j.name, j.numjobs, 4000+hash64(j.name)%30000)
	x.outf("  %s: IOPS=%.0f, BW=%.0fKiB/s (%.0fkB/s)(%dMiB/%dmsec)\n", dir, r.iops, bw/1024, bw/1000, r.ios*j.bs>>20, r.runtimeMS)
	x.outf("    clat (usec): avg=%.2f\n", r.latNS/1000)
}
