package pvesim

import "testing"

func TestStorageVolumes(t *testing.T) {
	s, _ := startSim(t, Options{NoSSH: true})
	s.mu.Lock()
	defer s.mu.Unlock()
	a, b := s.st.NodeOrder[0], s.st.NodeOrder[1]
	v0, err := s.allocVolumeLocked(a, "local-lvm", 100, 32<<30, "")
	if err != nil || v0.volid() != "local-lvm:vm-100-disk-0" || v0.Format != "raw" {
		t.Fatalf("first volume: %+v, %v", v0, err)
	}
	v1, err := s.allocVolumeLocked(a, "local-lvm", 100, 1<<30, "")
	if err != nil || v1.volid() != "local-lvm:vm-100-disk-1" {
		t.Fatalf("second volume: %+v, %v", v1, err)
	}
	// local-lvm is node-local: b has its own, empty one.
	if _, err := s.volumeLocked(b, v0.volid()); err == nil {
		t.Fatalf("%s sees %s of %s", b, v0.volid(), a)
	}
	d, err := s.allocVolumeLocked(a, "local", 100, 1<<30, "")
	if err != nil || d.volid() != "local:100/vm-100-disk-0.qcow2" {
		t.Fatalf("dir volume: %+v, %v", d, err)
	}
	if err := s.resizeVolumeLocked(a, v0.volid(), 16<<30); err == nil {
		t.Fatal("shrink accepted")
	}
	if err := s.freeVolumeLocked(a, v0.volid()); err != nil {
		t.Fatal(err)
	}
	if v, err := s.allocVolumeLocked(a, "local-lvm", 100, 1<<30, ""); err != nil || v.Name != "vm-100-disk-0" {
		t.Fatalf("freed name not reused: %+v, %v", v, err)
	}
	if _, err := s.allocVolumeLocked(a, "nope", 100, 1, ""); err == nil || err.Error() != "storage 'nope' does not exist" {
		t.Fatalf("missing storage: %v", err)
	}
	if got := formatSize(48 << 30); got != "48G" {
		t.Fatalf("formatSize: %s", got)
	}
}

// Volumes see storage.cfg as PVE::Storage::config() parses it on the node:
// a plugin storage is invisible where the plugin is missing, and an empty
// content is the type's default.
func TestStorageVolumesUseTheNodesParsedConfig(t *testing.T) {
	s, _ := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	a := s.st.NodeOrder[0]
	s.AddStorage(a, "linstor", "drbd", map[string]string{"resourcegroup": "pve-rg"})
	s.mu.Lock()
	_, err := s.allocVolumeLocked(a, "linstor", 100, 1<<30, "")
	s.mu.Unlock()
	if err == nil || err.Error() != "storage 'linstor' does not exist" {
		t.Fatalf("volume on a plugin storage without the plugin: %v", err)
	}
	if err := s.InstallStoragePlugin(a, "drbd"); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.allocVolumeLocked(a, "linstor", 100, 1<<30, "")
	if err != nil || v.volid() != "linstor:vm-100-disk-0" {
		t.Fatalf("volume with the plugin: %+v, %v", v, err)
	}
	e, err := s.storageEntryLocked(a, "linstor")
	if err != nil || !e.contentTypes()["images"] {
		t.Fatalf("default content of drbd: %+v, %v", e, err)
	}
}
