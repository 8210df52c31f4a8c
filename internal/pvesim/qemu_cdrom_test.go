package pvesim

import (
	"fmt"
	"strings"
	"testing"
)

// CD drives as qemu-server checks and writes them (PVE/API2/Qemu.pm
// $check_storage_access, $check_drive_param, create_disks and
// update_vm_api; PVE::Storage parse_volname, Plugin.pm activate_volume).

// putISO puts an ISO image on storage local of node z2g4a.
func putISO(t *testing.T, s *Sim, volid string, size int64) {
	t.Helper()
	if err := s.PutCDImage("z2g4a", volid, size); err != nil {
		t.Fatal(err)
	}
}

// The create: an ISO that is there is written with its size; one that
// is not fails the worker with activate_volume's words and leaves no VM;
// the checks before the fork refuse what is no ISO or no CD.
func TestQemuCdromCreate(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	putISO(t, s, "local:iso/pve.iso", 3<<20+2<<10)

	r := c.ok("POST", "/nodes/z2g4a/qemu", vals("vmid", "100", "ide2", "local:iso/missing.iso,media=cdrom"))
	qmTaskFails(t, c, r, "unable to create VM 100 - volume 'local:iso/missing.iso' does not exist")
	if cfg, _ := s.VMConfig(100); cfg != nil {
		t.Fatalf("the failed create left VM 100: %v", cfg)
	}

	for _, tc := range []struct {
		value  string
		status int
		want   string // the message, or ide2's parameter error
	}{
		{"local:iso/pve.iso", 400, "explicit 'media=cdrom' is required for iso images"},
		{"local:vztmpl/debian-13.tar.zst,media=cdrom", 400, "content type needs to be 'images' or 'iso'"},
		{"local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst,media=cdrom", 400, "content type needs to be 'images' or 'iso'"},
		{"local:isos/pve.iso,media=cdrom", 500, "unable to parse directory volume name 'isos/pve.iso'\n"},
		{"local:iso/pve.txt,media=cdrom", 500, "unable to parse directory volume name 'iso/pve.txt'\n"},
		{"nope:iso/pve.iso,media=cdrom", 500, "storage 'nope' does not exist\n"},
		{"local-lvm:iso/pve.iso,media=cdrom", 500, "unable to parse lvm volume name 'iso/pve.iso'\n"},
	} {
		r := c.do("POST", "/nodes/z2g4a/qemu", vals("vmid", "101", "ide2", tc.value))
		got := r.msg()
		if tc.status == 400 {
			got, _ = r.errs()["ide2"].(string)
		}
		if r.status != tc.status || got != tc.want {
			t.Errorf("ide2 = %s: %d %s, want %d %q", tc.value, r.status, r.raw, tc.status, tc.want)
		}
	}

	createRefVM(t, c, "ide2", "local:iso/pve.iso,media=cdrom", "sata0", "none", "ide0", "cdrom,media=cdrom", "net1", "virtio,bridge=vmbr0")
	conf := vmConfigOf(c, false)
	for k, want := range map[string]string{
		"ide2": "local:iso/pve.iso,media=cdrom,size=3074K", "sata0": "none,media=cdrom", "ide0": "cdrom,media=cdrom",
		// get_default_bootdevices: the first disk, the first CD drive and
		// the first NIC.
		"boot": "order=scsi0;ide0;net0",
	} {
		if conf[k] != want {
			t.Errorf("%s = %v, want %s", k, conf[k], want)
		}
	}
}

