package isofs

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

func answerFiles() map[string][]byte {
	return map[string][]byte{
		"answer.toml": []byte("[global]\nkeyboard = \"en-us\"\ncountry = \"at\"\n"),
		"user-data":   []byte("#cloud-config\n"),
		"meta-data":   bytes.Repeat([]byte("m"), 5000), // spans three sectors
		"empty":       nil,
	}
}

func mustBuild(t *testing.T, label string, files map[string][]byte) []byte {
	t.Helper()
	img, err := Build(label, files)
	if err != nil {
		t.Fatalf("Build(%q): %v", label, err)
	}
	return img
}

func TestRoundTrip(t *testing.T) {
	files := answerFiles()
	label, got, err := Read(mustBuild(t, "PROXMOX-AIS", files))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if label != "PROXMOX-AIS" {
		t.Errorf("label = %q, want PROXMOX-AIS", label)
	}
	if len(got) != len(files) {
		t.Errorf("Read returned %d files, want %d: %q", len(got), len(files), slicesKeys(got))
	}
	for name, want := range files {
		content, ok := got[name]
		if !ok {
			t.Errorf("file %q missing after round trip; got %q", name, slicesKeys(got))
			continue
		}
		if !bytes.Equal(content, want) {
			t.Errorf("file %q = %q, want %q", name, content, want)
		}
	}
}

func slicesKeys(m map[string][]byte) []string { return slices.Sorted(maps.Keys(m)) }

func TestDeterministic(t *testing.T) {
	first := mustBuild(t, "CIDATA", answerFiles())
	// Map iteration order is random, so repeated builds exercise sorting.
	for i := 0; i < 20; i++ {
		if again := mustBuild(t, "CIDATA", answerFiles()); !bytes.Equal(first, again) {
			t.Fatalf("build %d differs from the first build", i)
		}
	}
}

func TestImageSize(t *testing.T) {
	img := mustBuild(t, "PROXMOX-AIS", answerFiles())
	volumeSectors := binary.LittleEndian.Uint32(img[0x8050:])
	if len(img) != int(volumeSectors)*2048 {
		t.Errorf("image is %d bytes, volume space size says %d sectors (%d bytes)", len(img), volumeSectors, volumeSectors*2048)
	}
	// 20 fixed sectors, 1 root directory sector, then answer.toml (1),
	// meta-data (3), user-data (1); the empty file takes none.
	if want := 20 + 1 + 1 + 3 + 1; int(volumeSectors) != want {
		t.Errorf("volume space size = %d sectors, want %d", volumeSectors, want)
	}
}

func TestHeaderBytes(t *testing.T) {
	img := mustBuild(t, "PROXMOX-AIS", answerFiles())
	if !bytes.Equal(img[:0x8000], make([]byte, 0x8000)) {
		t.Error("system area (first 16 sectors) is not all zeros")
	}
	if img[0x8000] != 1 || string(img[0x8001:0x8006]) != "CD001" || img[0x8006] != 1 {
		t.Errorf("PVD header = % x, want 01 'CD001' 01", img[0x8000:0x8007])
	}
	if img[0x8800] != 255 || string(img[0x8801:0x8806]) != "CD001" || img[0x8806] != 1 {
		t.Errorf("terminator header = % x, want ff 'CD001' 01", img[0x8800:0x8807])
	}
	if got, want := string(img[0x8028:0x8048]), "PROXMOX-AIS"+strings.Repeat(" ", 21); got != want {
		t.Errorf("volume identifier = %q, want %q", got, want)
	}
	le := binary.LittleEndian.Uint32(img[0x8050:])
	be := binary.BigEndian.Uint32(img[0x8054:])
	if le != be || le != 26 {
		t.Errorf("volume space size LE=%d BE=%d, want both 26", le, be)
	}
	if bs := binary.LittleEndian.Uint16(img[0x8080:]); bs != 2048 || binary.BigEndian.Uint16(img[0x8082:]) != 2048 {
		t.Errorf("logical block size = % x, want 2048 both-endian", img[0x8080:0x8084])
	}
	if got := string(img[0x8000+574 : 0x8000+574+22]); got != "TERRAFORM-PROVIDER-PVE" {
		t.Errorf("application identifier = %q", got)
	}
	if got := string(img[0x8000+813 : 0x8000+830]); got != "0000000000000000\x00" {
		t.Errorf("creation date = %q, want sixteen zeros and a zero offset", got)
	}
	// Path tables at sectors 18 (little-endian) and 19 (big-endian) name
	// the root directory at sector 20.
	if got := binary.LittleEndian.Uint32(img[18*2048+2:]); got != 20 {
		t.Errorf("L path table root extent = %d, want 20", got)
	}
	if got := binary.BigEndian.Uint32(img[19*2048+2:]); got != 20 {
		t.Errorf("M path table root extent = %d, want 20", got)
	}
	// Root record in the PVD: 34 bytes, directory, extent 20, one sector.
	root := img[0x8000+156 : 0x8000+190]
	if root[0] != 34 || root[25] != 2 || binary.LittleEndian.Uint32(root[2:]) != 20 ||
		binary.BigEndian.Uint32(root[14:]) != 2048 {
		t.Errorf("root directory record = % x", root)
	}
}

