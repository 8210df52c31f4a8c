package pvesim

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchLab drives the simulator's HTTP handler in-process (auth, routing,
// validation, handler and JSON encoding all count; no TLS or sockets).
type benchLab struct {
	b      testing.TB
	s      *Sim
	ticket string // root@pam, as the provider logs in
	csrf   string
}

func (l *benchLab) do(node, method, path string, form url.Values) (int, []byte) {
	var body *strings.Reader
	u := "/api2/json" + path
	if form != nil && (method == "POST" || method == "PUT") {
		body = strings.NewReader(form.Encode())
	} else {
		if form != nil {
			u += "?" + form.Encode()
		}
		body = strings.NewReader("")
	}
	req := httptest.NewRequest(method, u, body)
	if l.ticket != "" {
		req.AddCookie(&http.Cookie{Name: "PVEAuthCookie", Value: l.ticket})
		req.Header.Set("CSRFPreventionToken", l.csrf)
	}
	if method == "POST" || method == "PUT" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	w := httptest.NewRecorder()
	l.s.serve(node, w, req)
	return w.Code, w.Body.Bytes()
}

// ok sends the request and, when it answers a UPID, waits for the task.
func (l *benchLab) ok(node, method, path string, form url.Values) {
	code, body := l.do(node, method, path, form)
	if code != 200 {
		l.b.Fatalf("%s %s: %d %s", method, path, code, body)
	}
	var env struct{ Data any }
	_ = json.Unmarshal(body, &env)
	upid, _ := env.Data.(string)
	if !strings.HasPrefix(upid, "UPID:") {
		return
	}
	tn := strings.SplitN(upid, ":", 3)[1]
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, sb := l.do(tn, "GET", "/nodes/"+tn+"/tasks/"+url.PathEscape(upid)+"/status", nil)
		var st struct {
			Data map[string]any
		}
		_ = json.Unmarshal(sb, &st)
		if st.Data["status"] == "stopped" {
			if st.Data["exitstatus"] != "OK" && !strings.HasPrefix(fmt.Sprint(st.Data["exitstatus"]), "WARNINGS") {
				l.b.Fatalf("%s %s: task %v", method, path, st.Data["exitstatus"])
			}
			return
		}
		if time.Now().After(deadline) {
			l.b.Fatalf("%s %s: task still running", method, path)
		}
		time.Sleep(time.Millisecond)
	}
}

type benchReq struct{ node, path, query string }

