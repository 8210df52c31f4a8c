package qemu

import (
	"slices"
	"strings"
	"testing"
)

// FuzzBootOrder: the boot property's readers agree on the device list, and
// replacing a device in it changes that device only.
func FuzzBootOrder(f *testing.F) {
	for _, s := range []string{"order=scsi0;net0", "order=scsi0;ide2;net0", "cdn", "order=", "legacy=cdn", "order=scsi0,legacy=c", ""} {
		f.Add(s, "scsi0", "virtio0")
	}
	f.Fuzz(func(t *testing.T, boot, old, repl string) {
		devs, order := bootDevices(boot), bootOrder(boot)
		if strings.Count(boot, "order=") != 1 || strings.ContainsAny(old+repl, ",;=") || old == "" || repl == "" {
			return // PVE refuses a repeated key, and device names hold no separators
		}
		if !slices.Equal(devs, order) && (len(devs) != 0 || len(order) != 0) {
			if !strings.HasPrefix(boot, "order=") && !strings.Contains(boot, ",order=") {
				return // "order=" inside another value
			}
			t.Fatalf("boot %q: bootDevices %q, bootOrder %q", boot, devs, order)
		}
		out := bootOrderWith(boot, old, repl)
		if !slices.Contains(devs, old) {
			if out != "" {
				t.Fatalf("bootOrderWith(%q, %q, %q) = %q without %s in the order", boot, old, repl, out, old)
			}
			return
		}
		want := slices.Clone(devs)
		for i := range want {
			if want[i] == old {
				want[i] = repl
			}
		}
		if got := bootDevices(out); !slices.Equal(got, want) {
			t.Fatalf("bootOrderWith(%q, %q, %q) = %q: devices %q, want %q", boot, old, repl, out, got, want)
		}
	})
}
