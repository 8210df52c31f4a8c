package pvesim

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// fioRun is the part of fio's JSON the tests read.
type fioRun struct {
	Version string `json:"fio version"`
	Jobs    []struct {
		Name  string `json:"jobname"`
		Error int    `json:"error"`
		Write struct {
			IOPS    float64 `json:"iops"`
			BW      int64   `json:"bw"`
			BWBytes int64   `json:"bw_bytes"`
			IOs     int64   `json:"total_ios"`
			Clat    struct {
				Mean float64          `json:"mean"`
				Pct  map[string]int64 `json:"percentile"`
			} `json:"clat_ns"`
		} `json:"write"`
		Sync struct {
			IOs int64 `json:"total_ios"`
		} `json:"sync"`
	} `json:"jobs"`
	DiskUtil []struct {
		Name string `json:"name"`
	} `json:"disk_util"`
}

func runFio(t *testing.T, tg *sshTarget, args string) fioRun {
	t.Helper()
	out := tg.ok("fio --name=bench --output-format=json --group_reporting " + args)
	var r fioRun
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("fio %s: %v\n%s", args, err, out)
	}
	if len(r.Jobs) != 1 || r.Jobs[0].Error != 0 {
		t.Fatalf("fio %s: %+v", args, r)
	}
	return r
}

const syncWrite = "--rw=randwrite --bs=4k --iodepth=1 --direct=1 --sync=1 --runtime=60 --time_based"

// Datacenter SSDs with power-loss protection sustain thousands of 4k sync
// writes per second, the consumer QLC NVMe drives under a thousand; more
// jobs help sub-linearly; the figures are deterministic.
func TestFioFiguresFromDiskModel(t *testing.T) {
	_, info := startSim(t, Options{ClusterName: "lab"})
	a, c := sshAs(t, info, "z2g4a", "root"), sshAs(t, info, "z2g4c", "root")
	iops := func(tg *sshTarget, dev, extra string) fioRun {
		return runFio(t, tg, "--filename="+dev+" "+syncWrite+" "+extra)
	}
	s3500 := iops(a, "/dev/sdb", "--numjobs=1")
	s4510 := iops(a, "/dev/sdc", "--numjobs=1")
	p660 := iops(a, "/dev/nvme0n1", "--numjobs=1")
	pm981a := iops(c, "/dev/nvme0n1", "--numjobs=1")
	for name, tc := range map[string]struct {
		r        fioRun
		min, max float64
	}{
		"DC S3500": {s3500, 5000, 7500}, "D3-S4510": {s4510, 8000, 15000},
		"660p": {p660, 500, 1000}, "PM981a": {pm981a, 500, 1000},
	} {
		w := tc.r.Jobs[0].Write
		if w.IOPS < tc.min || w.IOPS > tc.max {
			t.Errorf("%s: %.0f sync IOPS, want %.0f-%.0f", name, w.IOPS, tc.min, tc.max)
		}
		if w.BW != w.BWBytes/1024 || w.BWBytes != int64(w.IOPS*4096) {
			t.Errorf("%s: bw %d KiB/s, bw_bytes %d for %.0f IOPS", name, w.BW, w.BWBytes, w.IOPS)
		}
		p50, p99, p999 := w.Clat.Pct["50.000000"], w.Clat.Pct["99.000000"], w.Clat.Pct["99.900000"]
		if p50 <= 0 || p50 >= p99 || p99 >= p999 {
			t.Errorf("%s: percentiles %v", name, w.Clat.Pct)
		}
		// One job at QD1: the mean latency is the inverse of the IOPS.
		if got := 1e9 / w.Clat.Mean; got < w.IOPS*0.99 || got > w.IOPS*1.01 {
			t.Errorf("%s: mean latency %.0f ns does not match %.0f IOPS", name, w.Clat.Mean, w.IOPS)
		}
	}
	if s3500.DiskUtil[0].Name != "sdb" || s3500.Version != "fio-3.39" {
		t.Errorf("disk_util %v version %s", s3500.DiskUtil, s3500.Version)
	}
	// Consumer drives have the heavier tail.
	tail := func(r fioRun) float64 {
		return float64(r.Jobs[0].Write.Clat.Pct["99.900000"]) / float64(r.Jobs[0].Write.Clat.Pct["50.000000"])
	}
	if tail(p660) <= tail(s3500)*1.5 {
		t.Errorf("p99.9/p50: 660p %.1f, S3500 %.1f", tail(p660), tail(s3500))
	}
	four := iops(a, "/dev/sdb", "--numjobs=4").Jobs[0].Write.IOPS
	if one := s3500.Jobs[0].Write.IOPS; four <= one*1.5 || four >= one*4 {
		t.Errorf("S3500 4 jobs %.0f vs 1 job %.0f: want sub-linear growth", four, one)
	}
	if q := iops(a, "/dev/nvme0n1", "--numjobs=8").Jobs[0].Write.IOPS; q >= 1000 {
		t.Errorf("660p with 8 jobs: %.0f sync IOPS", q)
	}
	if again := iops(a, "/dev/sdb", "--numjobs=1"); again.Jobs[0].Write.IOPS != s3500.Jobs[0].Write.IOPS {
		t.Errorf("not deterministic: %.3f then %.3f", s3500.Jobs[0].Write.IOPS, again.Jobs[0].Write.IOPS)
	}
	// Without sync the QLC drive's cache answers (about 6,000 at QD1).
	if q := runFio(t, a, "--filename=/dev/nvme0n1 --rw=randwrite --bs=4k --direct=1 --runtime=10 --time_based").Jobs[0].Write.IOPS; q < 4000 {
		t.Errorf("660p without sync: %.0f IOPS", q)
	}
	// Bigger blocks: fewer IOPS, more bandwidth.
	big := runFio(t, a, "--filename=/dev/sdb --rw=write --bs=1m --direct=1 --sync=1 --runtime=10 --time_based").Jobs[0].Write
	if big.IOPS >= s3500.Jobs[0].Write.IOPS/10 || big.BWBytes <= s3500.Jobs[0].Write.BWBytes*5 {
		t.Errorf("1 MiB: %.0f IOPS %d B/s", big.IOPS, big.BWBytes)
	}
	// fsync after each write: the fsyncs are counted in "sync".
	fs := runFio(t, a, "--filename=/dev/sdc --rw=write --bs=4k --direct=1 --fsync=1 --runtime=10 --time_based")
	if fs.Jobs[0].Sync.IOs != fs.Jobs[0].Write.IOs || fs.Jobs[0].Write.IOPS < 5000 {
		t.Errorf("fsync=1: %+v", fs.Jobs[0])
	}
	// Without group_reporting each job is reported.
	var split fioRun
	if err := json.Unmarshal([]byte(a.ok("fio --name=b --filename=/dev/sdb --numjobs=2 --output-format=json "+syncWrite)), &split); err != nil || len(split.Jobs) != 2 {
		t.Fatalf("numjobs=2 without group_reporting: %v %+v", err, split)
	}
}

