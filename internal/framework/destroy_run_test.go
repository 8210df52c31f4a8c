package framework

import (
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

func TestIsDestroyCommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"terraform", "destroy", "-auto-approve"}, true},
		{[]string{"/usr/local/bin/terraform", "-chdir=lab", "destroy"}, true},
		{[]string{"tofu", "apply", "-destroy"}, true},
		{[]string{"terraform", "plan", "-destroy", "-out=p"}, true},
		{[]string{"terraform", "apply"}, false},
		{[]string{"terraform", "plan", "-refresh=false"}, false},
		{[]string{"terraform", "apply", "destroy.tfplan"}, false},
		{[]string{"go", "test", "destroy"}, false},
		{nil, false},
	} {
		if got := isDestroyCommand(c.args); got != c.want {
			t.Errorf("isDestroyCommand(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

// In a destroy run an update refusal is a warning; otherwise an error.
func TestRefuseChange(t *testing.T) {
	saved := parentCmdline
	defer func() { parentCmdline, destroyRunOnce, destroyRun = saved, sync.Once{}, false }()
	for _, c := range []struct {
		args    []string
		wantErr bool
	}{{[]string{"terraform", "apply"}, true}, {[]string{"terraform", "destroy"}, false}} {
		parentCmdline = func() []string { return c.args }
		destroyRunOnce, destroyRun = sync.Once{}, false
		var d diag.Diagnostics
		RefuseChange(&d, "size", "a VM disk to a smaller size", "detail")
		if d.HasError() != c.wantErr || len(d) != 1 || d[0].Summary() != "Cannot change size of a VM disk to a smaller size" {
			t.Fatalf("%q: %v", c.args, d)
		}
		if wp, ok := d[0].(diag.DiagnosticWithPath); !ok || !wp.Path().Equal(path.Root("size")) {
			t.Fatalf("%q: diagnostic not at size: %v", c.args, d[0])
		}
	}
}