func TestFileRecords(t *testing.T) {
	img := mustBuild(t, "PROXMOX-AIS", answerFiles())
	dir := img[20*2048 : 21*2048]
	for _, want := range []string{"ANSWER.TOML;1", "USER-DATA.;1", "META-DATA.;1", "EMPTY.;1"} {
		i := bytes.Index(dir, []byte(want))
		if i < 33 {
			t.Errorf("identifier %q not found in the root directory", want)
			continue
		}
		rec := dir[i-33:]
		if int(rec[32]) != len(want) {
			t.Errorf("%s: identifier length %d, want %d", want, rec[32], len(want))
		}
		if rec[0]%2 != 0 {
			t.Errorf("%s: record length %d is odd", want, rec[0])
		}
		if got := rec[18:25]; !bytes.Equal(got, []byte{100, 1, 1, 0, 0, 0, 0}) {
			t.Errorf("%s: recording date = % x, want 2000-01-01", want, got)
		}
	}
	i := bytes.Index(dir, []byte("ANSWER.TOML;1")) - 33
	extent := binary.BigEndian.Uint32(dir[i+6:])
	size := binary.LittleEndian.Uint32(dir[i+10:])
	if got := img[extent*2048 : extent*2048+size]; !bytes.Equal(got, answerFiles()["answer.toml"]) {
		t.Errorf("answer.toml extent %d holds %q", extent, got)
	}
}

func TestDirectorySortOrder(t *testing.T) {
	// ECMA-119 9.3 compares names padded with spaces, so "a.b" sorts
	// before "a-c.d" although '.' > '-' in ASCII.
	img := mustBuild(t, "X", map[string][]byte{"a-c.d": []byte("1"), "a.b": []byte("2"), "b": nil})
	dir := string(img[20*2048 : 21*2048])
	ab, acd, b := strings.Index(dir, "A.B;1"), strings.Index(dir, "A-C.D;1"), strings.Index(dir, "B.;1")
	if ab < 0 || acd < 0 || b < 0 || ab >= acd || acd >= b {
		t.Errorf("record offsets A.B=%d A-C.D=%d B.=%d, want increasing", ab, acd, b)
	}
}

func TestMultiSectorRootDirectory(t *testing.T) {
	files := map[string][]byte{}
	for i := range 64 {
		files[fmt.Sprintf("%02d", i)+strings.Repeat("x", 28)] = []byte(fmt.Sprintf("file %d", i))
	}
	img := mustBuild(t, "CIDATA", files)

	// 68 records of 66 bytes; 31 fit a sector, so 3 sectors.
	rootSize := binary.LittleEndian.Uint32(img[0x8000+156+10:])
	if rootSize != 3*2048 {
		t.Errorf("root directory data length = %d, want %d", rootSize, 3*2048)
	}
	// No record may cross a sector boundary: walk as a reader does.
	dir := img[20*2048 : 20*2048+int(rootSize)]
	records := 0
	for off := 0; off < len(dir); {
		if dir[off] == 0 {
			off += 2048 - off%2048
			continue
		}
		if off/2048 != (off+int(dir[off])-1)/2048 {
			t.Fatalf("record at offset %d (length %d) crosses a sector boundary", off, dir[off])
		}
		off += int(dir[off])
		records++
	}
	if records != 66 {
		t.Errorf("walked %d records, want 66 (\".\", \"..\" and 64 files)", records)
	}

	_, got, err := Read(img)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if len(got) != 64 {
		t.Fatalf("Read returned %d files, want 64", len(got))
	}
	for name, want := range files {
		if !bytes.Equal(got[name], want) {
			t.Errorf("file %q = %q, want %q", name, got[name], want)
		}
	}
}

func TestRejectedLabels(t *testing.T) {
	for _, tc := range []struct{ label, wantErr string }{
		{"", `label "" is 0 characters long; it must be 1 to 32`},
		{strings.Repeat("A", 33), "is 33 characters long; it must be 1 to 32"},
		{"proxmox-ais", `label "proxmox-ais" contains 'p'; only upper-case letters A-Z`},
		{"CI DATA", `label "CI DATA" contains ' '`},
		{"A.B", `label "A.B" contains '.'`},
	} {
		err := CheckLabel(tc.label)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("CheckLabel(%q) = %v, want error containing %q", tc.label, err, tc.wantErr)
		}
		if _, err := Build(tc.label, nil); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("Build(%q) = %v, want error containing %q", tc.label, err, tc.wantErr)
		}
	}
	for _, ok := range []string{"PROXMOX-AIS", "CIDATA", "A", "X_1", strings.Repeat("Z", 32)} {
		if err := CheckLabel(ok); err != nil {
			t.Errorf("CheckLabel(%q) = %v, want nil", ok, err)
		}
	}
}