// labWithOSDs is a lab with Ceph, a monitor on every node and an OSD on
// /dev/sdb of each, and a replicated pool.
func labWithOSDs(t *testing.T) (*Sim, Info) {
	t.Helper()
	s, info := startSim(t, Options{ClusterName: "lab", TaskDuration: -1, CephTimeScale: -1})
	c := newClient(t, info, "")
	c.ok("POST", "/nodes/z2g4a/ceph/init", vals("network", "172.27.2.0/24"))
	for _, n := range []string{"z2g4a", "z2g4b", "z2g4c"} {
		c.createMon(n)
		root := rootOn(t, s, n)
		if st := root.waitTask(n, root.ok("POST", "/nodes/"+n+"/ceph/osd", vals("dev", "/dev/sdb")).data().(string)); st["exitstatus"] != "OK" {
			t.Fatalf("osd on %s: %v", n, st)
		}
	}
	if st := c.waitTask("z2g4a", c.ok("POST", "/nodes/z2g4a/ceph/pool", vals("name", "vm-disks")).data().(string)); st["exitstatus"] != "OK" {
		t.Fatalf("pool: %v", st)
	}
	return s, info
}

// A write benchmark on an OSD's disk destroys the OSD: it goes down, its
// copies are gone, the loss is recorded. Reads and unused disks are fine;
// mounted devices fio refuses itself.
func TestFioOnOSDDiskDestroysIt(t *testing.T) {
	s, info := labWithOSDs(t)
	a := sshAs(t, info, "z2g4a", "root")
	osdOn := func(node string) int {
		t.Helper()
		for _, o := range s.st.Domains[s.st.Nodes[node].Domain].Ceph.OSDs {
			if o.Host == node {
				return o.ID
			}
		}
		t.Fatalf("no OSD on %s", node)
		return -1
	}
	id := osdOn("z2g4a")
	// Reading is harmless; so is writing an unused disk.
	runFio(t, a, "--filename=/dev/sdb --rw=randread --bs=4k --direct=1 --runtime=5 --time_based")
	runFio(t, a, "--filename=/dev/sdc "+syncWrite)
	if got := s.DiskOverwrites(); len(got) != 0 {
		t.Fatalf("overwrites after a read and an unused disk: %+v", got)
	}
	if loss := s.CephDataLoss(); len(loss) != 0 {
		t.Fatalf("data loss before: %v", loss)
	}
	// The user's mistake from the reference lab.
	runFio(t, a, "--filename=/dev/disk/by-id/ata-INTEL_SSDSC2BB480G4_"+s.st.Nodes["z2g4a"].Disks[1].Serial+" "+syncWrite)
	got := s.DiskOverwrites()
	if len(got) != 1 || got[0].Disk != "/dev/sdb" || len(got[0].OSDs) != 1 || got[0].OSDs[0] != id || !strings.Contains(got[0].Held, fmt.Sprintf("osd.%d", id)) {
		t.Fatalf("overwrites: %+v", got)
	}
	loss := strings.Join(s.CephDataLoss(), "\n")
	if !strings.Contains(loss, fmt.Sprintf("osd.%d (z2g4a /dev/sdb) was overwritten by fio", id)) {
		t.Fatalf("data loss: %s", loss)
	}
	c := newClient(t, info, "")
	tree := c.ok("GET", "/nodes/z2g4a/ceph/osd", nil).raw
	if !strings.Contains(string(tree), `"status":"down"`) {
		t.Fatalf("OSD not down: %s", tree)
	}
	for _, pg := range s.st.Domains[s.st.Nodes["z2g4a"].Domain].Ceph.Pools[0].PGs {
		if _, ok := pg.Copies[id]; ok {
			t.Fatal("the overwritten OSD still holds a copy")
		}
	}
	// The boot disk: not mounted itself, so fio writes it.
	runFio(t, a, "--filename=/dev/sda "+syncWrite)
	if got := s.DiskOverwrites(); len(got) != 2 || !strings.Contains(got[1].Held, "boot disk") {
		t.Fatalf("boot disk: %+v", got)
	}
	// A mounted device: fio refuses.
	for _, dev := range []string{"/dev/sda2", "/dev/mapper/pve-root"} {
		_, errs, code := a.run("fio --name=b --filename="+dev+" "+syncWrite, nil)
		if code != 1 || errs != "fio: "+dev+" appears mounted, and 'allow_mounted_write' isn't set. Aborting.\n" {
			t.Errorf("%s: %d %q", dev, code, errs)
		}
	}
	if got := s.DiskOverwrites(); len(got) != 2 {
		t.Fatalf("mounted devices written: %+v", got)
	}
}

