package pve

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var operationRe = regexp.MustCompile(`^//pve:operation (GET|POST|PUT|DELETE) (/[a-z0-9_\-/{}.]*)$`)

// TestOperationAnnotations checks the //pve:operation lines that the
// simulator's coverage test parses: well-formed, on functions, and present on
// every exported Client method that talks to a fixed API path.
func TestOperationAnnotations(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	// Generic transport methods take the path from the caller.
	generic := map[string]bool{"Get": true, "Post": true, "Put": true, "Delete": true, "GetRaw": true,
		"Authenticate": true, "Endpoint": true, "AuthUser": true, "IsRootTicket": true,
		"ServerFingerprint": true, "RootPassword": true, "Await": true, // a TLS handshake; a credential
		"CloseIdleConnections": true, // the transport's kept connections
		"ReadOnly":             true, // a setting of the client
		"ForgetTicket":         true, // drops a credential, sends nothing
		"WriteVerified":        true} // the caller's write and read-back
	ops := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil {
				continue
			}
			recv := fd.Recv.List[0].Type
			if s, ok := recv.(*ast.StarExpr); ok {
				recv = s.X
			}
			if id, ok := recv.(*ast.Ident); !ok || id.Name != "Client" {
				continue
			}
			var n int
			if fd.Doc != nil {
				for _, c := range fd.Doc.List {
					if strings.HasPrefix(c.Text, "//pve:operation") {
						m := operationRe.FindStringSubmatch(c.Text)
						if m == nil {
							t.Errorf("%s: malformed annotation %q", fd.Name.Name, c.Text)
							continue
						}
						n++
						ops[m[1]+" "+m[2]] = true
					}
				}
			}
			if n == 0 && fd.Name.IsExported() && !generic[fd.Name.Name] {
				t.Errorf("exported method Client.%s has no //pve:operation annotation", fd.Name.Name)
			}
		}
	}
	for _, want := range []string{"GET /version", "GET /nodes", "POST /access/ticket", "GET /nodes/{node}/network",
		"PUT /nodes/{node}/network", "DELETE /nodes/{node}/network/{iface}", "GET /nodes/{node}/tasks/{upid}/status"} {
		if !ops[want] {
			t.Errorf("missing operation %s", want)
		}
	}
}
