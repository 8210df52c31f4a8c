package pvesim

import (
	"fmt"
	"maps"
	"sort"
	"strings"
)

// The hand-built state is reached by replaying the build log through the
// simulator itself: API calls go through the same handlers and task
// effects clients reach (routing, parameter checks, the handler, its
// worker), shell commands through the same programs the nodes' sshd runs.
// What the lab ends in is then exactly what those calls leave, so the
// state is consistent wherever two areas meet (network and cluster links,
// Ceph and storage.cfg, volumes and VM configs, repositories and pveceph).
// The replay bypasses the HTTP layer: no request or SSH log entries, no
// injected faults, no authentication, as if done before the simulator
// came up.

// hbCall runs one API request on node's pveproxy as root@pam, and waits
// for the task it starts; a refused request or a failed task is an error
// naming the call.
func (s *Sim) hbCall(node, verb, path string, params map[string]string) error {
	rt, vars := s.findRoute(path)
	var md *method
	if rt != nil {
		md = rt.methods[verb]
	}
	if md == nil {
		return fmt.Errorf("hand-built: %s %s: no such API method", verb, path)
	}
	p := maps.Clone(params)
	if p == nil {
		p = map[string]string{}
	}
	maps.Copy(p, vars)
	s.mu.Lock()
	c := &call{s: s, listener: node, method: verb, path: path, params: p, kinds: map[string]valueKind{}, user: "root@pam"}
	res, aerr := s.dispatch(c, rt, md)
	s.mu.Unlock()
	if aerr != nil {
		return fmt.Errorf("hand-built: %s %s on %s: %d %s%s", verb, path, node, aerr.Status, aerr.Message, paramErrText(aerr.Errors))
	}
	upid, ok := res.(string)
	if !ok || !strings.HasPrefix(upid, "UPID:") {
		return nil
	}
	// Every task goroutine is in s.wg and nothing else runs before the
	// listeners start, so waiting for the group waits for this task.
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.taskByUPIDLocked(upid)
	if t == nil {
		return fmt.Errorf("hand-built: %s %s on %s: task %s vanished", verb, path, node, upid)
	}
	if t.ExitStatus != "OK" {
		return fmt.Errorf("hand-built: %s %s on %s: task %s: %s", verb, path, node, t.Type, t.ExitStatus)
	}
	return nil
}

func (s *Sim) taskByUPIDLocked(upid string) *task {
	for _, ns := range s.st.Nodes {
		for _, t := range ns.Tasks {
			if t.UPID == upid {
				return t
			}
		}
	}
	return nil
}

func paramErrText(errs map[string]string) string {
	if len(errs) == 0 {
		return ""
	}
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "; %s: %s", k, strings.TrimSpace(errs[k]))
	}
	return b.String()
}

// hbShell runs one command line as root in node's shell, stdin given; a
// non-zero exit is an error with what the command printed on stderr.
func (s *Sim) hbShell(node, line, stdin string) (string, error) {
	argv, err := parseShellLine(line)
	if err != nil {
		return "", fmt.Errorf("hand-built: %s: %s: %w", node, line, err)
	}
	x := &sshExec{s: s, node: node, user: "root", root: true, argv: argv, stdin: []byte(stdin)}
	var prog *sshProgram
	if len(argv) > 0 {
		prog = s.nodeOS.programs[argv[0]]
	}
	if code := x.run(prog); code != 0 {
		return "", fmt.Errorf("hand-built: %s: %s: exit %d: %s", node, line, code, strings.TrimSpace(x.stderr.String()))
	}
	return x.stdout.String(), nil
}
