package pvesim

import (
	"strings"
	"sync"
	"testing"
)

// cephCoreSim is a clustered lab with Ceph initialised on the management
// network (every node's /etc/hosts address is in it).
func cephCoreSim(t *testing.T, opts Options) (*Sim, *client) {
	t.Helper()
	if opts.ClusterName == "" {
		opts.ClusterName = "lab"
	}
	s, info := startSim(t, opts)
	c := newClient(t, info, "")
	c.ok("POST", "/nodes/z2g4a/ceph/init", vals("network", "172.27.2.0/24"))
	return s, c
}

func (c *client) createMon(node string) map[string]any {
	c.t.Helper()
	r := c.ok("POST", "/nodes/"+node+"/ceph/mon/"+node, nil)
	return c.waitTask(node, r.data().(string))
}

// PVE's init keeps an existing [global]: fsid, auth and the pool defaults
// stay, only the networks change; a network without cluster-network
// resets the cluster network to it. ceph.conf is written as PVE writes it.
func TestCephInitKeepsExistingConfig(t *testing.T) {
	s, info := startSim(t, Options{ClusterName: "lab"})
	c := newClient(t, info, "")
	r := c.do("GET", "/nodes/z2g4a/ceph/cfg/raw", nil)
	if r.status != 500 || !strings.Contains(r.msg(), "pveceph configuration not initialized") {
		t.Fatalf("cfg/raw before init: %d %q", r.status, r.msg())
	}
	c.ok("POST", "/nodes/z2g4a/ceph/init", vals("network", "169.254.50.0/24", "cluster-network", "10.0.0.0/24", "size", "2", "min_size", "1"))
	raw := c.ok("GET", "/nodes/z2g4b/ceph/cfg/raw", nil).data().(string)
	for _, want := range []string{"[global]\n\tauth_client_required = cephx\n", "\tcluster_network = 10.0.0.0/24\n", "\tosd_pool_default_min_size = 1\n",
		"\tosd_pool_default_size = 2\n", "\tpublic_network = 169.254.50.0/24\n", "[client]\n\tkeyring = /etc/pve/priv/$cluster.$name.keyring\n"} {
		if !strings.Contains(raw, want) {
			t.Errorf("ceph.conf lacks %q:\n%s", want, raw)
		}
	}
	before := raw
	c.ok("POST", "/nodes/z2g4c/ceph/init", vals("network", "172.27.2.0/24", "size", "3", "min_size", "2", "disable_cephx", "1"))
	raw = c.ok("GET", "/nodes/z2g4a/ceph/cfg/raw", nil).data().(string)
	for _, want := range []string{"\tcluster_network = 172.27.2.0/24\n", "\tpublic_network = 172.27.2.0/24\n", "\tosd_pool_default_size = 2\n",
		"\tosd_pool_default_min_size = 1\n", "\tauth_cluster_required = cephx\n", fsidLine(before)} {
		if !strings.Contains(raw, want) {
			t.Errorf("after re-init ceph.conf lacks %q:\n%s", want, raw)
		}
	}
	s.SetCephConf("osd", "osd_memory_target", "8589934592")
	s.SetCephConf("mon.x", "public_addr", "172.27.2.10")
	raw = c.ok("GET", "/nodes/z2g4a/ceph/cfg/raw", nil).data().(string)
	if i, j, k := strings.Index(raw, "[client]"), strings.Index(raw, "[mon.x]"), strings.Index(raw, "[osd]"); i >= j || j >= k {
		t.Errorf("sections out of PVE's order:\n%s", raw)
	}
}

func fsidLine(conf string) string {
	for _, l := range strings.Split(conf, "\n") {
		if strings.HasPrefix(l, "\tfsid = ") {
			return l + "\n"
		}
	}
	return "\tfsid = <missing>"
}

// Monitor creations that overlap all decide "first monitor" before PVE's
// ceph.conf lock, so all but one bootstrap a monmap of their own.
func TestCephParallelMonCreateSplits(t *testing.T) {
	s, c := cephCoreSim(t, Options{})
	var wg sync.WaitGroup
	upids := map[string]string{}
	var mu sync.Mutex
	for _, n := range []string{"z2g4a", "z2g4b", "z2g4c"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := c.ok("POST", "/nodes/"+n+"/ceph/mon/"+n, nil)
			mu.Lock()
			upids[n] = r.data().(string)
			mu.Unlock()
		}()
	}
	wg.Wait()
	for n, u := range upids {
		if st := c.waitTask(n, u); st["exitstatus"] != "OK" {
			t.Fatalf("%s: %v", n, st["exitstatus"])
		}
	}
	split := s.CephSplitMonitors()
	if len(split) != 2 {
		t.Fatalf("split monitors %v, want 2", split)
	}
	st := c.ok("GET", "/cluster/ceph/status", nil).data().(map[string]any)
	if n := len(st["monmap"].(map[string]any)["mons"].([]any)); n != 1 {
		t.Errorf("monmap has %v monitors, want 1", n)
	}
	list := c.ok("GET", "/nodes/z2g4a/ceph/mon", nil).data().([]any)
	inQuorum := 0
	for _, e := range list {
		if e.(map[string]any)["quorum"] == float64(1) {
			inQuorum++
		}
	}
	if len(list) != 3 || inQuorum != 1 {
		t.Errorf("mon list %v", list)
	}
}

