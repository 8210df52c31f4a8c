package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

type options struct {
	Dir, Repo, Result, CLI, CLIVersion, Release string
	LabFile, LabName, LabDir, Work, Start       string
	LabDirArg                                   string // LAB_DIR as given
	Keep                                        bool
}

// report is everything the summary is made of, loaded from the files of a run.
type report struct {
	o        options
	lab      labFile
	phases   []phase
	streams  map[string][]uiMessage // by phase
	state    []stateResource
	hasState bool
	outputs  map[string]any
	nodes    []simNode
	network  map[string]*network
	hasReqs  bool
	pid      string // pvesim's pid when it was left running
	labs     []string
}

type labFile struct {
	Name  string `json:"name"`
	Start string `json:"start"`
}

func load(o options) (*report, error) {
	r := &report{o: o, streams: map[string][]uiMessage{}}
	var err error
	if r.phases, err = readPhases(o.Dir); err != nil {
		return nil, err
	}
	for _, s := range streams {
		m, ok, err := readStreamFile(filepath.Join(o.Dir, s.file))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.file, err)
		}
		if ok {
			r.streams[s.phase] = m
		}
	}
	if r.state, r.hasState, err = readState(filepath.Join(o.Dir, fileState)); err != nil {
		return nil, fmt.Errorf("%s: %w", fileState, err)
	}
	if r.outputs, err = readOutputs(filepath.Join(o.Dir, fileOutputs)); err != nil {
		return nil, fmt.Errorf("%s: %w", fileOutputs, err)
	}
	if r.nodes, err = readSimNodes(filepath.Join(o.Dir, filePvesim)); err != nil {
		return nil, fmt.Errorf("%s: %w", filePvesim, err)
	}
	if r.network, r.hasReqs, err = readNetwork(filepath.Join(o.Dir, fileRequests), r.nodes); err != nil {
		return nil, fmt.Errorf("%s: %w", fileRequests, err)
	}
	if b, err := os.ReadFile(filepath.Join(o.Dir, filePvesimPID)); err == nil {
		r.pid = strings.TrimSpace(string(b))
	}
	if o.LabFile != "" {
		if b, err := os.ReadFile(o.LabFile); err == nil {
			_ = json.Unmarshal(b, &r.lab)
		}
	}
	if o.Repo != "" {
		if m, err := filepath.Glob(filepath.Join(o.Repo, "examples", "labs", "*", "lab.json")); err == nil {
			for _, f := range m {
				r.labs = append(r.labs, filepath.Base(filepath.Dir(f)))
			}
			sort.Strings(r.labs)
		}
	}
	return r, nil
}

// rel prints p relative to the repository when it is inside it.
func (r *report) rel(p string) string {
	if r.o.Repo != "" {
		if q, err := filepath.Rel(r.o.Repo, p); err == nil && !strings.HasPrefix(q, "..") {
			return q
		}
	}
	return p
}

// cliName is how a person runs the CLI: its name when PATH finds this binary, else its path.
func (r *report) cliName() string {
	base := filepath.Base(r.o.CLI)
	if p, err := exec.LookPath(base); err == nil && p == r.o.CLI {
		return base
	}
	return r.o.CLI
}

func (r *report) failedPhase() *phase {
	for i := range r.phases {
		if r.phases[i].Status != 0 {
			return &r.phases[i]
		}
	}
	return nil
}

func (r *report) String() string {
	var b strings.Builder
	r.header(&b)
	r.phaseTable(&b)
	r.errorLines(&b)
	r.secondPlanChanges(&b)
	r.resources(&b)
	r.networkLines(&b)
	r.warningLines(&b)
	r.ceph(&b)
	r.vms(&b)
	r.outputLines(&b)
	r.tails(&b)
	r.files(&b)
	r.next(&b)
	return b.String()
}

