package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The files scripts/lab.sh leaves in its temp dir, all optional: a run that stops
// early has only some of them.
const (
	filePhases     = "phases.tsv"     // name, start, end (epoch seconds), exit status, request-log lines at start and end
	filePvesim     = "pvesim.json"    // pvesim's JSON line: nodes with name and management_address
	fileRequests   = "requests.jsonl" // pvesim's request log
	fileOutputs    = "outputs.json"   // output -json
	fileState      = "tfstate.json"   // show -json of the state
	fileLog        = "lab.log"        // the full CLI output
	filePvesimLog  = "pvesim.log"     // pvesim's stderr
	filePvesimPID  = "pvesim.pid"     // present when pvesim was left running (LAB_KEEP=1)
	fileEnv        = "lab.env"        // TF_VAR_* and the CLI config for commands after the lab
	fileSecondPlan = "second-plan.jsonl"
)

// streams are the CLI runs with -json, in order: their file names and the phase
// that ran them.
var streams = []struct{ file, phase string }{
	{"plan.jsonl", "plan"},
	{"apply.jsonl", "apply"},
	{fileSecondPlan, "second plan"},
}

type phase struct {
	Name          string
	Seconds       float64
	Status        int
	Requests      int
	RequestsKnown bool
}

func readPhases(dir string) ([]phase, error) {
	b, found, err := readOptional(filepath.Join(dir, filePhases))
	if err != nil || !found {
		return nil, err
	}
	var out []phase
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 4 {
			continue
		}
		p := phase{Name: f[0]}
		t0, err0 := strconv.ParseFloat(f[1], 64)
		t1, err1 := strconv.ParseFloat(f[2], 64)
		if err0 == nil && err1 == nil && t1 >= t0 {
			p.Seconds = t1 - t0
		}
		p.Status, _ = strconv.Atoi(f[3])
		if len(f) >= 6 {
			r0, err0 := strconv.Atoi(f[4])
			r1, err1 := strconv.Atoi(f[5])
			if err0 == nil && err1 == nil {
				p.Requests, p.RequestsKnown = r1-r0, true
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// uiMessage is one line of the CLI's machine-readable UI (plan/apply -json).
type uiMessage struct {
	Level      string      `json:"@level"`
	Message    string      `json:"@message"`
	Type       string      `json:"type"`
	Diagnostic *diagnostic `json:"diagnostic"`
	Changes    *struct {
		Add       int    `json:"add"`
		Change    int    `json:"change"`
		Import    int    `json:"import"`
		Remove    int    `json:"remove"`
		Operation string `json:"operation"`
	} `json:"changes"`
	Change *struct {
		Resource struct {
			Addr         string `json:"addr"`
			ResourceType string `json:"resource_type"`
		} `json:"resource"`
		Action string `json:"action"`
		Reason string `json:"reason"`
	} `json:"change"`
}

type diagnostic struct {
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	Detail   string `json:"detail"`
	Address  string `json:"address"`
	Range    *struct {
		Filename string `json:"filename"`
		Start    struct {
			Line int `json:"line"`
		} `json:"start"`
	} `json:"range"`
}

// readStream reads a -json stream; lines that are not JSON (a crash, a panic) become
// plain messages so that nothing the CLI said is lost.
func readStream(r io.Reader) ([]uiMessage, error) {
	var out []uiMessage
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var m uiMessage
		if line[0] != '{' || json.Unmarshal(line, &m) != nil {
			m = uiMessage{Type: "text", Message: string(line)}
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

func readStreamFile(path string) ([]uiMessage, bool, error) {
	b, found, err := readOptional(path)
	if err != nil || !found {
		return nil, found, err
	}
	m, err := readStream(bytes.NewReader(b))
	return m, true, err
}

// stateResource is a resource of show -json's values.
type stateResource struct {
	Address string         `json:"address"`
	Mode    string         `json:"mode"`
	Type    string         `json:"type"`
	Values  map[string]any `json:"values"`
}

type stateModule struct {
	Resources    []stateResource `json:"resources"`
	ChildModules []stateModule   `json:"child_modules"`
}

// readState returns every resource of show -json's state, child modules included;
// ok is false when there is no state file.
func readState(path string) ([]stateResource, bool, error) {
	b, found, err := readOptional(path)
	if err != nil || !found {
		return nil, false, err
	}
	var st struct {
		Values *struct {
			RootModule stateModule `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, false, err
	}
	if st.Values == nil { // an empty state
		return nil, true, nil
	}
	var out []stateResource
	var walk func(m stateModule)
	walk = func(m stateModule) {
		out = append(out, m.Resources...)
		for _, c := range m.ChildModules {
			walk(c)
		}
	}
	walk(st.Values.RootModule)
	return out, true, nil
}

// readOutputs returns output -json's values by name (nil without the file).
func readOutputs(path string) (map[string]any, error) {
	b, found, err := readOptional(path)
	if err != nil || !found {
		return nil, err
	}
	var raw map[string]struct {
		Sensitive bool `json:"sensitive"`
		Value     any  `json:"value"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	out := make(map[string]any, len(raw))
	for k, v := range raw {
		if v.Sensitive {
			out[k] = "(sensitive)"
			continue
		}
		out[k] = v.Value
	}
	return out, nil
}

// simNode is a node of pvesim's JSON line.
type simNode struct {
	Name              string `json:"name"`
	ManagementAddress string `json:"management_address"`
}

func readSimNodes(path string) ([]simNode, error) {
	b, found, err := readOptional(path)
	if err != nil || !found {
		return nil, err
	}
	var line struct {
		Nodes []simNode `json:"nodes"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(b), &line); err != nil {
		return nil, err
	}
	return line.Nodes, nil
}

// request is a line of pvesim's request log (pvesim.Request; only what is used).
type request struct {
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Params map[string]string `json:"params"`
	Status int               `json:"status"`
}

// network is what the request log says about a node's network: the reloads
// (PUT /nodes/{node}/network answered 200) and the interface that last got the
// management address (a POST or PUT of /nodes/{node}/network[/iface] with
// cidr <address>/<prefix>, answered 200).
type network struct {
	Reloads int
	Holder  string
}

func readNetwork(path string, nodes []simNode) (map[string]*network, bool, error) {
	b, found, err := readOptional(path)
	if err != nil || !found {
		return nil, found, err
	}
	f := bytes.NewReader(b)
	addr := map[string]string{}
	out := map[string]*network{}
	for _, n := range nodes {
		addr[n.Name] = n.ManagementAddress
		out[n.Name] = &network{}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		// Cheap filter first: the log of a lab holds thousands of lines.
		if !bytes.Contains(line, []byte("/network")) {
			continue
		}
		var r request
		if json.Unmarshal(line, &r) != nil || r.Status != 200 {
			continue
		}
		rest, ok := strings.CutPrefix(r.Path, "/nodes/")
		if !ok {
			continue
		}
		node, sub, _ := strings.Cut(rest, "/")
		iface, isNet := strings.CutPrefix(sub, "network")
		if !isNet || (iface != "" && iface[0] != '/') {
			continue
		}
		iface = strings.TrimPrefix(iface, "/")
		nw := out[node]
		if nw == nil {
			nw = &network{}
			out[node] = nw
		}
		switch {
		case r.Method == "PUT" && iface == "":
			nw.Reloads++
		case r.Method == "POST" || r.Method == "PUT":
			a := addr[node]
			if a == "" || !strings.HasPrefix(r.Params["cidr"], a+"/") {
				continue
			}
			if iface == "" {
				iface = r.Params["iface"]
			}
			nw.Holder = iface
		}
	}
	return out, true, sc.Err()
}

// readOptional reads a file the run may not have written (a phase that did
// not run): found is false, without an error, when it does not exist.
func readOptional(path string) (b []byte, found bool, err error) {
	b, err = os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return b, err == nil, err
}
