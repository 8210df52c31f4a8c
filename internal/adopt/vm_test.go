package adopt

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pvelab/terraform-provider-pve/internal/pve"
)

// Drives without a resource are reported, each with its reason, and none
// is adopted as a disk: a cloud-init drive, EFI and TPM state disks, a
// passed-through host disk, a detached volume. CD drives (empty and with
// an ISO) are neither: pve_vm's cdrom holds them.
func TestAdoptDisksReportsDrivesWithoutResource(t *testing.T) {
	r := testRun()
	cfg := &pve.VMConfig{Values: map[string]string{
		"ide2":      "ceph:vm-105-cloudinit,media=cdrom,size=4M",
		"ide0":      "local:iso/debian-12.iso,media=cdrom,size=600M",
		"sata1":     "none,media=cdrom",
		"efidisk0":  "ceph:vm-105-disk-0,efitype=4m,size=528K",
		"tpmstate0": "ceph:vm-105-disk-1,size=4M,version=v2.0",
		"sata0":     "/dev/disk/by-id/ata-HOST-DISK,size=100G",
		"unused0":   "ceph:vm-105-disk-2",
	}}
	g := pve.ClusterResource{Type: "qemu", VMID: 105, Node: "a"}
	if err := adoptDisks(context.Background(), r, g, cfg, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"ide2 of VM 105 (ceph:vm-105-cloudinit)":          "cloud-init",
		"efidisk0 of VM 105 (ceph:vm-105-disk-0)":         "destroying the VM deletes it",
		"tpmstate0 of VM 105 (ceph:vm-105-disk-1)":        "destroying the VM deletes it",
		"sata0 of VM 105 (/dev/disk/by-id/ata-HOST-DISK)": "passed through",
		"unused0 of VM 105 (ceph:vm-105-disk-2)":          "destroy_disks",
	}
	got := map[string]string{}
	for _, s := range r.res.Skipped {
		got[s.Object] = s.Reason
	}
	for obj, about := range want {
		if !strings.Contains(got[obj], about) {
			t.Errorf("%s: reported %q, want a reason about %q", obj, got[obj], about)
		}
	}
	if len(got) != len(want) {
		t.Errorf("reported %v, want exactly %d objects", r.res.Skipped, len(want))
	}
	if len(r.groups) != 0 {
		t.Errorf("adopted %v, want nothing", r.groups)
	}
}

// Containers and templates are reported, not adopted (no reader is
// needed: nothing is imported). The containers' HA is still adopted by
// sid; here there is none.
func TestAdoptVMsReportsContainersAndTemplates(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var data any
		switch req.URL.Path {
		case "/api2/json/cluster/resources":
			data = []map[string]any{
				{"id": "lxc/200", "type": "lxc", "node": "a", "vmid": 200, "name": "dns", "status": "running"},
				{"id": "qemu/900", "type": "qemu", "node": "b", "vmid": 900, "name": "debian-tmpl", "status": "stopped", "template": 1},
			}
		case "/api2/json/nodes/b/qemu/900/config":
			data = map[string]any{"template": 1, "scsi0": "ceph:base-900-disk-0,size=2G", "digest": "x"}
		case "/api2/json/cluster/ha/resources", "/api2/json/cluster/ha/rules":
			data = []any{}
		default:
			http.NotFound(w, req)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	defer srv.Close()
	api, err := pve.NewClient(pve.Config{Endpoint: srv.URL, APIToken: "root@pam!t=x", Insecure: true, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	r := testRun()
	r.api, r.release = api, "9.1"
	if err := adoptVMs(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range r.res.Skipped {
		got[s.Object] = s.Reason
	}
	if !strings.Contains(got["container 200 (dns) on a"], "no resource for containers") {
		t.Errorf("container: %q (report %v)", got["container 200 (dns) on a"], r.res.Skipped)
	}
	if !strings.Contains(got["VM 900 (debian-tmpl) on b"], "template") {
		t.Errorf("template: %q (report %v)", got["VM 900 (debian-tmpl) on b"], r.res.Skipped)
	}
	if len(r.groups) != 0 {
		t.Errorf("adopted %v, want nothing", r.groups)
	}
}