func TestFioScratchFileAndErrors(t *testing.T) {
	s, info := startSim(t, Options{ClusterName: "lab"})
	a := sshAs(t, info, "z2g4b", "root")
	r := runFio(t, a, "--filename=/var/lib/vz/bench.fio --size=1G --unlink=1 "+syncWrite)
	// On the boot SSD's ext4: O_SYNC journals the metadata too.
	if w := r.Jobs[0].Write.IOPS; w < 1000 || w > 4000 || r.DiskUtil[0].Name != "sda" {
		t.Errorf("file on the boot SSD: %.0f IOPS on %v", w, r.DiskUtil)
	}
	if _, ok := s.NodeFile("z2g4b", "/var/lib/vz/bench.fio"); ok {
		t.Error("unlink=1 left the file")
	}
	runFio(t, a, "--filename=/var/lib/vz/left/over.fio --size=64M "+syncWrite)
	if out := a.ok("stat -c %F /var/lib/vz/left/over.fio"); out != "regular empty file\n" {
		t.Errorf("leftover: %q", out)
	}
	a.ok("rm -f /var/lib/vz/left/over.fio")
	if _, ok := s.NodeFile("z2g4b", "/var/lib/vz/left/over.fio"); ok {
		t.Error("rm did not remove fio's file")
	}
	// tmpfs measures memory.
	if w := runFio(t, a, "--filename=/tmp/x.fio --size=64M --unlink=1 "+syncWrite).Jobs[0].Write.IOPS; w < 100000 {
		t.Errorf("tmpfs: %.0f IOPS", w)
	}
	for _, tc := range []struct{ args, stderr string }{
		{"--filename=/var/lib/vz/new.fio " + syncWrite, "bench: you need to specify size=\nfio: pid=0, err=22/file:filesetup.c:1155, func=total_file_size, error=Invalid argument\n"},
		{"--filename=/var/lib/vz --size=1G " + syncWrite, "err=21"},
		{"--filename=/etc/pve/x --size=1G " + syncWrite, "fio: looks like your file system does not support direct=1/buffered=0"},
	} {
		out, errs, code := a.run("fio --name=bench --output-format=json "+tc.args, nil)
		var r fioRun
		if code != 1 || !strings.Contains(errs, tc.stderr) || json.Unmarshal([]byte(out), &r) != nil || r.Jobs[0].Error == 0 {
			t.Errorf("%s: %d %q %q", tc.args, code, errs, out)
		}
	}
	for _, tc := range []struct {
		line, stderr string
		code         int
	}{
		{"fio --name=b --rw=bogus", "fio: failed parsing rw=bogus\n", 1},
		{"fio --name=b --bogus=1", "fio: unrecognized option '--bogus=1'\n", 1},
	} {
		if _, errs, code := a.run(tc.line, nil); code != tc.code || !strings.HasPrefix(errs, tc.stderr) {
			t.Errorf("%s: %d %q", tc.line, code, errs)
		}
	}
	if _, errs, code := sshAs(t, info, "z2g4b", SSHSudoUser).run("fio --name=b --filename=/dev/sdc "+syncWrite, nil); code != 1 || !strings.Contains(errs, "err=13") {
		t.Errorf("non-root on a device: %d %q", code, errs)
	}
	s.SetFioInstalled("z2g4b", false)
	if _, errs, code := a.run("fio --version", nil); code != 127 || errs != "bash: line 1: fio: command not found\n" {
		t.Errorf("without fio: %d %q", code, errs)
	}
}

