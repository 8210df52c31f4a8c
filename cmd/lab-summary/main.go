// Command lab-summary prints what scripts/lab.sh (make lab) did, for a person, in at most
// ~60 lines: the phases with their durations and API requests, resources by type, each
// node's network reloads and management cutover, the CLI's diagnostics (errors in full),
// Ceph health, the VMs, where the state and the logs are, and what to run next. It reads
// the files lab.sh leaves in its temp dir (read.go): the -json streams of plan, apply and
// the second plan, output -json, show -json, pvesim's JSON line and request log. Anything
// missing prints as n/a: a run that stops early, or a configuration without the output.
//
//	lab-summary -dir /tmp/pve-lab.x -repo . -result OK ...
//	lab-summary -render < plan.jsonl   # a -json stream as text, for the log
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	var o options
	fs := flag.NewFlagSet("lab-summary", flag.ExitOnError)
	render := fs.Bool("render", false, "print the -json stream on stdin as text and exit")
	fs.StringVar(&o.Dir, "dir", "", "lab.sh's temp dir")
	fs.StringVar(&o.Repo, "repo", "", "the repository (paths print relative to it)")
	fs.StringVar(&o.Result, "result", "FAILED", "OK when every phase passed")
	fs.StringVar(&o.CLI, "cli", "terraform", "the CLI's path")
	fs.StringVar(&o.CLIVersion, "cli-version", "", "the CLI's version line")
	fs.StringVar(&o.Release, "release", "", "the simulated PVE release")
	fs.StringVar(&o.LabFile, "lab", "", "the lab file")
	fs.StringVar(&o.LabName, "lab-name", "", "LAB as given")
	fs.StringVar(&o.LabDir, "lab-dir", "", "the configuration's directory")
	fs.StringVar(&o.LabDirArg, "lab-dir-arg", "", "LAB_DIR as given")
	fs.StringVar(&o.Work, "work", "", "the work dir (the copy that holds the state)")
	fs.StringVar(&o.Start, "start", "", "START as given (overrides the lab file's start)")
	fs.BoolVar(&o.Keep, "keep", false, "LAB_KEEP=1")
	_ = fs.Parse(os.Args[1:])
	if *render {
		if err := renderStream(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "lab-summary:", err)
			os.Exit(1)
		}
		return
	}
	if o.Dir == "" {
		fmt.Fprintln(os.Stderr, "lab-summary: -dir is required")
		os.Exit(2)
	}
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "lab-summary:", err)
		os.Exit(1)
	}
}

func run(o options, w io.Writer) error {
	r, err := load(o)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, r.String())
	return err
}
