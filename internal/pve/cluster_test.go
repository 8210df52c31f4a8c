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

func TestClusterCreateJoinRemove(t *testing.T) {
	sim, err := pvesim.Start(pvesim.Options{TaskDuration: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	ctx := context.Background()
	info := sim.Info()
	a := rootClient(t, simNode(t, info, "z2g4a"))
	b := rootClient(t, simNode(t, info, "z2g4b"))

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
