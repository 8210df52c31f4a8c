package nodeexec

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// hostileValues are arguments a careless client would let a shell
// interpret.
var hostileValues = []string{
	"", " ", "two words", "tab\there", "new\nline", "trailing\n",
	"'", "''", `"`, `it's`, `"double" and 'single'`,
	";", "a; rm -rf /", "$(id)", "`id`", "${HOME}", "$HOME", "$",
	"a|b", "a&b", "a && b", "a > /tmp/x", "<in", "(sub)", "{a,b}", "*", "?", "[ab]", "~", "~root", "#comment",
	"back\\slash", `\`, `\'`, "!", "!!", "-n", "--", "x=y", "ünïcödé", "\x01ctl",
}

// Every value passes through a real POSIX shell as exactly one argument:
// the proof that quoteArg is right does not depend on the simulator.
func TestQuoteArgRoundTripsThroughRealShells(t *testing.T) {
	for _, shell := range []string{"sh", "bash", "dash"} {
		path, err := exec.LookPath(shell)
		if err != nil {
			continue
		}
		t.Run(shell, func(t *testing.T) {
			words := make([]string, len(hostileValues))
			for i, v := range hostileValues {
				words[i] = quoteArg(v)
			}
			// printf is a builtin of every POSIX shell; \0 separates the
			// arguments it received.
			line := `printf '%s\0' ` + strings.Join(words, " ")
			out, err := exec.Command(path, "-c", line).Output()
			if err != nil {
				t.Fatalf("%s -c %q: %v", shell, line, err)
			}
			got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
			if len(got) != len(hostileValues) {
				t.Fatalf("%s split %d values into %d arguments: %q", shell, len(hostileValues), len(got), got)
			}
			for i := range got {
				if got[i] != hostileValues[i] {
					t.Errorf("%s: argument %d = %q, want %q (quoted as %s)", shell, i, got[i], hostileValues[i], words[i])
				}
			}
		})
	}
}

func TestQuoteArgKeepsPlainWordsReadable(t *testing.T) {
	for in, want := range map[string]string{
		"osd_memory_target":  "osd_memory_target",
		"/etc/pve/ceph.conf": "/etc/pve/ceph.conf",
		"osd.3":              "osd.3",
		"8589934592":         "8589934592",
		"":                   "''",
		"a b":                "'a b'",
		"it's":               `'it'\''s'`,
		"~":                  "'~'",
	} {
		if got := quoteArg(in); got != want {
			t.Errorf("quoteArg(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestCommandLineUsesSudoForNonRoot(t *testing.T) {
	c := Cmd("systemctl", "restart", "ceph-osd@1.service")
	if got, want := commandLine(c, false), "systemctl restart ceph-osd@1.service"; got != want {
		t.Errorf("root: %q, want %q", got, want)
	}
	if got, want := commandLine(c, true), "sudo -n -- systemctl restart ceph-osd@1.service"; got != want {
		t.Errorf("non-root: %q, want %q", got, want)
	}
}

func TestCommandValidate(t *testing.T) {
	if err := Cmd("bash", "-c", "id").validate(); err == nil || !strings.Contains(err.Error(), `program "bash" is not allowed`) {
		t.Errorf("bash: %v", err)
	}
	if err := Cmd("/usr/bin/ceph", "-s").validate(); err == nil {
		t.Error("a path instead of an allowed name was accepted")
	}
	if err := Cmd("cat", "a\x00b").validate(); err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("NUL: %v", err)
	}
	err := Cmd("ceph").Secret("pw\x00secret").validate()
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("a secret with NUL must be refused without showing it: %v", err)
	}
	if err := Cmd("ceph", "config", "set", "osd", "osd_memory_target", "8589934592").validate(); err != nil {
		t.Error(err)
	}
}

func TestSecretsNeverPrint(t *testing.T) {
	s := Secret("hunter2-very-secret")
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%10s", "%T"} {
		out := fmt.Sprintf(verb, s)
		if strings.Contains(out, "hunter2") || strings.Contains(out, fmt.Sprintf("%x", "hunter2")) {
			t.Errorf("fmt %s printed the secret: %s", verb, out)
		}
	}
	c := Cmd("ceph", "config-key", "set", "k").Secret(s).SecretInput("stdin-secret-line-1\nline2")
	if str := c.String(); strings.Contains(str, "hunter2") || !strings.Contains(str, redacted) {
		t.Errorf("String() = %q", str)
	}
	out := scrub("echo hunter2-very-secret and stdin-secret-line-1", c.secrets())
	if strings.Contains(out, "hunter2") || strings.Contains(out, "stdin-secret") {
		t.Errorf("scrub left a secret: %q", out)
	}
}

func TestShortenKeepsHeadAndTail(t *testing.T) {
	long := "HEAD" + strings.Repeat("x", 10000) + "TAIL"
	s := shorten(long)
	if len(s) > maxShown+100 || !strings.HasPrefix(s, "HEAD") || !strings.HasSuffix(s, "TAIL") || !strings.Contains(s, "bytes omitted") {
		t.Errorf("shorten: %d bytes, %q...%q", len(s), s[:10], s[len(s)-10:])
	}
	if shorten("short") != "short" {
		t.Error("short text changed")
	}
}

func TestCapBufferDropsBeyondLimit(t *testing.T) {
	var b capBuffer
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for i := 0; i < 20; i++ {
		_, _ = b.Write(chunk)
	}
	if len(b.Bytes()) != maxOutput || !b.truncated {
		t.Errorf("kept %d bytes, truncated=%v", len(b.Bytes()), b.truncated)
	}
}

func TestCheckPath(t *testing.T) {
	for _, bad := range []string{"etc/x", "/etc/../root/x", "/", "/etc/x\n", "/etc//x", "/etc/x/"} {
		if CheckPath(bad) == nil {
			t.Errorf("CheckPath(%q) accepted", bad)
		}
	}
	if err := CheckPath("/etc/systemd/system/x.service.d/override.conf"); err != nil {
		t.Error(err)
	}
}