func (r *report) header(b *strings.Builder) {
	lab := r.lab.Name
	if lab == "" {
		lab = r.o.LabName
	}
	if lab == "" && r.o.LabFile != "" {
		lab = r.rel(r.o.LabFile)
	}
	start := r.o.Start
	if start == "" {
		start = r.lab.Start
	}
	if start == "" && r.o.LabFile != "" {
		start = "fresh-install"
	}
	var facts []string
	if start != "" {
		facts = append(facts, start)
	}
	if r.o.Release != "" {
		facts = append(facts, "PVE "+r.o.Release)
	}
	what := r.rel(r.o.LabDir)
	if lab != "" {
		what += " on the " + lab + " lab"
	}
	if len(facts) > 0 {
		what += " (" + strings.Join(facts, ", ") + ")"
	}
	if r.o.CLIVersion != "" {
		what += " with " + r.o.CLIVersion
	}
	switch f := r.failedPhase(); {
	case r.o.Result == "OK":
		fmt.Fprintf(b, "lab.sh: OK: %s: apply succeeded, the second plan is empty\n", what)
	case f != nil && f.Name == "second plan" && f.Status == 2:
		fmt.Fprintf(b, "lab.sh: FAILED: %s: the plan after apply is not empty: the provider does not converge\n", what)
	case f != nil:
		fmt.Fprintf(b, "lab.sh: FAILED at %s (exit status %d): %s\n", f.Name, f.Status, what)
	default:
		fmt.Fprintf(b, "lab.sh: FAILED: %s\n", what)
	}
}

func (r *report) phaseTable(b *strings.Builder) {
	if len(r.phases) == 0 {
		b.WriteString("Phases: n/a\n")
		return
	}
	fmt.Fprintf(b, "Phases %26s %9s\n", "time", "requests")
	var total float64
	var reqs int
	for _, p := range r.phases {
		total += p.Seconds
		req := ""
		if p.RequestsKnown && p.Name != "build" && p.Name != "start simulator" {
			req = thousands(p.Requests)
			reqs += p.Requests
		}
		note := r.phaseNote(p)
		b.WriteString(strings.TrimRight(fmt.Sprintf("  %-22s %10s %9s  %s", p.Name, duration(p.Seconds), req, note), " ") + "\n")
	}
	fmt.Fprintf(b, "  %-22s %10s %9s\n", "total", duration(total), thousands(reqs))
	var plan, apply, second *phase
	for i := range r.phases {
		switch r.phases[i].Name {
		case "plan":
			plan = &r.phases[i]
		case "apply":
			apply = &r.phases[i]
		case "second plan":
			second = &r.phases[i]
		}
	}
	if plan != nil && apply != nil && second != nil {
		fmt.Fprintf(b, "API requests: apply %s (its plan %s), second plan %s\n",
			thousands(plan.Requests+apply.Requests), thousands(plan.Requests), thousands(second.Requests))
	}
}

func (r *report) phaseNote(p phase) string {
	var note string
	for _, m := range r.streams[p.Name] {
		if m.Type == "change_summary" && m.Changes != nil {
			c := m.Changes
			if c.Operation == "apply" {
				note = fmt.Sprintf("%d added, %d changed, %d destroyed", c.Add, c.Change, c.Remove)
			} else {
				note = fmt.Sprintf("%d to add, %d to change, %d to destroy", c.Add, c.Change, c.Remove)
			}
			if c.Import > 0 {
				note = fmt.Sprintf("%d imported, ", c.Import) + note
			}
		}
	}
	if p.Name == "second plan" && p.Status == 0 {
		note = "no changes"
	}
	if p.Name == "second plan" {
		// Drift in the refresh (the provider read back something other than what
		// the apply stored) without a change to plan: worth knowing, not a failure.
		if d := r.changed(p.Name, "resource_drift"); len(d) > 0 {
			note += fmt.Sprintf("; drift detected on %d: %s", len(d), clip(strings.Join(d, ", "), 80))
		}
	}
	switch {
	case p.Name == "second plan" && p.Status == 2:
		if note != "" {
			note = ": " + note
		}
		note = "NOT EMPTY (exit status 2)" + note
	case p.Status != 0:
		if note != "" {
			note = "; " + note
		}
		note = fmt.Sprintf("FAILED (exit status %d)%s", p.Status, note)
	}
	return note
}

// changed lists "address (action)" of the messages of a type (planned_change,
// resource_drift) in a phase's stream.
func (r *report) changed(phase, typ string) []string {
	var out []string
	for _, m := range r.streams[phase] {
		if m.Type == typ && m.Change != nil {
			out = append(out, m.Change.Resource.Addr+" ("+m.Change.Action+")")
		}
	}
	return out
}

const maxChanges = 8

