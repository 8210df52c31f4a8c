package node_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/pvelab/terraform-provider-pve/internal/acctest"
	"github.com/pvelab/terraform-provider-pve/internal/nodeexec"
)

// requireNodeWrites skips a test that writes files, units or NIC
// settings on a real node unless PVE_ACC_NODE_WRITES=1 allows it.
func requireNodeWrites(t *testing.T, e *acctest.Env) {
	t.Helper()
	if e.Sim == nil && os.Getenv("PVE_ACC_NODE_WRITES") != "1" {
		t.Skip("changes files, units and NIC settings on a node; set PVE_ACC_NODE_WRITES=1 to run it against a real cluster")
	}
}

// requireSim skips a test that depends on the simulator's hardware or
// hooks.
func requireSim(t *testing.T, e *acctest.Env, why string) {
	t.Helper()
	if e.Sim == nil {
		t.Skip(why)
	}
}

// run runs a command on a node for a check or to drift it.
func run(t *testing.T, ex *nodeexec.Pool, node string, cmd *nodeexec.Command) string {
	t.Helper()
	res, err := ex.Run(context.Background(), node, cmd)
	if err != nil {
		t.Fatal(err)
	}
	return string(res.Stdout)
}

// outside returns a PreConfig that runs a command on a node behind
// Terraform's back.
func outside(t *testing.T, e *acctest.Env, node string, program string, args ...string) func() {
	ex := e.NodeExec(t)
	return func() { run(t, ex, node, nodeexec.Cmd(program, args...)) }
}

// checkFile asserts a node's file content byte for byte, read over SSH.
func checkFile(t *testing.T, e *acctest.Env, node, path, want string) resource.TestCheckFunc {
	ex := e.NodeExec(t)
	return func(*terraform.State) error {
		got, err := ex.ReadFile(context.Background(), node, path)
		if err != nil {
			return err
		}
		if string(got) != want {
			return fmt.Errorf("node %s: %s is\n%q\nwant\n%q", node, path, got, want)
		}
		return nil
	}
}

// checkNoFile asserts that a file does not exist on a node.
func checkNoFile(t *testing.T, e *acctest.Env, node, path string) resource.TestCheckFunc {
	ex := e.NodeExec(t)
	return func(*terraform.State) error {
		if got, err := ex.ReadFile(context.Background(), node, path); err == nil {
			return fmt.Errorf("node %s: %s still exists: %q", node, path, got)
		}
		return nil
	}
}

// checkUnit asserts a unit's state as systemctl show reports it.
func checkUnit(t *testing.T, e *acctest.Env, node, unit string, want map[string]string) resource.TestCheckFunc {
	ex := e.NodeExec(t)
	return func(*terraform.State) error {
		props := make([]string, 0, len(want))
		for k := range want {
			props = append(props, k)
		}
		res, err := ex.Run(context.Background(), node, nodeexec.Cmd("systemctl", "show", "-p", strings.Join(props, ","), unit))
		if err != nil {
			return err
		}
		got := map[string]string{}
		for _, line := range strings.Split(string(res.Stdout), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				got[k] = v
			}
		}
		for k, v := range want {
			if got[k] != v {
				return fmt.Errorf("node %s: %s has %s=%s, want %s", node, unit, k, got[k], v)
			}
		}
		return nil
	}
}

// sshLines returns the command lines a node received since the last
// reset, for tests that count what ran.
func sshLines(e *acctest.Env, node string) []string {
	var out []string
	for _, c := range e.Sim.SSHCommands() {
		if c.Node == node {
			out = append(out, c.Line)
		}
	}
	return out
}

func count(lines []string, line string) int {
	n := 0
	for _, l := range lines {
		if l == line {
			n++
		}
	}
	return n
}

// errRE compiles an expected error whose spaces may be line breaks, as
// Terraform wraps diagnostics.
func errRE(pattern string) *regexp.Regexp {
	return regexp.MustCompile("(?s)" + strings.ReplaceAll(pattern, " ", `\s+`))
}

// writeOutside writes a file on a node behind Terraform's back.
func writeOutside(ex *nodeexec.Pool, node, path, content string) error {
	return ex.WriteFile(context.Background(), node, nodeexec.File{Path: path, Content: []byte(content), Mode: 0o644})
}
