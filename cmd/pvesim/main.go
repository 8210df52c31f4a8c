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
	timeScale := fs.Float64("time-scale", 0, "time tasks, node programs and the HA manager by PVE's own durations, this many real seconds per PVE second (0: -task-duration)")
	authDelay := fs.Duration("auth-delay", 3*time.Second, "delay of every 401 answer (PVE: 3s)")
	sshListen := fs.String("ssh-listen", "", "host:port of the first node's sshd; further nodes use the following ports (default: -listen's host, free ports)")
	release := fs.String("pve-release", pvesim.DefaultRelease, "PVE release to simulate: "+strings.Join(pvesim.Releases(), ", "))
	noCeph := fs.Bool("ceph-not-installed", false, "start the nodes without the Ceph daemons, as before pveceph install")
	labFile := fs.String("lab", "", "start from this lab file (examples/labs/README.md); it names the nodes, release and cluster")
	labName := fs.String("lab-name", "", "start from a lab shipped in examples/labs: "+strings.Join(pvesim.ShippedLabNames(), ", "))
	start := fs.String("start", "", "the lab's starting state, overriding the file's: "+
		strings.Join([]string{pvesim.StartFreshInstall, pvesim.StartCluster, pvesim.StartHandBuilt}, ", "))
	faults := fs.String("faults", "", faultsUsage)
	faultSeed := fs.Int64("fault-seed", 0, "seed of the faults' rates: the same seed and spec give the same requests the same faults")
	control := fs.String("control", "", controlUsage)
	fs.Usage = func() {
		_, _ = fmt.Fprintln(fs.Output(), "Usage of pvesim:")
		fs.PrintDefaults()
		_, _ = fmt.Fprintf(fs.Output(), "\nFaults (-faults, PUT /faults on -control):\n%s\n", pvesim.FaultSpecHelp)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	lab, err := loadLab(fs, *labFile, *labName, *start)
	if err != nil {
		return err
	}
	_, faultList, err := loadFaultSpec(*faults)
	if err != nil {
		return err
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
		RequestLogPath: *reqLog, TaskDuration: td, TimeScale: *timeScale, AuthFailureDelay: *authDelay, PVERelease: *release,
		SSHListen: *sshListen, CephNotInstalled: *noCeph, Lab: lab,
		Faults: faultList, FaultSeed: *faultSeed,
	})
	if err != nil {
		return err
	}
	line := struct {
		pvesim.Info
		Control string `json:"control,omitempty"`
	}{Info: sim.Info()}
	if *control != "" {
		if line.Control, err = startControl(ctx, *control, sim, stderr); err != nil {
			_ = sim.Close()
			return err
		}
	}
	b, err := json.Marshal(line)
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

// loadLab reads the lab of -lab or -lab-name and applies -start; nil
// without either. A lab decides nodes, release, cluster and Ceph, so those
// flags given with it are refused rather than silently ignored.
func loadLab(fs *flag.FlagSet, file, name, start string) (*pvesim.Lab, error) {
	if file == "" && name == "" {
		if start != "" {
			return nil, fmt.Errorf("-start needs -lab or -lab-name")
		}
		return nil, nil
	}
	if file != "" && name != "" {
		return nil, fmt.Errorf("-lab and -lab-name are exclusive: give a file or a shipped lab's name")
	}
	var conflict error
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "nodes", "cluster", "pve-release", "ceph-not-installed":
			if conflict == nil {
				conflict = fmt.Errorf("-%s conflicts with a lab: the lab file decides the nodes, release, cluster and Ceph (use -start to choose the state)", f.Name)
			}
		}
	})
	if conflict != nil {
		return nil, conflict
	}
	var lab *pvesim.Lab
	var err error
	if file != "" {
		lab, err = pvesim.LoadLab(file)
	} else {
		lab, err = pvesim.ShippedLab(name)
	}
	if err != nil {
		return nil, err
	}
	if start != "" {
		lab.Start = start
		if start != pvesim.StartFreshInstall && lab.ClusterName == "" {
			lab.ClusterName = pvesim.DefaultLabClusterName
		}
		if err := lab.Validate(); err != nil {
			return nil, fmt.Errorf("-start: %w", err)
		}
	}
	return lab, nil
}