// secondPlanChanges lists what a non-empty second plan would change: the resources
// whose read-back does not match the configuration.
func (r *report) secondPlanChanges(b *strings.Builder) {
	for _, p := range r.phases {
		if p.Name != "second plan" || p.Status != 2 {
			continue
		}
		c := r.changed(p.Name, "planned_change")
		fmt.Fprintf(b, "The second plan would change %d resources (the plan: in the log):\n", len(c))
		for i, l := range c {
			if i == maxChanges {
				fmt.Fprintf(b, "  ... %d more\n", len(c)-maxChanges)
				break
			}
			b.WriteString("  " + l + "\n")
		}
	}
}

func (r *report) resources(b *strings.Builder) {
	if !r.hasState {
		// No state: what the plan would have created, when there was one.
		counts := map[string]int{}
		n := 0
		for _, m := range r.streams["plan"] {
			if m.Type == "planned_change" && m.Change != nil && m.Change.Resource.ResourceType != "" {
				counts[m.Change.Resource.ResourceType]++
				n++
			}
		}
		if n == 0 {
			b.WriteString("Resources: n/a (no state)\n")
			return
		}
		fmt.Fprintf(b, "Resources in the plan (no state): %d, by type:\n", n)
		wrapCounts(b, counts)
		return
	}
	managed, data := map[string]int{}, map[string]int{}
	var nm, nd int
	for _, s := range r.state {
		if s.Mode == "data" {
			data[s.Type]++
			nd++
		} else {
			managed[s.Type]++
			nm++
		}
	}
	fmt.Fprintf(b, "Resources in the state: %d, by type:\n", nm)
	wrapCounts(b, managed)
	if nd > 0 {
		fmt.Fprintf(b, "Data sources: %d, by type:\n", nd)
		wrapCounts(b, data)
	}
}

// wrapCounts prints "type n" pairs sorted by type, several to a line.
func wrapCounts(b *strings.Builder, counts map[string]int) {
	types := make([]string, 0, len(counts))
	for t := range counts {
		types = append(types, t)
	}
	sort.Strings(types)
	line := ""
	for _, t := range types {
		item := fmt.Sprintf("%s %d", t, counts[t])
		if line != "" && len(line)+len(item) > 108 {
			b.WriteString("  " + line + ",\n")
			line = ""
		}
		if line != "" {
			line += ", "
		}
		line += item
	}
	if line != "" {
		b.WriteString("  " + line + "\n")
	}
}

// networkLines: each node's network reloads and where its management address went,
// from pvesim's request log (the cutover from the installer's vmbr0 takes one).
func (r *report) networkLines(b *strings.Builder) {
	if !r.hasReqs || len(r.nodes) == 0 {
		b.WriteString("Network: n/a (no request log)\n")
		return
	}
	b.WriteString("Network (pvesim's request log):\n")
	for _, n := range r.nodes {
		nw := r.network[n.Name]
		if nw == nil {
			nw = &network{}
		}
		reloads := "no reload"
		switch {
		case nw.Reloads == 1:
			reloads = "1 reload"
		case nw.Reloads > 1:
			reloads = fmt.Sprintf("%d reloads", nw.Reloads)
		}
		switch {
		case nw.Holder != "" && nw.Holder != "vmbr0":
			fmt.Fprintf(b, "  management cutover: %s %s (%s: vmbr0 -> %s)\n", n.Name, reloads, n.ManagementAddress, nw.Holder)
		case n.ManagementAddress != "":
			fmt.Fprintf(b, "  network: %s %s (%s stays on vmbr0)\n", n.Name, reloads, n.ManagementAddress)
		default:
			fmt.Fprintf(b, "  network: %s %s\n", n.Name, reloads)
		}
	}
}

// devOverrides is the warning the CLI gives on every command under dev_overrides: the
// lab always runs so, and it says nothing about the lab.
const devOverrides = "Provider development overrides are in effect"

const (
	maxWarnings    = 6
	maxErrorGroups = 3
	maxErrorLines  = 18
	maxGroupItems  = 8
	maxLineText    = 200
)