// lsblk and findmnt show what the PVE installer and ceph-volume made.
func TestLsblkAndFindmnt(t *testing.T) {
	_, info := labWithOSDs(t)
	a := sshAs(t, info, "z2g4a", "root")
	type dev struct {
		Name     string  `json:"name"`
		Type     string  `json:"type"`
		FSType   *string `json:"fstype"`
		Mount    *string `json:"mountpoint"`
		Size     int64   `json:"size"`
		Children []dev   `json:"children"`
	}
	var out struct {
		Devs []dev `json:"blockdevices"`
	}
	raw := a.ok("lsblk -J -b -p -o NAME,TYPE,FSTYPE,MOUNTPOINT,SIZE /dev/sda /dev/sdb /dev/sdc")
	if err := json.Unmarshal([]byte(raw), &out); err != nil || len(out.Devs) != 3 {
		t.Fatalf("%v\n%s", err, raw)
	}
	sda, sdb, sdc := out.Devs[0], out.Devs[1], out.Devs[2]
	if sda.Type != "disk" || len(sda.Children) != 3 || *sda.Children[1].Mount != "/boot/efi" || *sda.Children[2].FSType != "LVM2_member" {
		t.Errorf("boot disk: %+v", sda)
	}
	if *sdb.FSType != "LVM2_member" || len(sdb.Children) != 1 || *sdb.Children[0].FSType != "ceph_bluestore" ||
		!strings.HasPrefix(sdb.Children[0].Name, "/dev/mapper/ceph--") || sdb.Size != size480G {
		t.Errorf("OSD disk: %+v", sdb)
	}
	if sdc.FSType != nil || sdc.Mount != nil || len(sdc.Children) != 0 {
		t.Errorf("unused disk: %+v", sdc)
	}
	if _, errs, code := a.run("lsblk -J /dev/sdz", nil); code != 32 || errs != "lsblk: /dev/sdz: not a block device\n" {
		t.Errorf("missing device: %d %q", code, errs)
	}
	if _, errs, code := a.run("lsblk -o NAME,HOLDERS", nil); code != 1 || errs != "lsblk: unknown column: HOLDERS\n" {
		t.Errorf("unknown column: %d %q", code, errs)
	}
	if got := a.ok("findmnt -n -o FSTYPE,SOURCE -T /var/lib/vz"); got != "ext4 /dev/mapper/pve-root\n" {
		t.Errorf("findmnt /var/lib/vz: %q", got)
	}
	if got := a.ok("findmnt -n -o FSTYPE -T /tmp"); got != "tmpfs\n" {
		t.Errorf("findmnt /tmp on trixie: %q", got)
	}
	if got := a.ok("findmnt -n -o TARGET,FSTYPE -T /etc/pve"); got != "/etc/pve fuse\n" {
		t.Errorf("findmnt /etc/pve: %q", got)
	}
	if out, _, code := a.run("findmnt -T /nonexistent/dir", nil); code != 1 || out != "" {
		t.Errorf("missing path: %d %q", code, out)
	}
}
