package pvesim

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// GET /cluster/ceph/metadata: the nodes' versions without Ceph (scope
// versions, and before check_ceph_inited), then the monitors' and
// managers' metadata keyed "<id>@<host>" and the raw `osd metadata` of
// every OSD, which osddetails reshapes per OSD (same devices and sizes).
func TestCephClusterMetadata(t *testing.T) {
	s, _ := startSim(t, Options{ClusterName: "lab", TaskDuration: time.Millisecond, CephTimeScale: -1})
	c := rootOn(t, s, "z2g4a")

	// Before init: versions answer, all fails as check_ceph_inited does.
	v := c.ok("GET", "/cluster/ceph/metadata", vals("scope", "versions")).data().(map[string]any)
	nodes, _ := v["node"].(map[string]any)
	if len(nodes) != 3 || len(v) != 1 {
		t.Fatalf("versions: %v", v)
	}
	n := nodes["z2g4b"].(map[string]any)
	if ver := n["version"].(map[string]any); ver["str"] != "19.2.3" || fmt.Sprint(ver["parts"]) != "[19 2 3]" || n["buildcommit"] == "" {
		t.Errorf("z2g4b's version: %v", n)
	}
	if r := c.do("GET", "/cluster/ceph/metadata", nil); r.status != 500 || !strings.Contains(r.msg(), "pveceph configuration not initialized") {
		t.Errorf("before init: %d %s", r.status, r.msg())
	}
	if r := c.do("GET", "/cluster/ceph/metadata", vals("scope", "osd")); r.status != 400 || r.errs()["scope"] == nil {
		t.Errorf("bad scope: %d %v", r.status, r.errs())
	}

	c = cephWithMons(t, s)
	c.waitTask("z2g4a", c.ok("POST", "/nodes/z2g4a/ceph/mgr/z2g4a", nil).data().(string))
	for _, p := range []struct{ node, dev string }{{"z2g4a", "/dev/sdb"}, {"z2g4b", "/dev/sdb"}} {
		params := vals("dev", p.dev)
		if p.node == "z2g4a" {
			params = vals("dev", p.dev, "db_dev", "/dev/nvme0n1", "db_dev_size", "30")
		}
		if st := c.waitTask(p.node, c.ok("POST", "/nodes/"+p.node+"/ceph/osd", params).data().(string)); st["exitstatus"] != "OK" {
			t.Fatalf("create OSD on %s: %v", p.node, st)
		}
	}
	md := c.ok("GET", "/cluster/ceph/metadata", nil).data().(map[string]any)
	for _, k := range []string{"node", "mon", "mgr", "mds", "osd"} {
		if md[k] == nil {
			t.Errorf("no %s in %v", k, md)
		}
	}
	mon := md["mon"].(map[string]any)["z2g4b@z2g4b"].(map[string]any)
	if mon["name"] != "z2g4b" || mon["hostname"] != "z2g4b" || mon["service"] != true || mon["direxists"] != true ||
		!strings.HasPrefix(mon["addrs"].(string), "[v2:") || mon["ceph_release"] != "squid" {
		t.Errorf("monitor z2g4b: %v", mon)
	}
	if mgr := md["mgr"].(map[string]any)["z2g4a@z2g4a"].(map[string]any); mgr["name"] != "z2g4a" || mgr["service"] != true {
		t.Errorf("manager z2g4a: %v", mgr)
	}
	osds := md["osd"].([]any)
	if len(osds) != 2 {
		t.Fatalf("osd: %v", osds)
	}
	for _, o := range osds {
		raw := o.(map[string]any)
		id := int(raw["id"].(float64))
		host := raw["hostname"].(string)
		// Every value but the id is a string, as Ceph reports it.
		for k, v := range raw {
			if _, ok := v.(string); !ok && k != "id" {
				t.Errorf("osd.%d %s = %v (%T), want a string", id, k, v, v)
			}
		}
		details := c.ok("GET", fmt.Sprintf("/nodes/%s/ceph/osd/%d/metadata", host, id), nil).data().(map[string]any)
		for _, d := range details["devices"].([]any) {
			dev := d.(map[string]any)
			prefix := map[string]string{"block": "bluestore_bdev_", "db": "bluefs_db_", "wal": "bluefs_wal_"}[dev["device"].(string)]
			if raw[prefix+"devices"] != dev["physical_device"] || raw[prefix+"size"] != fmt.Sprint(int64(dev["size"].(float64))) ||
				raw[prefix+"dev_node"] != dev["dev_node"] || raw[prefix+"type"] != dev["type"] {
				t.Errorf("osd.%d %s: raw %v, details %v", id, dev["device"], raw, dev)
			}
		}
		wantDB := map[string]string{"z2g4a": "1", "z2g4b": "0"}[host]
		if raw["bluefs_dedicated_db"] != wantDB || raw["bluefs_dedicated_wal"] != "0" {
			t.Errorf("osd.%d on %s: dedicated db %v wal %v", id, host, raw["bluefs_dedicated_db"], raw["bluefs_dedicated_wal"])
		}
		if _, ok := raw["bluefs_db_size"]; ok != (wantDB == "1") {
			t.Errorf("osd.%d on %s: bluefs_db_size present %v, want only with a dedicated DB", id, host, ok)
		}
		if host == "z2g4a" && (raw["devices"] != "nvme0n1,sdb" || raw["bluefs_db_size"] != fmt.Sprint(30<<30)) {
			t.Errorf("osd.%d: devices %v, db size %v", id, raw["devices"], raw["bluefs_db_size"])
		}
	}
}
