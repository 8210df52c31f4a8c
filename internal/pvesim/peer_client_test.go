package pvesim

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	proxmox "github.com/luthermonson/go-proxmox"
)

// A second, independent client of the PVE API drives pvesim as a user
// would. go-proxmox decodes into its own types, written against real PVE:
// where pvesim's JSON shape differs from PVE's (a number PVE sends as a
// string, a missing row, a field of another type) these calls fail to
// decode. It is a test-only dependency; the simulator, and with it this
// library, is never linked into the provider (make deps-check).

func peerClient(t *testing.T, info Info) *proxmox.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(info.CACertPEM)) {
		t.Fatal("bad CA PEM")
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "localhost"},
	}}
	// A ticket from POST /access/ticket, as go-proxmox logs in with a password.
	return proxmox.NewClient(info.Endpoint+"/api2/json", proxmox.WithHTTPClient(hc),
		proxmox.WithCredentials(&proxmox.Credentials{Username: "root@pam", Password: info.RootPassword}))
}

// waitPeerTask waits with go-proxmox's own task API, which fails on any exit
// status other than OK or WARNINGS.
func waitPeerTask(ctx context.Context, t *testing.T, what string, task *proxmox.Task, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := task.Wait(ctx, 10*time.Millisecond, 10*time.Second); err != nil {
		t.Fatalf("%s: task %s: %v", what, task.UPID, err)
	}
}

func TestPeerClientGoProxmox(t *testing.T) {
	for _, rel := range Releases() {
		t.Run(rel, func(t *testing.T) {
			_, info := startSim(t, Options{ClusterName: "lab", PVERelease: rel, NoSSH: true})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c := peerClient(t, info)
			const node = "z2g4a"

			t.Run("version", func(t *testing.T) {
				v, err := c.Version(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if v.Release != rel || v.Version == "" || v.RepoID == "" {
					t.Errorf("version %+v, want release %s", v, rel)
				}
			})
			t.Run("nodes", func(t *testing.T) {
				ns, err := c.Nodes(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(ns) != len(DefaultNodes) {
					t.Fatalf("%d nodes, want %d", len(ns), len(DefaultNodes))
				}
				for _, n := range ns {
					if n.Status != "online" || n.MaxMem == 0 || n.MaxCPU == 0 {
						t.Errorf("node %+v", n)
					}
				}
			})
			t.Run("node status", func(t *testing.T) {
				n, err := c.Node(ctx, node)
				if err != nil {
					t.Fatal(err)
				}
				if n.Memory.Total == 0 || n.CPUInfo.CPUs == 0 || n.PVEVersion == "" || n.Kversion == "" {
					t.Errorf("node status %+v", n)
				}
			})
			t.Run("network", func(t *testing.T) {
				nw, err := c.NodeRef(node).Networks(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(nw) == 0 {
					t.Fatal("no interfaces")
				}
				for _, n := range nw {
					if n.Iface == "" || n.Type == "" {
						t.Errorf("interface row %+v", n)
					}
				}
				one, err := c.NodeRef(node).Network(ctx, nw[0].Iface)
				if err != nil {
					t.Fatal(err)
				}
				if one.Type != nw[0].Type || one.Method == "" {
					t.Errorf("interface %s: %+v, listed as %+v", nw[0].Iface, one, nw[0])
				}
			})
			cl, err := c.Cluster(ctx)
			if err != nil {
				t.Fatalf("cluster status: %v", err)
			}
			if cl.Name != "lab" || len(cl.Nodes) != len(DefaultNodes) {
				t.Errorf("cluster %q with %d nodes", cl.Name, len(cl.Nodes))
			}

			nextid, err := cl.NextID(ctx)
			if err != nil {
				// Reported; the raw value lets the VM steps still run.
				t.Errorf("nextid: %v", err)
				var raw json.Number
				if err := c.Get(ctx, "/cluster/nextid", &raw); err != nil {
					t.Fatalf("nextid: %v", err)
				}
				n, err := raw.Int64()
				if err != nil {
					t.Fatalf("nextid %q: %v", raw, err)
				}
				nextid = int(n)
			}
			t.Run("storages", func(t *testing.T) {
				ss, err := c.NodeRef(node).Storages(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(ss) == 0 {
					t.Fatal("no storages")
				}
				for _, s := range ss {
					if s.Name == "" || s.Type == "" || s.Content == "" {
						t.Errorf("storage row %+v", s)
					}
				}
				cs, err := c.ClusterStorages(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(cs) != len(ss) {
					t.Errorf("/storage lists %d, the node %d", len(cs), len(ss))
				}
				//nolint:staticcheck // the GET of the storage status is what a user calls and what is checked here
				if _, err := c.NodeRef(node).Storage(ctx, "local-lvm"); err != nil {
					t.Errorf("storage status: %v", err)
				}
			})

			opts := []proxmox.VirtualMachineOption{
				{Name: "name", Value: "peer"}, {Name: "memory", Value: 1024}, {Name: "cores", Value: 1},
				{Name: "scsi0", Value: "local-lvm:1"},
			}
			task, err := c.NodeRef(node).NewVirtualMachine(ctx, nextid, opts...)
			waitPeerTask(ctx, t, "create", task, err)

			t.Run("resources", func(t *testing.T) {
				all, err := cl.Resources(ctx)
				if err != nil {
					t.Fatal(err)
				}
				byType := map[string]int{}
				for _, r := range all {
					byType[r.Type]++
				}
				for _, typ := range []string{"node", "storage", "qemu"} {
					if byType[typ] == 0 {
						t.Errorf("no %s among cluster resources %v", typ, byType)
					}
				}
				// PVE's type filter takes vm, storage, node, sdn.
				for filter, want := range map[string]string{"vm": "qemu", "storage": "storage", "node": "node"} {
					rs, err := cl.Resources(ctx, filter)
					if err != nil {
						t.Errorf("type=%s: %v", filter, err)
						continue
					}
					if len(rs) == 0 {
						t.Errorf("type=%s: nothing", filter)
					}
					for _, r := range rs {
						if r.Type != want {
							t.Errorf("type=%s lists %s %s", filter, r.Type, r.ID)
						}
					}
				}
				if _, err := cl.Resources(ctx, "sdn"); err != nil {
					t.Errorf("type=sdn: %v", err)
				}
			})

			vm, err := c.NodeRef(node).VirtualMachine(ctx, nextid)
			if err != nil {
				t.Fatalf("vm status+config: %v", err)
			}
			if vm.VirtualMachineConfig == nil || vm.VirtualMachineConfig.SCSIs["scsi0"] == "" || vm.VirtualMachineConfig.Name != "peer" {
				t.Errorf("vm config %+v", vm.VirtualMachineConfig)
			}
			if !vm.IsStopped() {
				t.Errorf("new VM status %q", vm.Status)
			}
			task, err = vm.Start(ctx)
			waitPeerTask(ctx, t, "start", task, err)
			if err := vm.Ping(ctx); err != nil || !vm.IsRunning() {
				t.Errorf("after start: %q, %v", vm.Status, err)
			}
			task, err = vm.Stop(ctx)
			waitPeerTask(ctx, t, "stop", task, err)
			if err := vm.Ping(ctx); err != nil || !vm.IsStopped() {
				t.Errorf("after stop: %q, %v", vm.Status, err)
			}
			task, err = vm.Delete(ctx, nil)
			waitPeerTask(ctx, t, "delete", task, err)
			if _, err := c.NodeRef(node).VirtualMachine(ctx, nextid); err == nil {
				t.Errorf("VM %d still there after delete", nextid)
			}
		})
	}
}
