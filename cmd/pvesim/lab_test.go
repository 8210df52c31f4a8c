package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pvelab/terraform-provider-pve/examples/labs"
	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

// startRun runs pvesim with args until it prints its JSON line.
func startRun(t *testing.T, args ...string) pvesim.Info {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuf{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"-listen", "127.0.0.1:0", "-auth-delay", "0s"}, args...), out, io.Discard)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("run did not stop")
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "\n") {
		select {
		case err := <-done:
			t.Fatalf("run ended: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no JSON line printed")
		}
	}
	var info pvesim.Info
	if err := json.Unmarshal([]byte(strings.TrimSpace(out.String())), &info); err != nil {
		t.Fatal(err)
	}
	return info
}

func TestRunLabName(t *testing.T) {
	info := startRun(t, "-lab-name", "diskless", "-start", "cluster")
	if len(info.Nodes) != 4 || info.Nodes[0].Name != "jpl-proxmox6" || info.ManagementAddress != "10.33.80.16" || info.FQDN != "jpl-proxmox6.jpl.lab.example" {
		t.Fatalf("info %+v", info)
	}
	// Clustered: one trust domain.
	if info.Nodes[0].CACertPEM != info.Nodes[3].CACertPEM {
		t.Error("-start cluster did not cluster the nodes")
	}
}

func TestRunLabFile(t *testing.T) {
	b, err := labs.Get("consumer")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "lab.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	info := startRun(t, "-lab", p)
	if len(info.Nodes) != 3 || info.Nodes[2].Name != "cons3" || info.Nodes[2].ManagementAddress != "192.168.10.13" {
		t.Fatalf("info %+v", info)
	}
	// fresh-install: standalone nodes.
	if info.Nodes[0].CACertPEM == info.Nodes[1].CACertPEM {
		t.Error("fresh-install nodes share a CA")
	}
}

// Without a lab flag nothing changes: no management address.
func TestRunWithoutLab(t *testing.T) {
	info := startRun(t, "-nodes", "a1")
	if info.ManagementAddress != "" || len(info.Nodes) != 1 {
		t.Fatalf("info %+v", info)
	}
}

func TestRunLabFlagErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "lab.json")
	if err := os.WriteFile(bad, []byte("{\"nodes\": [\n  {\"name\": \"x\", \"colour\": 1}]}"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-start", "cluster"}, "-start needs -lab or -lab-name"},
		{[]string{"-lab", bad, "-lab-name", "reference"}, "-lab and -lab-name are exclusive"},
		{[]string{"-lab-name", "reference", "-nodes", "a,b"}, "-nodes conflicts with a lab"},
		{[]string{"-lab-name", "reference", "-cluster", "c"}, "-cluster conflicts with a lab"},
		{[]string{"-lab-name", "nope"}, `no shipped lab "nope"; the labs are consumer, diskless, reference`},
		{[]string{"-lab-name", "reference", "-start", "done"}, `-start: reference is not valid:`},
		{[]string{"-lab", bad}, bad + `: line 2:17: unknown field "colour"`},
	} {
		err := run(context.Background(), append([]string{"-listen", "127.0.0.1:0"}, tc.args...), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.args, err, tc.want)
		}
	}
}