// The config update: a missing ISO fails the worker (POST) or the
// request (PUT); a new CD drive joins the boot order at its end, also
// when the request sets the boot order (boot is walked first); the ISO
// of a running VM's drive changes at once, with its size.
func TestQemuCdromUpdate(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	putISO(t, s, "local:iso/a.iso", 1<<30)
	putISO(t, s, "local:iso/b.img", 2<<20)
	createRefVM(t, c)

	r := c.ok("POST", vm100+"/config", vals("ide2", "local:iso/missing.iso,media=cdrom"))
	qmTaskFails(t, c, r, "volume 'local:iso/missing.iso' does not exist")
	r = c.do("PUT", vm100+"/config", vals("ide2", "local:iso/missing.iso,media=cdrom"))
	if r.status != 500 || r.msg() != "volume 'local:iso/missing.iso' does not exist\n" {
		t.Errorf("PUT with a missing ISO: %d %s", r.status, r.raw)
	}
	r = c.do("PUT", vm100+"/config", vals("sata1", "local:iso/a.iso"))
	if r.status != 400 || r.errs()["sata1"] != "explicit 'media=cdrom' is required for iso images" {
		t.Errorf("ISO without media=cdrom: %d %s", r.status, r.raw)
	}
	r = c.do("PUT", vm100+"/config", vals("sata1", "local:snippets/answer.toml,media=cdrom"))
	if r.status != 400 || r.errs()["sata1"] != "content type needs to be 'images' or 'iso'" {
		t.Errorf("a snippet as CD: %d %s", r.status, r.raw)
	}
	if cfg, _ := s.VMConfig(100); cfg["ide2"] != "" || cfg["sata1"] != "" || cfg["boot"] != "order=scsi0;net0" {
		t.Fatalf("refused updates changed the config: %v", cfg)
	}

	c.ok("PUT", vm100+"/config", vals("ide2", "local:iso/a.iso,media=cdrom", "boot", "order=ide2;scsi0"))
	conf := vmConfigOf(c, false)
	if conf["ide2"] != "local:iso/a.iso,media=cdrom,size=1G" || conf["boot"] != "order=scsi0;net0;ide2" {
		t.Errorf("ide2 %v boot %v: want the ISO with its size, and ide2 appended to the old order", conf["ide2"], conf["boot"])
	}
	// A drive already in the order stays where it is; the order given
	// now stands.
	c.ok("PUT", vm100+"/config", vals("ide2", "none,media=cdrom", "boot", "order=ide2;scsi0"))
	if conf := vmConfigOf(c, false); conf["ide2"] != "none,media=cdrom" || conf["boot"] != "order=ide2;scsi0" {
		t.Errorf("ide2 %v boot %v", conf["ide2"], conf["boot"])
	}

	r = c.ok("POST", vm100+"/status/start", nil)
	qmTaskOK(t, c, r)
	c.ok("PUT", vm100+"/config", vals("ide2", "local:iso/b.img,media=cdrom"))
	cur := vmConfigOf(c, true)
	if cur["ide2"] != "local:iso/b.img,media=cdrom,size=2M" {
		t.Errorf("running VM: ide2 = %v, want the new medium at once", cur["ide2"])
	}
	// A new CD drive on SATA waits for the restart, its boot entry too.
	c.ok("PUT", vm100+"/config", vals("sata0", "none"))
	pend, _ := s.VMPending(100)
	if pend["sata0"] != "none,media=cdrom" || pend["boot"] != "order=ide2;scsi0;sata0" {
		t.Errorf("pending %v: want sata0 and the boot order with it", pend)
	}
}

// parse_drive refuses a CD drive on VirtIO (and one with a format).
func TestQemuCdromNotOnVirtio(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	for k, v := range map[string]string{"virtio1": "none,media=cdrom", "ide2": "none,media=cdrom,format=raw"} {
		r := c.do("POST", "/nodes/z2g4a/qemu", vals("vmid", "101", k, v))
		if r.status != 400 || r.errs()[k] != "unable to parse drive options" {
			t.Errorf("%s = %s: %d %s", k, v, r.status, r.raw)
		}
	}
}

// Drive.pm's model: IDE only, url-encoded, at most 120 characters so
// encoded (40 bytes); the config keeps the encoded text.
func TestQemuDriveModel(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	createRefVM(t, c, "ide0", "local-lvm:1,model=Samsung%20SSD%20870%2C%20EVO,serial=S6PT%201")
	if got := vmConfigOf(c, false)["ide0"]; got != "local-lvm:vm-100-disk-0,model=Samsung%20SSD%20870%2C%20EVO,serial=S6PT%201,size=1G" {
		t.Errorf("ide0 = %v", got)
	}
	for _, tc := range []struct{ key, value, want string }{
		{"ide1", "local-lvm:1,model=Samsung SSD", "ide1.model: invalid format - invalid urlencoded string: Samsung SSD"},
		{"ide1", "local-lvm:1,model=" + strings.Repeat("%20", 41), "ide1.model: value may only be 120 characters long"},
		{"sata1", "local-lvm:1,model=X", "invalid key in comma-separated list property: model"},
	} {
		r := c.do("PUT", vm100+"/config", vals(tc.key, tc.value))
		if r.status != 400 || !strings.Contains(fmt.Sprint(r.errs()[tc.key]), tc.want) {
			t.Errorf("%s = %s: %d %s", tc.key, tc.value, r.status, r.raw)
		}
	}
}
