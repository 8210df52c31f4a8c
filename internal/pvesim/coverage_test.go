package pvesim

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The client in internal/pve marks every method that calls the API with
// `//pve:operation METHOD /path`. Each of them must reach a simulator route
// in every release where PVE has that method, or the provider code behind
// it is untested; where the release's official schema lacks it, the client
// must not be used there, and pvesim must not serve it either.

var operationLine = regexp.MustCompile(`^//pve:operation (GET|POST|PUT|DELETE) (/[a-z0-9_\-/{}.]*)$`)

type clientOperation struct {
	fn, method, path, pos string
}

func parseClientOperations(t *testing.T) []clientOperation {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("..", "pve", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var ops []clientOperation
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Doc == nil {
				continue
			}
			fn := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				recv := fd.Recv.List[0].Type
				if s, ok := recv.(*ast.StarExpr); ok {
					recv = s.X
				}
				if id, ok := recv.(*ast.Ident); ok {
					fn = id.Name + "." + fn
				}
			}
			for _, c := range fd.Doc.List {
				if !strings.HasPrefix(c.Text, "//pve:operation") {
					continue
				}
				m := operationLine.FindStringSubmatch(c.Text)
				if m == nil {
					t.Errorf("%s: malformed annotation %q", fset.Position(c.Pos()), c.Text)
					continue
				}
				ops = append(ops, clientOperation{fn: fn, method: m[1], path: m[2], pos: fset.Position(c.Pos()).String()})
			}
		}
	}
	return ops
}

// apiParam is one parameter of the official apidata.js schema.
type apiParam struct {
	Type      string       `json:"type"`
	Optional  looseBool    `json:"optional"`
	Enum      []string     `json:"enum"`
	Minimum   *looseNumber `json:"minimum"`
	Maximum   *looseNumber `json:"maximum"`
	MaxLength *int         `json:"maxLength"`
	MinLength *int         `json:"minLength"`
	Pattern   string       `json:"pattern"`
	Requires  string       `json:"requires"`
	Format    any          `json:"format"` // a name, or an object for property strings
	// InstanceTypes: the param applies to these values of the type-property only.
	InstanceTypes []string `json:"instance-types"`
}

type apiMethod struct {
	Permissions json.RawMessage `json:"permissions"`
	Parameters  struct {
		// nil: check_object allows unknown keys unless it is defined and false.
		AdditionalProperties *looseBool          `json:"additionalProperties"`
		Properties           map[string]apiParam `json:"properties"`
	} `json:"parameters"`
}

// looseBool is apidata's 0/1 (sometimes a string) flag.
type looseBool bool

func (b *looseBool) UnmarshalJSON(raw []byte) error {
	s := strings.Trim(string(raw), `"`)
	*b = looseBool(s == "1" || s == "true")
	return nil
}

type apiNode struct {
	Path     string               `json:"path"`
	Info     map[string]apiMethod `json:"info"`
	Children []apiNode            `json:"children"`
}

var (
	apiDataMu    sync.Mutex
	apiDataCache = map[string]map[string]map[string]apiMethod{}
)

// loadAPIData reads ../shared/pve-api/apidata-pve<release>.js (beside the
// repository, never part of it: AGPL) into path -> method -> schema. It
// returns nil when the folder is absent.
func loadAPIData(t *testing.T, release string) map[string]map[string]apiMethod {
	t.Helper()
	apiDataMu.Lock()
	defer apiDataMu.Unlock()
	if d, ok := apiDataCache[release]; ok {
		return d
	}
	file := findShared(t, "apidata-pve"+release+".js")
	if file == "" {
		apiDataCache[release] = nil
		return nil
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.IndexByte(string(raw), '[')
	if i < 0 {
		t.Fatalf("%s: no JSON array", file)
	}
	var roots []apiNode
	// The file is `const apiSchema = [...];`: decode the one array.
	if err := json.NewDecoder(strings.NewReader(string(raw[i:]))).Decode(&roots); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	out := map[string]map[string]apiMethod{}
	var walk func(n apiNode)
	walk = func(n apiNode) {
		if len(n.Info) > 0 {
			out[n.Path] = n.Info
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	apiDataCache[release] = out
	return out
}

func findShared(t *testing.T, file string) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		p := filepath.Join(dir, "..", "shared", "pve-api", file)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// coverageReleases are the releases checked, newest first.
var coverageReleases = []string{"9.1", "8.4"}

func TestCoverageClientOperations(t *testing.T) {
	ops := parseClientOperations(t)
	if len(ops) < 100 {
		t.Fatalf("found only %d //pve:operation annotations in ../pve; the parser or the annotations drifted", len(ops))
	}
	official := map[string]map[string]map[string]apiMethod{}
	for _, rel := range coverageReleases {
		official[rel] = loadAPIData(t, rel)
	}
	servedBy := map[string]map[string]map[string]bool{} // release -> path -> method
	for _, relName := range coverageReleases {
		rel, err := lookupRelease(relName)
		if err != nil {
			t.Fatal(err)
		}
		servedBy[relName] = map[string]map[string]bool{}
		for _, rt := range buildRoutes(rel) {
			servedBy[relName][rt.pattern] = map[string]bool{}
			for m := range rt.methods {
				servedBy[relName][rt.pattern][m] = true
			}
		}
	}
	var unavailable []string
	for _, relName := range coverageReleases {
		t.Run(relName, func(t *testing.T) {
			served := servedBy[relName]
			for _, op := range ops {
				routed := served[op.path][op.method]
				if sc := official[relName]; sc != nil {
					if _, ok := sc[op.path][op.method]; !ok {
						// PVE <rel> has no such method: the provider must
						// not call it there, and pvesim must say 501.
						unavailable = append(unavailable, relName+": "+op.fn+" ("+op.method+" "+op.path+")")
						if routed {
							t.Errorf("%s: pvesim %s serves %s %s, which PVE %s does not have (%s)", op.pos, relName, op.method, op.path, relName, op.fn)
						}
						continue
					}
				}
				if !routed && official[relName] == nil {
					// Without PVE's schema, pvesim's own release tables say
					// which release has the method: another one must route it.
					for _, other := range coverageReleases {
						if servedBy[other][op.path][op.method] {
							unavailable = append(unavailable, relName+": "+op.fn+" ("+op.method+" "+op.path+"; pvesim "+other+" has it)")
							routed = true
							break
						}
					}
				}
				if !routed {
					t.Errorf("%s: %s calls %s %s, which pvesim %s does not route", op.pos, op.fn, op.method, op.path, relName)
				}
			}
		})
	}
	if official["9.1"] != nil && official["8.4"] != nil {
		for _, op := range ops {
			_, in9 := official["9.1"][op.path][op.method]
			_, in8 := official["8.4"][op.path][op.method]
			if !in9 && !in8 {
				t.Errorf("%s: %s names %s %s, which exists in neither PVE 9.1 nor 8.4", op.pos, op.fn, op.method, op.path)
			}
		}
	} else {
		t.Log("official schema ../shared/pve-api not found beside the repository; checked pvesim routes only")
	}
	sort.Strings(unavailable)
	for _, u := range unavailable {
		t.Logf("not in that PVE release, the client must not be used there: %s", u)
	}
}
