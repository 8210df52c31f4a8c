package pvesim

import (
	"strings"
	"testing"
)

func TestPoolsCreateUpdateDeleteAsPoolPm(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")

	c.ok("POST", "/pools", vals("poolid", "lab", "comment", "homelab"))
	c.ok("POST", "/pools", vals("poolid", "lab/web"))
	for _, tc := range []struct {
		p    []string
		want string
	}{
		{[]string{"poolid", "lab"}, "create pool failed: pool 'lab' already exists\n"},
		{[]string{"poolid", "none/x"}, "create pool failed: parent 'none' of pool 'none/x' does not exist\n"},
		{[]string{"poolid", "9lives"}, "create pool failed: pool name must start with a letter\n"},
		{[]string{"poolid", "lab/_x"}, "create pool failed: pool name must start with a letter\n"},
	} {
		if r := c.do("POST", "/pools", vals(tc.p...)); r.status != 500 || r.msg() != tc.want {
			t.Errorf("create %v: %d %q, want %q", tc.p, r.status, r.msg(), tc.want)
		}
	}
	if r := c.do("POST", "/pools", vals("poolid", "a/b/c/d")); r.status != 400 || r.errs()["poolid"] != "invalid format - pool name 'a/b/c/d' nested too deeply (max levels = 3)\n" {
		t.Errorf("nested too deeply: %d %s", r.status, r.raw)
	}
	if r := c.do("POST", "/pools", vals("poolid", "a b")); r.status != 400 || r.errs()["poolid"] != "invalid format - pool name 'a b' contains invalid characters\n" {
		t.Errorf("invalid characters: %d %s", r.status, r.raw)
	}

	list := c.ok("GET", "/pools", nil).data().([]any)
	if len(list) != 2 || list[0].(map[string]any)["poolid"] != "lab" || list[0].(map[string]any)["comment"] != "homelab" ||
		list[1].(map[string]any)["poolid"] != "lab/web" || list[1].(map[string]any)["comment"] != nil {
		t.Fatalf("pools: %v", list)
	}
	if r := c.do("GET", "/pools", vals("type", "qemu")); r.status != 400 || r.errs()["poolid"] == nil {
		t.Errorf("type without poolid: %d %s", r.status, r.raw)
	}
	if r := c.do("GET", "/pools", vals("poolid", "gone")); r.status != 500 || r.msg() != "pool 'gone' does not exist\n" {
		t.Errorf("missing pool: %d %q", r.status, r.msg())
	}

	// Members: a storage (shown from the listener node) and VMs, which
	// need not exist to be added.
	c.ok("PUT", "/pools", vals("poolid", "lab", "storage", "local-lvm", "vms", "100", "comment", "changed"))
	for _, tc := range []struct {
		p    []string
		want string
	}{
		{[]string{"poolid", "lab", "vms", "100"}, "update pools failed: VM 100 is already a pool member\n"},
		{[]string{"poolid", "lab/web", "vms", "100"}, "update pools failed: VM 100 belongs already to pool 'lab' and 'allow-move' is not set\n"},
		{[]string{"poolid", "lab", "vms", "101", "delete", "1"}, "update pools failed: VM 101 is not a pool member\n"},
		{[]string{"poolid", "lab", "storage", "local-lvm"}, "update pools failed: Storage 'local-lvm' is already a pool member\n"},
		{[]string{"poolid", "lab", "storage", "local", "delete", "1"}, "update pools failed: Storage 'local' is not a pool member\n"},
		{[]string{"poolid", "gone", "comment", "x"}, "update pools failed: pool 'gone' does not exist\n"},
	} {
		if r := c.do("PUT", "/pools", vals(tc.p...)); r.status != 500 || r.msg() != tc.want {
			t.Errorf("update %v: %d %q, want %q", tc.p, r.status, r.msg(), tc.want)
		}
	}
	p := c.ok("GET", "/pools/lab", nil).data().(map[string]any)
	members := p["members"].([]any)
	if p["comment"] != "changed" || len(members) != 1 {
		t.Fatalf("pool lab: %v", p)
	}
	m := members[0].(map[string]any)
	if m["id"] != "storage/z2g4a/local-lvm" || m["type"] != "storage" || m["status"] != "available" || m["plugintype"] != "lvmthin" {
		t.Errorf("storage member: %v", m)
	}

	// Not empty: child pool first, then the storage; the absent VM does not count.
	if r := c.do("DELETE", "/pools", vals("poolid", "lab")); r.status != 500 || r.msg() != "delete pool failed: pool 'lab' is not empty (contains pool 'lab/web')\n" {
		t.Errorf("delete with child: %d %q", r.status, r.msg())
	}
	// The deprecated path form has no nested pools.
	if r := c.do("DELETE", "/pools/lab/web", nil); r.status != 501 {
		t.Errorf("deprecated path with a nested pool: %d %s", r.status, r.raw)
	}
	c.ok("DELETE", "/pools", vals("poolid", "lab/web"))
	if r := c.do("DELETE", "/pools/lab", nil); r.status != 500 || r.msg() != "delete pool failed: pool 'lab' is not empty (contains storage 'local-lvm')\n" {
		t.Errorf("delete with storage: %d %q", r.status, r.msg())
	}
	// allow-move takes the VM out of its pool.
	c.ok("POST", "/pools", vals("poolid", "other"))
	c.ok("PUT", "/pools/other", vals("vms", "100", "allow-move", "1"))
	c.ok("PUT", "/pools", vals("poolid", "lab", "storage", "local-lvm", "delete", "1"))
	c.ok("DELETE", "/pools", vals("poolid", "lab"))
	if list := c.ok("GET", "/pools", nil).data().([]any); len(list) != 1 || list[0].(map[string]any)["poolid"] != "other" {
		t.Errorf("after delete: %v", list)
	}
}

