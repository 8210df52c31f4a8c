package pvesim

import (
	"net/url"
	"strings"
	"testing"
)

// A VM whose NIC names a bridge the node does not have is created (PVE
// does not check the bridge when writing the config) but does not start:
// qemu-server's pve-bridge dies "bridge 'vmbr9' does not exist" and the
// task fails "start failed: QEMU exited with code 1". The fresh-install
// lab's nodes have the installer's vmbr0, on which the VM starts.
func TestQemuStartRefusesMissingBridge(t *testing.T) {
	_, info := startSim(t, Options{Lab: shippedLab(t, "reference"), NoSSH: true})
	c := newClient(t, info, "")
	node := info.Nodes[0].Name
	for _, tc := range []struct {
		vmid, net, want string
	}{
		{"9301", "virtio,bridge=vmbr9", "start failed: QEMU exited with code 1"},
		{"9302", "virtio,bridge=vmbr0", "OK"},
	} {
		r := c.ok("POST", "/nodes/"+node+"/qemu", vals("vmid", tc.vmid, "memory", "512", "net0", tc.net))
		if st := c.waitTask(node, r.data().(string)); st["exitstatus"] != "OK" {
			t.Fatalf("create %s: %v", tc.vmid, st["exitstatus"])
		}
		upid := c.ok("POST", "/nodes/"+node+"/qemu/"+tc.vmid+"/status/start", nil).data().(string)
		if st := c.waitTask(node, upid); st["exitstatus"] != tc.want {
			t.Errorf("start %s (%s): %v, want %q", tc.vmid, tc.net, st["exitstatus"], tc.want)
		}
		if tc.want == "OK" {
			continue
		}
		log := c.ok("GET", "/nodes/"+node+"/tasks/"+url.PathEscape(upid)+"/log", nil).raw
		if !strings.Contains(string(log), "bridge 'vmbr9' does not exist") {
			t.Errorf("task log lacks the pve-bridge error: %s", log)
		}
		st := c.ok("GET", "/nodes/"+node+"/qemu/"+tc.vmid+"/status/current", nil).data().(map[string]any)
		if st["status"] != "stopped" {
			t.Errorf("VM %s is %v after the failed start", tc.vmid, st["status"])
		}
	}
}
