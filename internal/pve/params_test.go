package pve

import "testing"

func TestParamsEncode(t *testing.T) {
	p := Params{}
	p.Set("zeta", "a b")
	p.SetBool("on", true)
	p.SetBool("off", false)
	p.SetInt("mtu", 9000)
	p.Delete("mtu", "comments", "mtu", " ")
	p.Delete("comments", "bridge_vids")
	got := p.Encode()
	want := "delete=mtu%2Ccomments%2Cbridge_vids&mtu=9000&off=0&on=1&zeta=a+b"
	if got != want {
		t.Fatalf("Encode() = %q, want %q", got, want)
	}
	if (Params(nil)).Encode() != "" {
		t.Fatal("nil Params must encode to empty string")
	}
	if PathEscape("a/b c") != "a%2Fb%20c" {
		t.Fatalf("PathEscape = %q", PathEscape("a/b c"))
	}
}
