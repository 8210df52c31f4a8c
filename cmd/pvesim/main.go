// Command pvesim serves the Proxmox VE API simulator. It prints one JSON
// line with endpoints and credentials, then serves until SIGINT/SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/pvelab/terraform-provider-pve/internal/pvesim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "pvesim:", err)
		os.Exit(1)
	}
}

// run is main without process globals, so tests can drive it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pvesim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8006", "host:port of the first node; further nodes use the following ports")
	nodes := fs.String("nodes", strings.Join(pvesim.DefaultNodes, ","), "comma-separated node names")
	state := fs.String("state", "", "JSON state file (loaded at start, saved after every change)")
	reqLog := fs.String("request-log", "", "append a JSON line per request to this file")
	cluster := fs.String("cluster", "", "start the nodes clustered under this name")
	taskDur := fs.Duration("task-duration", time.Second, "how long tasks stay running")
	authDelay := fs.Duration("auth-delay", 3*time.Second, "delay of every 401 answer (PVE: 3s)")
	sshListen := fs.String("ssh-listen", "", "host:port of the first node's sshd; further nodes use the following ports (default: -listen's host, free ports)")
	release := fs.String("pve-release", pvesim.DefaultRelease, "PVE release to simulate: "+strings.Join(pvesim.Releases(), ", "))
	noCeph := fs.Bool("ceph-not-installed", false, "start the nodes without the Ceph daemons, as before pveceph install")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	var names []string
	for _, n := range strings.Split(*nodes, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	td := *taskDur
	if td == 0 {
		td = -1 // Options treats 0 as "default"; the flag means really zero
	}
	sim, err := pvesim.Start(pvesim.Options{
		Nodes: names, ClusterName: *cluster, Listen: *listen, StatePath: *state,
		RequestLogPath: *reqLog, TaskDuration: td, AuthFailureDelay: *authDelay, PVERelease: *release,
		SSHListen: *sshListen, CephNotInstalled: *noCeph,
	})
	if err != nil {
		return err
	}
	b, err := json.Marshal(sim.Info())
	if err != nil {
		_ = sim.Close()
		return err
	}
	if _, err := fmt.Fprintf(stdout, "%s\n", b); err != nil {
		_ = sim.Close()
		return err
	}
	<-ctx.Done()
	return sim.Close()
}