func TestCephSequentialMonCreate(t *testing.T) {
	s, c := cephCoreSim(t, Options{})
	for _, n := range []string{"z2g4a", "z2g4b", "z2g4c"} {
		if st := c.createMon(n); st["exitstatus"] != "OK" {
			t.Fatalf("%s: %v", n, st["exitstatus"])
		}
	}
	if split := s.CephSplitMonitors(); len(split) != 0 {
		t.Fatalf("split monitors %v", split)
	}
	mgrs := c.ok("GET", "/nodes/z2g4a/ceph/mgr", nil).data().([]any)
	if len(mgrs) != 1 || mgrs[0].(map[string]any)["name"] != "z2g4a" {
		t.Errorf("the first monitor creates one manager, got %v", mgrs)
	}
	raw := c.ok("GET", "/nodes/z2g4a/ceph/cfg/raw", nil).data().(string)
	if !strings.Contains(raw, "\tmon_host = 172.27.2.10 172.27.2.11 172.27.2.12\n") {
		t.Errorf("mon_host:\n%s", raw)
	}
}

// Ceph's `mon remove` does not look at quorum: PVE removes a monitor in
// quorum while another is down, and the rest lose their majority. Only
// cmd-safety (mon ok-to-rm) tells beforehand; the last monitor is refused
// before a task starts.
func TestCephMonDestroyQuorum(t *testing.T) {
	s, c := cephCoreSim(t, Options{})
	for _, n := range []string{"z2g4a", "z2g4b", "z2g4c"} {
		c.createMon(n)
	}
	safety := func(id string) map[string]any {
		return c.ok("GET", "/nodes/z2g4a/ceph/cmd-safety", vals("service", "mon", "action", "destroy", "id", id)).data().(map[string]any)
	}
	if r := safety("z2g4b"); r["safe"] != float64(1) || r["status"] != "safe to remove mon.z2g4b" {
		t.Errorf("healthy: %v", r)
	}
	if r := safety("nope"); r["safe"] != float64(1) || r["status"] != "mon.nope does not exist" {
		t.Errorf("unknown mon: %v", r)
	}
	s.SetCephMonitorUp("z2g4c", false)
	if r := safety("z2g4a"); r["safe"] != float64(0) || r["status"] != "removing mon.z2g4a would break quorum" {
		t.Errorf("with z2g4c down: %v", r)
	}
	if r := safety("z2g4c"); r["safe"] != float64(1) {
		t.Errorf("removing the down monitor: %v", r)
	}
	r := c.ok("DELETE", "/nodes/z2g4a/ceph/mon/z2g4a", nil)
	if st := c.waitTask("z2g4a", r.data().(string)); st["exitstatus"] != "OK" {
		t.Fatalf("destroy: %v", st["exitstatus"])
	}
	if r := c.do("GET", "/cluster/ceph/status", nil); r.status != 500 || r.msg() != "got timeout\n" && r.msg() != "got timeout" {
		t.Fatalf("after breaking quorum: %d %q", r.status, r.msg())
	}
	list := c.ok("GET", "/nodes/z2g4b/ceph/mon", nil).data().([]any)
	for _, e := range list {
		if e.(map[string]any)["state"] != "unknown" {
			t.Errorf("without quorum PVE cannot know a monitor's state: %v", e)
		}
	}
	s.SetCephMonitorUp("z2g4c", true)
	c.ok("GET", "/cluster/ceph/status", nil)
	r = c.ok("DELETE", "/nodes/z2g4b/ceph/mon/z2g4b", nil)
	c.waitTask("z2g4b", r.data().(string))
	r = c.do("DELETE", "/nodes/z2g4c/ceph/mon/z2g4c", nil)
	if r.status != 500 || !strings.Contains(r.msg(), "can't remove last monitor") {
		t.Fatalf("last monitor: %d %q", r.status, r.msg())
	}
}
