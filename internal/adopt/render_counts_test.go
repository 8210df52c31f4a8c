package adopt

import (
	"reflect"
	"testing"
)

// Counts groups the imports by resource type (the address before the
// first dot, for_each keys included) and sorts by type.
func TestResultCounts(t *testing.T) {
	res := &Result{Imports: []Import{
		{To: `pve_vm.lab["100"]`}, {To: "pve_storage.local"}, {To: `pve_vm.lab["101"]`}, {To: `pve_node_file.a["n.x"]`},
	}}
	want := []TypeCount{{"pve_node_file", 1}, {"pve_storage", 1}, {"pve_vm", 2}}
	if got := res.Counts(); !reflect.DeepEqual(got, want) {
		t.Errorf("Counts() = %v, want %v", got, want)
	}
}