func TestPoolsVMCreateJoinsPoolAndResourcesShowIt(t *testing.T) {
	_, info := startSim(t, Options{NoSSH: true, ClusterName: "lab"})
	c := newClient(t, info, "")
	if r := c.do("POST", "/nodes/z2g4a/qemu", vals("vmid", "100", "pool", "prod")); r.status != 403 || r.msg() != "Permission check failed (pool 'prod' does not exist)\n" {
		t.Fatalf("create into missing pool: %d %q", r.status, r.msg())
	}
	c.ok("POST", "/pools", vals("poolid", "prod"))
	createRefVM(t, c, "pool", "prod")
	if _, has := vmConfigOf(c, false)["pool"]; has {
		t.Errorf("pool written into the VM config")
	}
	p := c.ok("GET", "/pools", vals("poolid", "prod")).data().([]any)[0].(map[string]any)
	members := p["members"].([]any)
	if len(members) != 1 || members[0].(map[string]any)["id"] != "qemu/100" || members[0].(map[string]any)["vmid"] != float64(100) {
		t.Fatalf("members: %v", p)
	}
	if got := c.ok("GET", "/pools", vals("poolid", "prod", "type", "storage")).data().([]any)[0].(map[string]any)["members"].([]any); len(got) != 0 {
		t.Errorf("type=storage members: %v", got)
	}

	rows := c.ok("GET", "/cluster/resources", nil).data().([]any)
	first := rows[0].(map[string]any)
	if first["id"] != "/pool/prod" || first["type"] != "pool" || first["pool"] != "prod" {
		t.Errorf("first row: %v", first)
	}
	var vmRow map[string]any
	for _, r := range rows {
		if m := r.(map[string]any); m["id"] == "qemu/100" {
			vmRow = m
		}
	}
	if vmRow == nil || vmRow["pool"] != "prod" {
		t.Errorf("vm row: %v", vmRow)
	}
	if r := c.do("DELETE", "/pools", vals("poolid", "prod")); r.status != 500 || !strings.Contains(r.msg(), "contains VM 100") {
		t.Errorf("delete with VM: %d %q", r.status, r.msg())
	}

	// Destroy takes the VM out of the pool (remove_vm_access).
	qmTaskOK(t, c, c.ok("DELETE", vm100, nil))
	if got := c.ok("GET", "/pools/prod", nil).data().(map[string]any)["members"].([]any); len(got) != 0 {
		t.Errorf("members after destroy: %v", got)
	}
	c.ok("DELETE", "/pools", vals("poolid", "prod"))
}

// A form key without a value is undef for the handler too (Pool.pm
// update_pool: `comment => ... if defined`): `comment=` keeps the comment.
func TestPoolsEmptyFormValueIsUndefined(t *testing.T) {
	_, info := startSim(t, Options{ClusterName: "lab", TaskDuration: -1, NoSSH: true})
	c := rootTicketClient(t, info)
	c.ok("POST", "/pools", vals("poolid", "lab", "comment", "the lab"))
	c.ok("PUT", "/pools/lab", vals("comment", ""))
	got := c.ok("GET", "/pools/lab", nil).data().(map[string]any)
	if got["comment"] != "the lab" {
		t.Errorf("comment after comment= : %v, want it kept", got["comment"])
	}
}