// collect returns the CLI's diagnostics of every -json stream, without the
// dev_overrides warning and without repeats: a warning with an address once per
// address (plan and apply may say the same in other words), anything else once per text.
func (r *report) collect() (errs, warns []diagnostic) {
	type key struct{ sev, sum, addr, detail string }
	seen := map[key]bool{}
	for _, s := range streams {
		for _, m := range r.streams[s.phase] {
			d := m.Diagnostic
			if m.Type != "diagnostic" || d == nil || strings.HasPrefix(d.Summary, devOverrides) {
				continue
			}
			k := key{d.Severity, d.Summary, d.Address, d.Detail}
			if d.Severity != "error" && d.Address != "" {
				k.detail = ""
			}
			if seen[k] {
				continue
			}
			seen[k] = true
			if d.Severity == "error" {
				errs = append(errs, *d)
			} else {
				warns = append(warns, *d)
			}
		}
		// A stream with a line that is not JSON (a crash) is an error too.
		for _, m := range r.streams[s.phase] {
			if m.Type == "text" && strings.TrimSpace(m.Message) != "" {
				errs = append(errs, diagnostic{Severity: "error", Summary: s.phase + ": the CLI printed: " + m.Message})
				break
			}
		}
	}
	return errs, warns
}

// errorLines prints the CLI's errors in full, right after the phases: a refusal at
// plan must be read here, not found in the log. Errors of one check (the same summary
// at the same place, such as a precondition of a for_each) print as one list.
func (r *report) errorLines(b *strings.Builder) {
	errs, _ := r.collect()
	type group struct {
		head  string
		items []diagnostic
	}
	var groups []*group
	index := map[string]*group{}
	for _, d := range errs {
		head := d.Summary + where(d)
		g := index[head]
		if g == nil {
			g = &group{head: head}
			index[head] = g
			groups = append(groups, g)
		}
		g.items = append(g.items, d)
	}
	for i, g := range groups {
		if i == maxErrorGroups {
			rest := 0
			for _, g := range groups[i:] {
				rest += len(g.items)
			}
			fmt.Fprintf(b, "  ... %d more errors in the log\n", rest)
			break
		}
		if len(g.items) > 1 {
			fmt.Fprintf(b, "Error: %s, %d times:\n", g.head, len(g.items))
			for j, d := range g.items {
				if j == maxGroupItems {
					fmt.Fprintf(b, "  ... %d more in the log\n", len(g.items)-maxGroupItems)
					break
				}
				b.WriteString("  - " + clip(firstParagraph(d.Detail), maxLineText) + "\n")
			}
			continue
		}
		d := g.items[0]
		fmt.Fprintf(b, "Error: %s\n", g.head)
		if d.Detail == "" {
			continue
		}
		lines := strings.Split(strings.TrimRight(d.Detail, "\n"), "\n")
		for j, l := range lines {
			if j == maxErrorLines {
				fmt.Fprintf(b, "  ... (%d more lines in the log)\n", len(lines)-maxErrorLines)
				break
			}
			b.WriteString(strings.TrimRight("  "+l, " ") + "\n")
		}
	}
}

