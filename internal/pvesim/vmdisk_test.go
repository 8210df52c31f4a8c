package pvesim

import (
	"strings"
	"testing"
)

// TestQemuSlotChangeKeepsVolume: one config write deleting a disk's slot
// and setting another slot to the same volume re-attaches it (qemu-server
// detaches the old slot to unusedN, and write_config drops the unusedN
// of a volume a drive uses again): nothing is freed or allocated, on a
// stopped VM and, for hot-pluggable buses, on a running one.
func TestQemuSlotChangeKeepsVolume(t *testing.T) {
	s, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	createRefVM(t, c)
	vol := "local-lvm:vm-100-disk-0"
	c.ok("PUT", vm100+"/config", vals("delete", "scsi0", "scsi1", vol+",cache=writeback,iothread=1", "boot", "order=scsi1;net0"))
	conf := vmConfigOf(c, false)
	if got, _ := conf["scsi1"].(string); !strings.HasPrefix(got, vol+",") || !strings.Contains(got, "size=32G") {
		t.Fatalf("scsi1 = %q", got)
	}
	for k := range conf {
		if k == "scsi0" || strings.HasPrefix(k, "unused") {
			t.Fatalf("%s left after the slot change: %v", k, conf)
		}
	}
	if size, ok := s.VolumeSize("z2g4a", vol); !ok || size != 32<<30 {
		t.Fatalf("volume after the slot change: %d %v", size, ok)
	}
	if vols := s.VMVolumes("z2g4a", "local-lvm", 100); len(vols) != 1 {
		t.Fatalf("volumes: %v", vols)
	}

	qmTaskOK(t, c, c.ok("POST", vm100+"/status/start", nil))
	c.ok("PUT", vm100+"/config", vals("delete", "scsi1", "virtio2", vol))
	conf = vmConfigOf(c, true)
	if got, _ := conf["virtio2"].(string); !strings.HasPrefix(got, vol) || conf["scsi1"] != nil {
		t.Fatalf("running VM after scsi1 -> virtio2: %v", conf)
	}
	if p, d := s.VMPending(100); len(p) > 0 && p["virtio2"] != "" || len(d) > 0 {
		t.Fatalf("hot-pluggable slot change left pending %v %v", p, d)
	}
	for k := range conf {
		if strings.HasPrefix(k, "unused") {
			t.Fatalf("%s after the live slot change: %v", k, conf)
		}
	}
}

// TestAddStorageHook: a storage the test defines takes VM images.
func TestAddStorageHook(t *testing.T) {
	s, _ := startSim(t, Options{NoSSH: true})
	a := s.st.NodeOrder[0]
	s.AddStorage(a, "images", "dir", map[string]string{"path": "/var/lib/images", "content": "images"})
	s.mu.Lock()
	v, err := s.allocVolumeLocked(a, "images", 100, 1<<30, "")
	s.mu.Unlock()
	if err != nil || v.volid() != "images:100/vm-100-disk-0.qcow2" {
		t.Fatalf("volume on the added storage: %+v %v", v, err)
	}
}