func TestRejectedFileNames(t *testing.T) {
	for _, tc := range []struct{ name, wantErr string }{
		{"", `file name "" is 0 characters long; it must be 1 to 30`},
		{strings.Repeat("a", 31), "is 31 characters long; it must be 1 to 30"},
		{"Answer.toml", `file name "Answer.toml" contains 'A'; only lower-case letters`},
		{"dir/answer.toml", `contains '/'`},
		{"a.b.c", `file name "a.b.c" has more than one '.'`},
		{".hidden", `file name ".hidden" starts with '.'`},
		{"trailing.", `file name "trailing." ends with '.'`},
	} {
		err := CheckFileName(tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("CheckFileName(%q) = %v, want error containing %q", tc.name, err, tc.wantErr)
		}
		if _, err := Build("X", map[string][]byte{tc.name: nil}); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("Build with file %q = %v, want error containing %q", tc.name, err, tc.wantErr)
		}
	}
	for _, ok := range []string{"answer.toml", "user-data", "meta_data", "a", strings.Repeat("b", 30)} {
		if err := CheckFileName(ok); err != nil {
			t.Errorf("CheckFileName(%q) = %v, want nil", ok, err)
		}
	}
}

func TestBuildLimits(t *testing.T) {
	tooMany := map[string][]byte{}
	for i := range 65 {
		tooMany[fmt.Sprintf("f%d", i)] = nil
	}
	if _, err := Build("X", tooMany); err == nil || !strings.Contains(err.Error(), "65 files given; at most 64") {
		t.Errorf("Build with 65 files = %v, want a file count error", err)
	}
	big := map[string][]byte{"a": make([]byte, 8<<20), "b": make([]byte, 8<<20+1)}
	if _, err := Build("X", big); err == nil || !strings.Contains(err.Error(), "at most 16777216 (16 MiB)") {
		t.Errorf("Build with 16 MiB + 1 byte = %v, want a size error", err)
	}
	exact := map[string][]byte{"a": make([]byte, 8<<20), "b": make([]byte, 8<<20)}
	if _, err := Build("X", exact); err != nil {
		t.Errorf("Build with exactly 16 MiB = %v, want nil", err)
	}
}

func TestReadRejectsDamagedImages(t *testing.T) {
	good := mustBuild(t, "PROXMOX-AIS", answerFiles())
	for _, tc := range []struct {
		name    string
		damage  func(img []byte) []byte
		wantErr string
	}{
		{"empty", func([]byte) []byte { return nil }, "no primary volume descriptor found"},
		{"bad magic", func(img []byte) []byte { copy(img[0x8001:], "CD002"); return img }, `sector 16 is not a volume descriptor (no "CD001" magic)`},
		{"bad version", func(img []byte) []byte { img[0x8006] = 2; return img }, "has version 2; want 1"},
		{"terminator first", func(img []byte) []byte { img[0x8000] = 255; return img }, "ends at sector 16 without a primary volume descriptor"},
		{"block size", func(img []byte) []byte { putBoth16(img[0x8080:], 512); return img }, "logical block size is 512"},
		{"truncated", func(img []byte) []byte { return img[:len(img)-2048] }, "volume space size is 26 sectors but the image holds only"},
		{"endian mismatch", func(img []byte) []byte { img[0x8057]++; return img }, "volume space size differ"},
		{"root not a directory", func(img []byte) []byte { img[0x8000+156+25] = 0; return img }, "root directory record is not a directory"},
		{"root outside image", func(img []byte) []byte { putBoth32(img[0x8000+156+2:], 1000); return img }, "root directory: extent at sector 1000"},
		{"root record length", func(img []byte) []byte { img[0x8000+156] = 40; return img }, "record length 40 does not fit"},
		{"file outside image", func(img []byte) []byte {
			i := bytes.Index(img[20*2048:21*2048], []byte("ANSWER.TOML;1")) + 20*2048 - 33
			putBoth32(img[i+2:], 500)
			return img
		}, `file "answer.toml": extent at sector 500`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Read(tc.damage(bytes.Clone(good)))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Read = %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestLinuxName(t *testing.T) {
	for id, want := range map[string]string{
		"ANSWER.TOML;1": "answer.toml",
		"USER-DATA.;1":  "user-data",
		"README":        "readme",
		"A.B;2":         "a.b",
	} {
		if got := linuxName([]byte(id)); got != want {
			t.Errorf("linuxName(%q) = %q, want %q", id, got, want)
		}
	}
}