// warningLines prints the CLI's warnings one line each: summary, address, and the
// first paragraph of the detail, clipped.
func (r *report) warningLines(b *strings.Builder) {
	_, warns := r.collect()
	if len(warns) == 0 {
		return
	}
	fmt.Fprintf(b, "Warnings: %d\n", len(warns))
	for i, d := range warns {
		if i == maxWarnings {
			fmt.Fprintf(b, "  ... %d more in the log\n", len(warns)-maxWarnings)
			break
		}
		text := d.Summary + where(d)
		if first := firstParagraph(d.Detail); first != "" {
			text += ": " + first
		}
		b.WriteString("  " + clip(text, maxLineText) + "\n")
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

func where(d diagnostic) string {
	switch {
	case d.Address != "":
		return " (" + d.Address + ")"
	case d.Range != nil && d.Range.Filename != "":
		return fmt.Sprintf(" (%s line %d)", d.Range.Filename, d.Range.Start.Line)
	}
	return ""
}

func firstParagraph(s string) string {
	p, _, _ := strings.Cut(strings.TrimSpace(s), "\n\n")
	return strings.Join(strings.Fields(p), " ")
}

// ceph: health from the output "ceph" (health, checks, pool), else from a
// pve_ceph_status data source in the state; the OSDs from the state.
func (r *report) ceph(b *strings.Builder) {
	if !r.hasState && r.outputs == nil {
		b.WriteString("Ceph, VMs: n/a (no state)\n")
		return
	}
	var health, pool string
	var checks []string
	if c, ok := r.outputs["ceph"].(map[string]any); ok {
		health, _ = c["health"].(string)
		pool, _ = c["pool"].(string)
		if l, ok := c["checks"].([]any); ok {
			for _, x := range l {
				if s, ok := x.(string); ok {
					checks = append(checks, s)
				}
			}
		}
	}
	osds := 0
	for _, s := range r.state {
		switch {
		case s.Mode == "data" && s.Type == "pve_ceph_status" && health == "":
			health, _ = s.Values["health"].(string)
			if l, ok := s.Values["checks"].([]any); ok {
				for _, x := range l {
					if c, ok := x.(map[string]any); ok {
						checks = append(checks, fmt.Sprintf("%v: %v", c["name"], c["summary"]))
					}
				}
			}
		case s.Mode == "managed" && s.Type == "pve_ceph_osd":
			osds++
		}
	}
	if health == "" {
		if osds == 0 {
			b.WriteString("Ceph: n/a (no output \"ceph\" with health, no pve_ceph_status in the state)\n")
			return
		}
		health = "health n/a"
	}
	line := "Ceph: " + health
	line += fmt.Sprintf(", %d OSDs", osds)
	if pool != "" {
		line += ", pool " + pool
	}
	b.WriteString(line + "\n")
	for i, c := range checks {
		if i == 4 {
			fmt.Fprintf(b, "  ... %d more checks\n", len(checks)-4)
			break
		}
		b.WriteString("  " + c + "\n")
	}
}

const maxVMs = 5

// vms: each pve_vm of the state, with its HA state when a pve_ha_resource manages it.
func (r *report) vms(b *strings.Builder) {
	if !r.hasState {
		if r.outputs != nil {
			b.WriteString("VMs: n/a (no state)\n")
		}
		return
	}
	ha := map[string]string{}
	for _, s := range r.state {
		if s.Mode == "managed" && s.Type == "pve_ha_resource" {
			sid, _ := s.Values["sid"].(string)
			st, _ := s.Values["state"].(string)
			if sid != "" {
				ha[sid] = st
			}
		}
	}
	var lines []string
	for _, s := range r.state {
		if s.Mode != "managed" || s.Type != "pve_vm" {
			continue
		}
		id := num(s.Values["vmid"])
		line := "VM " + id
		if name, _ := s.Values["name"].(string); name != "" {
			line += " " + name
		}
		if node, _ := s.Values["node"].(string); node != "" {
			line += " on " + node
		}
		status, _ := s.Values["status"].(string)
		if status == "" {
			status = "n/a"
		}
		line += ": " + status
		if st, ok := ha["vm:"+id]; ok {
			line += ", HA " + st
		}
		if p, ok := s.Values["pending_changes"].([]any); ok && len(p) > 0 {
			line += fmt.Sprintf(", %d changes pending a restart", len(p))
		}
		lines = append(lines, line+" ("+s.Address+")")
	}
	if len(lines) == 0 {
		b.WriteString("VMs: none in the state\n")
		return
	}
	for i, l := range lines {
		if i == maxVMs {
			fmt.Fprintf(b, "... and %d more VMs\n", len(lines)-maxVMs)
			break
		}
		b.WriteString(l + "\n")
	}
}

// outputLines names the outputs and prints the short string ones (such as why a lab has
// no pool); the rest is in the log.
func (r *report) outputLines(b *strings.Builder) {
	if r.outputs == nil {
		return
	}
	names := make([]string, 0, len(r.outputs))
	for k := range r.outputs {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(names) == 0 {
		b.WriteString("Outputs: none\n")
		return
	}
	fmt.Fprintf(b, "Outputs (in the log): %s\n", strings.Join(names, ", "))
	for _, k := range names {
		if s, ok := r.outputs[k].(string); ok && len(s) <= 300 && !strings.Contains(s, "\n") {
			fmt.Fprintf(b, "  %s = %s\n", k, s)
		}
	}
}

// tails: when a phase without diagnostics failed (build, start), the end of the logs.
func (r *report) tails(b *strings.Builder) {
	f := r.failedPhase()
	switch {
	case r.o.Result == "OK":
		return
	case f != nil && f.Name == "second plan" && f.Status == 2:
		return
	case f != nil && r.hasErrors(f.Name):
		return
	}
	tail(b, filepath.Join(r.o.Dir, fileLog), "the log", 10)
	if f != nil && f.Name == "start simulator" {
		tail(b, filepath.Join(r.o.Dir, filePvesimLog), "pvesim's log", 10)
	}
}

// hasErrors tells whether the -json stream of a phase holds an error diagnostic.
func (r *report) hasErrors(phase string) bool {
	for _, m := range r.streams[phase] {
		if m.Type == "diagnostic" && m.Diagnostic != nil && m.Diagnostic.Severity == "error" {
			return true
		}
	}
	return false
}

func tail(b *strings.Builder, path, what string, n int) {
	data, err := os.ReadFile(path)
	if err != nil || len(strings.TrimSpace(string(data))) == 0 {
		return
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "lab.sh: pvesim stopped") {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	fmt.Fprintf(b, "The end of %s:\n", what)
	for _, l := range lines {
		b.WriteString("  " + l + "\n")
	}
}

func (r *report) files(b *strings.Builder) {
	d := r.o.Dir
	fmt.Fprintf(b, "Log: %s (the full CLI output: plan, apply, outputs, second plan)\n", filepath.Join(d, fileLog))
	fmt.Fprintf(b, "  beside it: pvesim.log, %s (every API request), the -json streams\n", fileRequests)
	state := filepath.Join(r.o.Work, "terraform.tfstate")
	if _, err := os.Stat(state); err != nil || r.o.Work == "" {
		b.WriteString("State: none\n")
		return
	}
	if r.pid != "" {
		fmt.Fprintf(b, "State: %s (pvesim runs on as pid %s)\n", state, r.pid)
	} else {
		fmt.Fprintf(b, "State: %s (pvesim is stopped)\n", state)
	}
}

func (r *report) next(b *strings.Builder) {
	cli := r.cliName()
	b.WriteString("Next:\n")
	if r.pid != "" {
		fmt.Fprintf(b, "  . %s && %s -chdir=%s plan\n", filepath.Join(r.o.Dir, fileEnv), cli, r.o.Work)
		fmt.Fprintf(b, "  kill %s; rm -rf %s   # stop pvesim and drop the run\n", r.pid, r.o.Dir)
		return
	}
	// The same lab again, kept: LAB as given.
	again := "make lab"
	if r.o.LabName != "" {
		again += " LAB=" + r.o.LabName
	}
	if r.o.LabDirArg != "" {
		again += " LAB_DIR=" + r.o.LabDirArg
	}
	fmt.Fprintf(b, "  %-44s # keep pvesim running (and the state) to plan/apply/destroy against it\n", again+" LAB_KEEP=1")
	var others []string
	for _, l := range r.labs {
		if l != r.lab.Name && l != r.o.LabName {
			others = append(others, l)
		}
	}
	if len(others) > 0 {
		fmt.Fprintf(b, "  %-44s # another shipped lab (%s: examples/labs)\n", "make lab LAB="+others[0], strings.Join(others, ", "))
	}
	fmt.Fprintf(b, "  %-44s # your hardware and configuration\n", "make lab LAB=my-lab.json LAB_DIR=my-config")
	fmt.Fprintf(b, "  %-44s # drop this run's logs and state\n", "rm -rf "+r.o.Dir)
}

// duration prints seconds as 0.4s, 12.3s, 1m41s.
func duration(s float64) string {
	if s < 60 {
		return strconv.FormatFloat(s, 'f', 1, 64) + "s"
	}
	t := int(math.Round(s))
	return fmt.Sprintf("%dm%02ds", t/60, t%60)
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return s
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// num prints a JSON number (float64 after decoding) as an integer when it is one.
func num(v any) string {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return x
	case nil:
		return "n/a"
	}
	return fmt.Sprint(v)
}

// renderStream prints a -json stream as text, for the log: each message, and each
// diagnostic in full as the CLI prints it without -json.
func renderStream(in io.Reader, out io.Writer) error {
	msgs, err := readStream(in)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, m := range msgs {
		d := m.Diagnostic
		if m.Type != "diagnostic" || d == nil {
			b.WriteString(m.Message + "\n")
			continue
		}
		sev := "Warning"
		if d.Severity == "error" {
			sev = "Error"
		}
		fmt.Fprintf(&b, "\n%s: %s\n", sev, d.Summary)
		if w := where(*d); w != "" {
			fmt.Fprintf(&b, "  at %s\n", strings.TrimSuffix(strings.TrimPrefix(w, " ("), ")"))
		}
		if d.Detail != "" {
			b.WriteString("\n")
			for _, l := range strings.Split(strings.TrimRight(d.Detail, "\n"), "\n") {
				b.WriteString(strings.TrimRight("  "+l, " ") + "\n")
			}
		}
		b.WriteString("\n")
	}
	_, err = io.WriteString(out, b.String())
	return err
}
