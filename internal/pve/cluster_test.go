package pve

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

func simNode(t *testing.T, info pvesim.Info, name string) pvesim.NodeInfo {
	t.Helper()
	for _, n := range info.Nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no node %s", name)
	return pvesim.NodeInfo{}
}

func rootClient(t *testing.T, n pvesim.NodeInfo) *Client {
	t.Helper()
	c, err := NewClient(Config{Endpoint: n.Endpoint, Username: "root@pam", Password: n.RootPassword, TLSFingerprint: n.TLSFingerprint,
		Retry: fastRetry, TaskPollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// twoNodes starts a simulator whose tasks take taskDuration and returns
// root clients of its standalone nodes z2g4a and z2g4b.
func twoNodes(t *testing.T, taskDuration time.Duration) (*pvesim.Sim, *Client, *Client) {
	t.Helper()
	sim, err := pvesim.Start(pvesim.Options{TaskDuration: taskDuration})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	info := sim.Info()
	return sim, rootClient(t, simNode(t, info, "z2g4a")), rootClient(t, simNode(t, info, "z2g4b"))
}

func TestClusterCreateJoinRemove(t *testing.T) {
	sim, a, b := twoNodes(t, 5*time.Millisecond)
	ctx := context.Background()
	info := sim.Info()

	st, err := a.ClusterStatus(ctx)
	if err != nil || st.Clustered || !st.Quorate || len(st.Nodes) != 1 || st.LocalNode().Name != "z2g4a" {
		t.Fatalf("standalone status %+v %v", st, err)
	}
	if _, err := a.ClusterJoinInfo(ctx, ""); !errors.Is(err, ErrNotClustered) {
		t.Fatalf("join info standalone: %v", err)
	}

	tok, err := NewClient(Config{Endpoint: info.Endpoint, APIToken: info.APIToken, TLSFingerprint: info.TLSFingerprint, Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	var ae *APIError
	if _, err := tok.CreateCluster(ctx, CreateClusterRequest{Name: "lab"}); !errors.As(err, &ae) || ae.StatusCode != 403 {
		t.Fatalf("token create: %v", err)
	}

	prio := int64(5)
	upid, err := a.CreateCluster(ctx, CreateClusterRequest{Name: "lab", Links: map[int]ClusterLink{0: {Address: "172.27.2.10", Priority: &prio}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitTask(ctx, upid); err != nil {
		t.Fatal(err)
	}
	st, err = a.ClusterStatus(ctx)
	if err != nil || !st.Clustered || st.Name != "lab" || !st.Quorate || len(st.Nodes) != 1 || st.Nodes[0].NodeID != 1 {
		t.Fatalf("status %+v %v", st, err)
	}
	ji, err := a.ClusterJoinInfo(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	fp, err := a.ServerFingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fp != simNode(t, info, "z2g4a").TLSFingerprint || len(ji.Nodes) != 1 || ji.Nodes[0].PVEFingerprint != fp ||
		ji.Nodes[0].Links[0] != "172.27.2.10" || ji.PreferredNode != "z2g4a" || ji.ConfigDigest == "" {
		t.Fatalf("join info %+v fp %s", ji, fp)
	}

	// A wrong password fails in the task, on the joining node.
	upid, err = b.JoinCluster(ctx, JoinClusterRequest{Hostname: ji.Nodes[0].PVEAddr, Fingerprint: fp, Password: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	var te *TaskError
	if _, err := b.WaitTask(ctx, upid); !errors.As(err, &te) || te.ExitStatus != "401 authentication failure" {
		t.Fatalf("wrong password: %v", err)
	}

	upid, err = b.JoinCluster(ctx, JoinClusterRequest{Hostname: ji.Nodes[0].PVEAddr, Fingerprint: strings.ToLower(fp), Password: simNode(t, info, "z2g4a").RootPassword})
	if err != nil {
		t.Fatal(err)
	}
	// Followed through the member: the joining node changes credentials
	// and certificate at the end.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := a.WaitTask(ctx, upid)
		if err == nil {
			break
		}
		if !errors.As(err, &ae) || ae.StatusCode != 595 || time.Now().After(deadline) {
			t.Fatalf("join: %v", err)
		}
	}
	nodes, err := a.ClusterConfigNodes(ctx)
	if err != nil || len(nodes) != 2 || nodes[1].Name != "z2g4b" || nodes[1].NodeID != 2 || nodes[1].QuorumVotes != 1 || nodes[1].Links[0] != "172.27.2.11" {
		t.Fatalf("nodes %+v %v", nodes, err)
	}
	if err := a.RemoveClusterNode(ctx, "z2g4a"); !errors.As(err, &ae) || ae.Message != "Cannot delete myself from cluster!" {
		t.Fatalf("remove self: %v", err)
	}
	if err := a.RemoveClusterNode(ctx, "z2g4b"); err != nil {
		t.Fatal(err)
	}
	if nodes, err := a.ClusterConfigNodes(ctx); err != nil || len(nodes) != 1 {
		t.Fatalf("after remove %+v %v", nodes, err)
	}
}

func TestServerFingerprintHonoursPin(t *testing.T) {
	sim, err := pvesim.Start(pvesim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	info := sim.Info()
	c, err := NewClient(Config{Endpoint: info.Endpoint, APIToken: info.APIToken, TLSFingerprint: info.Nodes[1].TLSFingerprint})
	if err != nil {
		t.Fatal(err)
	}
	var te *TLSError
	if _, err := c.ServerFingerprint(context.Background()); !errors.As(err, &te) || te.Fingerprint != info.TLSFingerprint {
		t.Fatalf("wrong pin: %v", err)
	}
	c, err = NewClient(Config{Endpoint: info.Endpoint, APIToken: info.APIToken, CACertPEM: info.CACertPEM})
	if err != nil {
		t.Fatal(err)
	}
	// The simulator's certificate names localhost and 127.0.0.1.
	if fp, err := c.ServerFingerprint(context.Background()); err != nil || fp != info.TLSFingerprint {
		t.Fatalf("CA: %s %v", fp, err)
	}
}

func TestClusterLinkString(t *testing.T) {
	p := int64(10)
	if s := (ClusterLink{Address: "169.254.60.10", Priority: &p}).String(); s != "address=169.254.60.10,priority=10" {
		t.Fatal(s)
	}
	if s := (ClusterLink{Address: "169.254.60.10"}).String(); s != "address=169.254.60.10" {
		t.Fatal(s)
	}
}

// A join followed by StartJoin and FollowJoin never presents the joining
// node's credentials after the join made them stale: no request is
// answered 401 (PVE delays each by 3 s), none reaches the node's own
// listener while the member lists it, and the node's client logs in anew
// afterwards. A join that fails (before the switch, or a worker killed
// after the member's addnode) is reported from the node's own task.
func TestFollowJoin(t *testing.T) {
	patience := joinSwitchPatience
	joinSwitchPatience = 300 * time.Millisecond
	t.Cleanup(func() { joinSwitchPatience = patience })
	for _, tc := range []struct {
		name, fault, exit string
	}{
		{"ok", "", "OK"},
		{"fails before the switch", "task clusterjoin=fail:1x", "injected"},
		{"killed after addnode", "task clusterjoin=kill:1x", "unexpected status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim, a, b := twoNodes(t, 50*time.Millisecond)
			ctx := context.Background()
			info := sim.Info()
			upid, err := a.CreateCluster(ctx, CreateClusterRequest{Name: "lab"})
			if _, err = a.Await(ctx, upid, err); err != nil {
				t.Fatal(err)
			}
			ji, err := a.ClusterJoinInfo(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if tc.fault != "" {
				if err := sim.SetFaultSpec(tc.fault); err != nil {
					t.Fatal(err)
				}
			}
			sim.ResetRequests()
			upid, err = a.StartJoin(ctx, b, "z2g4b", JoinClusterRequest{Hostname: ji.Nodes[0].PVEAddr, Fingerprint: ji.Nodes[0].PVEFingerprint,
				Password: simNode(t, info, "z2g4a").RootPassword})
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.FollowJoin(ctx, b, "z2g4b", upid)
			var te *TaskError
			switch {
			case tc.exit == "OK" && (err != nil || res.ExitStatus != "OK"):
				t.Fatalf("join: %v", err)
			case tc.exit != "OK" && (!errors.As(err, &te) || !strings.Contains(te.ExitStatus, tc.exit) || len(te.Log) == 0):
				t.Fatalf("join: %v, want a failed task %q with its log", err, tc.exit)
			}
			for _, r := range sim.Requests() {
				if r.Status == 401 {
					t.Errorf("%s %s on %s answered 401", r.Method, r.Path, r.Node)
				}
				// The member lists the node from its addnode on (pvesim
				// runs it before the POST answers), so a join that goes
				// well is followed through the member alone.
				if tc.exit == "OK" && r.Node == "z2g4b" && r.Path != "/cluster/config/join" && r.Path != "/access/ticket" {
					t.Errorf("%s %s went to the joining node's own listener", r.Method, r.Path)
				}
			}
			if tc.exit != "OK" {
				return
			}
			b.authMu.Lock()
			stale := b.ticket
			b.authMu.Unlock()
			if stale != "" {
				t.Error("the joined node's client kept its stale ticket")
			}
			if st, err := a.ClusterStatus(ctx); err != nil || st.Node("z2g4b") == nil || !st.Node("z2g4b").Online {
				t.Fatalf("after FollowJoin the cluster lists %+v (%v)", st, err)
			}
		})
	}
}