// planLab builds the state of examples/homelab applied (3-node cluster,
// its network, Ceph with a monitor and manager per node, two OSDs per
// node, the rbd pool and its storage, VM 100 under HA) plus extra VMs with
// two SCSI disks each, and returns the GETs a no-change plan of all that
// sends (as internal/service/... read them).
func planLab(b testing.TB, extraVMs int) (*benchLab, []benchReq) {
	s, err := Start(Options{ClusterName: "lab", TaskDuration: -1, NoSSH: true, CephTimeScale: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	l := &benchLab{b: b, s: s}
	code, body := l.do("z2g4a", "POST", "/access/ticket", vals("username", "root@pam", "password", s.Info().RootPassword))
	var login struct {
		Data struct {
			Ticket string
			CSRF   string `json:"CSRFPreventionToken"`
		}
	}
	if err := json.Unmarshal(body, &login); code != 200 || err != nil {
		b.Fatalf("login: %d %s", code, body)
	}
	l.ticket, l.csrf = login.Data.Ticket, login.Data.CSRF
	nodes := []string{"z2g4a", "z2g4b", "z2g4c"}
	for i, n := range nodes {
		p := "/nodes/" + n + "/network"
		l.ok(n, "POST", p, vals("iface", "bond0", "type", "bond", "slaves", "bcm5720p0 bcm5720p1", "bond_mode", "802.3ad"))
		l.ok(n, "POST", p, vals("iface", "bridge0", "type", "bridge", "bridge_ports", "bond0", "bridge_vlan_aware", "1",
			"bridge_vids", "2-4094", "cidr", fmt.Sprintf("172.27.2.%d/24", 11+i), "gateway", "172.27.2.254"))
		l.ok(n, "POST", p, vals("iface", "bridge0.60", "type", "vlan", "cidr", fmt.Sprintf("169.254.60.%d/24", 11+i),
			"comments", "corosync link0"))
		l.ok(n, "PUT", p+"/cx354ap1", vals("type", "eth", "cidr", fmt.Sprintf("169.254.50.%d/24", 11+i),
			"mtu", "9000", "comments", "storage network"))
		l.ok(n, "PUT", p, nil)
	}
	l.ok("z2g4a", "POST", "/nodes/z2g4a/ceph/init", vals("network", "169.254.50.0/24"))
	for _, n := range nodes {
		l.ok(n, "POST", "/nodes/"+n+"/ceph/mon/"+n, nil)
	}
	for _, n := range nodes[1:] { // the first monitor brought its manager
		l.ok(n, "POST", "/nodes/"+n+"/ceph/mgr/"+n, nil)
	}
	for _, n := range nodes {
		for _, dev := range []string{"/dev/sdb", "/dev/sdc"} {
			l.ok(n, "POST", "/nodes/"+n+"/ceph/osd", vals("dev", dev))
		}
	}
	l.ok("z2g4a", "POST", "/nodes/z2g4a/ceph/pool", vals("name", "ceph", "size", "3", "min_size", "2",
		"application", "rbd", "pg_num", "128", "pg_autoscale_mode", "warn"))
	l.ok("z2g4a", "POST", "/storage", vals("storage", "ceph", "type", "rbd", "pool", "ceph", "content", "images", "krbd", "0"))

	type vmAt struct {
		node string
		id   int
	}
	var vms []vmAt
	for i := 0; i <= extraVMs; i++ {
		id, n := 100+i, nodes[i%len(nodes)]
		p := vals("vmid", fmt.Sprint(id), "name", fmt.Sprintf("vm%d", id), "agent", "1", "bios", "ovmf",
			"cores", "4", "cpu", "host", "memory", "8192", "numa", "0", "ostype", "l26", "sockets", "1",
			"scsihw", "virtio-scsi-single", "net0", "virtio,bridge=bridge0", "onboot", "1",
			"scsi0", "ceph:32,cache=writeback,discard=on,iothread=1,ssd=1", "boot", "order=scsi0")
		if i > 0 {
			p.Set("scsi1", "ceph:8,iothread=1")
		}
		l.ok(n, "POST", "/nodes/"+n+"/qemu", p)
		l.ok(n, "POST", fmt.Sprintf("/nodes/%s/qemu/%d/status/start", n, id), nil)
		vms = append(vms, vmAt{n, id})
	}
	l.ok("z2g4a", "POST", "/cluster/ha/resources", vals("sid", "vm:100", "state", "started", "max_restart", "1", "max_relocate", "1"))

	// The plan: the cluster and node resources once, then per VM what
	// pve_vm's Read sends (locate: config?current=1; readVM: config,
	// status/current, pending) and per disk what pve_vm_disk's Read sends
	// (FindVM: /cluster/resources?type=vm; readSlot: pending).
	// The homelab's part is the second plan of `make lab` as pvesim's
	// request log has it; everything goes to the first node's endpoint.
	reqs := []benchReq{}
	for _, line := range []string{
		"/nodes/z2g4a/network", "/nodes", "/nodes/z2g4b/network", "/nodes/z2g4c/apt/repositories",
		"/nodes/z2g4b/apt/repositories", "/nodes/z2g4c/network", "/nodes/z2g4a/apt/repositories",
		"/cluster/status", "/cluster/config/nodes", "/cluster/config/totem", "/cluster/config/join",
		"/cluster/status", "/cluster/status", "/cluster/config/nodes", "/nodes", "/cluster/config/nodes", "/nodes",
		"/nodes/z2g4a/ceph/cfg/raw", "/cluster/options", "/nodes/z2g4a/disks/list", "/nodes/z2g4c/disks/list",
		"/nodes/z2g4a/ceph/mon", "/nodes/z2g4b/disks/list", "/nodes/z2g4c/ceph/mgr", "/nodes/z2g4c/ceph/osd",
		"/nodes/z2g4a/disks/list", "/nodes/z2g4b/disks/list", "/nodes/z2g4c/disks/list",
		"/nodes/z2g4a/ceph/osd/0/metadata", "/nodes/z2g4a/ceph/osd/1/metadata", "/nodes/z2g4b/ceph/osd/2/metadata",
		"/nodes/z2g4b/ceph/osd/3/metadata", "/nodes/z2g4c/ceph/osd/4/metadata", "/nodes/z2g4c/ceph/osd/5/metadata",
		"/nodes/z2g4a/ceph/pool/ceph/status?verbose=1", "/cluster/ceph/status", "/storage/ceph",
		"/cluster/ceph/flags", "/cluster/ha/resources/vm:100",
	} {
		p, q, _ := strings.Cut(line, "?")
		reqs = append(reqs, benchReq{"z2g4a", p, q})
	}
	for i, vm := range vms {
		base := fmt.Sprintf("/nodes/%s/qemu/%d", vm.node, vm.id)
		reqs = append(reqs,
			benchReq{"z2g4a", base + "/config", "current=1"},
			benchReq{"z2g4a", base + "/config", ""},
			benchReq{"z2g4a", base + "/status/current", ""},
			benchReq{"z2g4a", base + "/pending", ""})
		disks := 2
		if i == 0 {
			disks = 1
		}
		for d := 0; d < disks; d++ {
			reqs = append(reqs,
				benchReq{"z2g4a", "/cluster/resources", "type=vm"},
				benchReq{"z2g4a", base + "/pending", ""})
		}
	}
	// Every request of the plan must answer 200, or the benchmark
	// measures error paths.
	for _, r := range reqs {
		q, _ := url.ParseQuery(r.query)
		if code, body := l.do(r.node, "GET", r.path, q); code != 200 {
			b.Fatalf("GET %s?%s: %d %s", r.path, r.query, code, body)
		}
	}
	return l, reqs
}

// BenchmarkNoChangePlan replays the GETs of a no-change plan of the
// homelab plus 200 VMs with two disks each (about 650 resources) through
// the HTTP handler. cpu-ns/req and median-cpu-ns/req are the mean and the
// median of the requests' CPU time on the benchmark's thread (the handler
// runs there; the GC's background work is not in it); ns/req is the
// mean wall time, which other load on the machine inflates.
func BenchmarkNoChangePlan(b *testing.B) {
	l, reqs := planLab(b, 200)
	qs := make([]url.Values, len(reqs))
	pats := make([]string, len(reqs))
	for i, r := range reqs {
		qs[i], _ = url.ParseQuery(r.query)
		if rt, _ := l.s.findRoute(r.path); rt != nil {
			pats[i] = rt.pattern
		}
	}
	perRoute := map[string][2]int64{} // pattern -> count, CPU ns
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := make([]int64, 0, len(reqs)*b.N)
	var cpuSum int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, r := range reqs {
			c0 := threadCPU()
			l.do(r.node, "GET", r.path, qs[j])
			d := threadCPU() - c0
			cpu = append(cpu, d)
			cpuSum += d
			pr := perRoute[pats[j]]
			perRoute[pats[j]] = [2]int64{pr[0] + 1, pr[1] + d}
		}
	}
	b.StopTimer()
	slices.Sort(cpu)
	n := float64(b.N * len(reqs))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/req")
	b.ReportMetric(float64(cpuSum)/n, "cpu-ns/req")
	b.ReportMetric(float64(cpu[len(cpu)/2]), "median-cpu-ns/req")
	b.ReportMetric(float64(len(reqs)), "reqs/op")
	// The routes that cost most, for whoever profiles next.
	byCost := slices.Collect(maps.Keys(perRoute))
	slices.SortFunc(byCost, func(x, y string) int { return cmp.Compare(perRoute[y][1], perRoute[x][1]) })
	for _, p := range byCost[:min(5, len(byCost))] {
		pr := perRoute[p]
		b.Logf("%-50s %5d requests, %8.0f us CPU each", p, pr[0], float64(pr[1])/float64(pr[0])/1e3)
	}
}
