// Package isofs builds and reads tiny ISO 9660 images in memory.
//
// The provider needs such an image as answer media for Proxmox VE's automated
// installer: the installer looks for a filesystem labelled PROXMOX-AIS
// (through /dev/disk/by-label) and reads answer.toml from its root. The same
// kind of image serves as a cloud-init NoCloud "CIDATA" disk. No library for
// writing ISO 9660 is served by the Go module proxy, and the subset needed here
// (one root directory, a handful of small files) is small enough to write
// directly against ECMA-119.
//
// Images carry no Rock Ridge or Joliet extensions, so names are plain
// ISO 9660 level 2 identifiers: up to 30 characters, stored upper case with a
// ";1" version suffix. Linux's iso9660 driver (default map=normal) shows them
// lower case with the suffix dropped, so "ANSWER.TOML;1" reads as
// "answer.toml". Output is byte-for-byte deterministic: timestamps are fixed
// and directory records are sorted.
package isofs

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
)

// Limits keep images tiny; answer files and cloud-init data are kilobytes.
const (
	maxLabelLen    = 32
	maxFileNameLen = 30 // ISO 9660 level 2 limit, before the ";1" suffix
	maxFiles       = 64
	maxTotalSize   = 16 << 20
)

const (
	sectorSize = 2048

	// Fixed layout: 16 system-area sectors, then the descriptors, the two
	// path tables and the root directory.
	pvdSector         = 16
	terminatorSector  = 17
	lPathTableSector  = 18
	mPathTableSector  = 19
	rootDirSector     = 20
	rootPathTableSize = 10 // one entry: 8-byte header, 1-byte id, 1 pad byte

	dirRecordHeaderLen = 33
	flagDirectory      = 0x02
	flagMultiExtent    = 0x80

	applicationID = "TERRAFORM-PROVIDER-PVE"
)

// recordingDate is 2000-01-01 00:00:00 UTC in the 7-byte directory record
// form (years since 1900, month, day, hour, minute, second, GMT offset); a
// fixed date keeps images reproducible.
var recordingDate = [7]byte{100, 1, 1, 0, 0, 0, 0}

// unsetDateTime is the 17-byte volume descriptor date meaning "not
// specified": sixteen ASCII zeros and a zero GMT offset.
var unsetDateTime = []byte("0000000000000000\x00")

// CheckLabel reports whether label can be a volume identifier. ISO 9660 allows
// only d-characters (A-Z, 0-9, '_'); '-' is accepted too because the PVE
// installer's label PROXMOX-AIS needs it and Linux and blkid take it as is.
func CheckLabel(label string) error {
	if n := len(label); n < 1 || n > maxLabelLen {
		return fmt.Errorf("isofs: label %q is %d characters long; it must be 1 to %d", label, n, maxLabelLen)
	}
	for _, c := range []byte(label) {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return fmt.Errorf("isofs: label %q contains %q; only upper-case letters A-Z, digits 0-9, '_' and '-' are allowed", label, c)
		}
	}
	return nil
}

// CheckFileName reports whether name can be stored so that Linux shows it
// unchanged. Names are lower case because Linux lower-cases ISO 9660 names; a
// trailing '.' is refused because Linux drops it, so "a." would read as "a".
func CheckFileName(name string) error {
	if n := len(name); n < 1 || n > maxFileNameLen {
		return fmt.Errorf("isofs: file name %q is %d characters long; it must be 1 to %d", name, n, maxFileNameLen)
	}
	for _, c := range []byte(name) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '.' && c != '_' && c != '-' {
			return fmt.Errorf("isofs: file name %q contains %q; only lower-case letters a-z, digits 0-9, '.', '_' and '-' are allowed", name, c)
		}
	}
	switch {
	case strings.Count(name, ".") > 1:
		return fmt.Errorf("isofs: file name %q has more than one '.'; at most one is allowed", name)
	case name[0] == '.':
		return fmt.Errorf("isofs: file name %q starts with '.'; it must not", name)
	case name[len(name)-1] == '.':
		return fmt.Errorf("isofs: file name %q ends with '.'; it must not", name)
	}
	return nil
}

// isoFileID turns a checked name into its on-disc identifier. ECMA-119 7.5.1
// requires the '.' separator even without an extension, so "user-data"
// becomes "USER-DATA.;1"; Linux drops the trailing ".;1" again.
func isoFileID(name string) string {
	id := strings.ToUpper(name)
	if !strings.Contains(id, ".") {
		id += "."
	}
	return id + ";1"
}

// lessISO orders identifiers as ECMA-119 9.3 asks: by name, then by
// extension, each compared as if padded with spaces. Plain byte order
// differs, e.g. "A.B" must precede "A-C.D".
func lessISO(a, b string) bool {
	aName, aExt, _ := strings.Cut(strings.TrimSuffix(a, ";1"), ".")
	bName, bExt, _ := strings.Cut(strings.TrimSuffix(b, ";1"), ".")
	if c := compareSpacePadded(aName, bName); c != 0 {
		return c < 0
	}
	return compareSpacePadded(aExt, bExt) < 0
}

func compareSpacePadded(a, b string) int {
	for i := 0; i < max(len(a), len(b)); i++ {
		ca, cb := byte(' '), byte(' ')
		if i < len(a) {
			ca = a[i]
		}
		if i < len(b) {
			cb = b[i]
		}
		if ca != cb {
			return int(ca) - int(cb)
		}
	}
	return 0
}

type fileEntry struct {
	id      string
	content []byte
	extent  uint32
}

// Build returns an ISO 9660 image whose volume identifier is label and whose
// root directory holds files (name -> content).
func Build(label string, files map[string][]byte) ([]byte, error) {
	if err := CheckLabel(label); err != nil {
		return nil, err
	}
	if len(files) > maxFiles {
		return nil, fmt.Errorf("isofs: %d files given; at most %d are allowed", len(files), maxFiles)
	}
	total := 0
	entries := make([]fileEntry, 0, len(files))
	for name, content := range files {
		if err := CheckFileName(name); err != nil {
			return nil, err
		}
		total += len(content)
		entries = append(entries, fileEntry{id: isoFileID(name), content: content})
	}
	if total > maxTotalSize {
		return nil, fmt.Errorf("isofs: files total %d bytes; at most %d (16 MiB) are allowed", total, maxTotalSize)
	}
	sort.Slice(entries, func(i, j int) bool { return lessISO(entries[i].id, entries[j].id) })

	// The root directory's size depends only on its record lengths, so
	// lay it out first; the file extents follow it.
	recordLens := []int{dirRecordLen(1), dirRecordLen(1)} // "." and ".."
	for _, e := range entries {
		recordLens = append(recordLens, dirRecordLen(len(e.id)))
	}
	offsets, rootSectors := layoutRecords(recordLens)
	next := uint32(rootDirSector + rootSectors)
	for i := range entries {
		// Empty files get no extent; location 0 with length 0 is what
		// ECMA-119 readers expect for them.
		if len(entries[i].content) == 0 {
			continue
		}
		entries[i].extent = next
		next += uint32(sectorsFor(len(entries[i].content)))
	}
	volumeSectors := next
	rootSize := uint32(rootSectors * sectorSize)

	img := make([]byte, int(volumeSectors)*sectorSize)
	writePVD(sector(img, pvdSector), label, volumeSectors, rootSize)
	terminator := sector(img, terminatorSector)
	terminator[0] = 255
	copy(terminator[1:6], "CD001")
	terminator[6] = 1
	writePathTable(sector(img, lPathTableSector), binary.LittleEndian)
	writePathTable(sector(img, mPathTableSector), binary.BigEndian)

	dir := img[rootDirSector*sectorSize : (rootDirSector+rootSectors)*sectorSize]
	records := [][]byte{
		dirRecord([]byte{0}, rootDirSector, rootSize, flagDirectory),
		dirRecord([]byte{1}, rootDirSector, rootSize, flagDirectory), // the root is its own parent
	}
	for _, e := range entries {
		records = append(records, dirRecord([]byte(e.id), e.extent, uint32(len(e.content)), 0))
	}
	for i, r := range records {
		copy(dir[offsets[i]:], r)
	}
	for _, e := range entries {
		copy(img[int(e.extent)*sectorSize:], e.content)
	}
	return img, nil
}

func sector(img []byte, n int) []byte { return img[n*sectorSize : (n+1)*sectorSize] }

func sectorsFor(size int) int { return (size + sectorSize - 1) / sectorSize }

// layoutRecords places directory records of the given lengths one after
// another and returns each one's offset and the sectors they take. A
// record must not cross a sector boundary; the zero tail of a sector tells
// readers to continue at the next one.
func layoutRecords(lens []int) ([]int, int) {
	offsets := make([]int, len(lens))
	off := 0
	for i, n := range lens {
		if off%sectorSize+n > sectorSize {
			off += sectorSize - off%sectorSize
		}
		offsets[i] = off
		off += n
	}
	return offsets, sectorsFor(off)
}

// dirRecordLen is the length of a directory record; it is padded to even.
func dirRecordLen(idLen int) int {
	return dirRecordHeaderLen + idLen + (1 - idLen%2)
}

func dirRecord(id []byte, extent, size uint32, flags byte) []byte {
	r := make([]byte, dirRecordLen(len(id)))
	r[0] = byte(len(r))
	putBoth32(r[2:10], extent)
	putBoth32(r[10:18], size)
	copy(r[18:25], recordingDate[:])
	r[25] = flags
	putBoth16(r[28:32], 1) // volume sequence number
	r[32] = byte(len(id))
	copy(r[33:], id)
	return r
}

func writePVD(d []byte, label string, volumeSectors, rootSize uint32) {
	d[0] = 1
	copy(d[1:6], "CD001")
	d[6] = 1
	putPadded(d[8:40], "")     // system identifier
	putPadded(d[40:72], label) // volume identifier
	putBoth32(d[80:88], volumeSectors)
	putBoth16(d[120:124], 1) // volume set size
	putBoth16(d[124:128], 1) // volume sequence number
	putBoth16(d[128:132], sectorSize)
	putBoth32(d[132:140], rootPathTableSize)
	binary.LittleEndian.PutUint32(d[140:144], lPathTableSector)
	binary.BigEndian.PutUint32(d[148:152], mPathTableSector)
	copy(d[156:190], dirRecord([]byte{0}, rootDirSector, rootSize, flagDirectory))
	putPadded(d[190:318], "") // volume set identifier
	putPadded(d[318:446], "") // publisher
	putPadded(d[446:574], "") // data preparer
	putPadded(d[574:702], applicationID)
	putPadded(d[702:739], "") // copyright file
	putPadded(d[739:776], "") // abstract file
	putPadded(d[776:813], "") // bibliographic file
	for off := 813; off < 881; off += len(unsetDateTime) {
		copy(d[off:], unsetDateTime) // creation, modification, expiration, effective
	}
	d[881] = 1 // file structure version
}

func writePathTable(d []byte, order binary.ByteOrder) {
	d[0] = 1 // identifier length; the root's identifier is a single 0 byte
	order.PutUint32(d[2:6], rootDirSector)
	order.PutUint16(d[6:8], 1) // parent directory number: the root itself
}

func putPadded(dst []byte, s string) {
	n := copy(dst, s)
	for i := n; i < len(dst); i++ {
		dst[i] = ' '
	}
}

// putBoth32 and putBoth16 write ECMA-119 "both-byte order" fields: the value
// little-endian, then again big-endian.
func putBoth32(b []byte, v uint32) {
	binary.LittleEndian.PutUint32(b[0:4], v)
	binary.BigEndian.PutUint32(b[4:8], v)
}

func putBoth16(b []byte, v uint16) {
	binary.LittleEndian.PutUint16(b[0:2], v)
	binary.BigEndian.PutUint16(b[2:4], v)
}

func both32(b []byte) (uint32, bool) {
	le := binary.LittleEndian.Uint32(b[0:4])
	return le, le == binary.BigEndian.Uint32(b[4:8])
}

func both16(b []byte) (uint16, bool) {
	le := binary.LittleEndian.Uint16(b[0:2])
	return le, le == binary.BigEndian.Uint16(b[2:4])
}

type dirRec struct {
	length uint8
	extent uint32
	size   uint32
	flags  byte
	id     []byte
}

func parseDirRecord(b []byte, where string) (dirRec, error) {
	n := int(b[0])
	if n < dirRecordHeaderLen+1 || n > len(b) {
		return dirRec{}, fmt.Errorf("isofs: %s: record length %d does not fit in %d bytes", where, n, len(b))
	}
	idLen := int(b[32])
	if idLen == 0 || dirRecordHeaderLen+idLen > n {
		return dirRec{}, fmt.Errorf("isofs: %s: identifier length %d does not fit in record length %d", where, idLen, n)
	}
	extent, ok1 := both32(b[2:10])
	size, ok2 := both32(b[10:18])
	if !ok1 || !ok2 {
		return dirRec{}, fmt.Errorf("isofs: %s: little- and big-endian extent fields differ", where)
	}
	return dirRec{length: uint8(n), extent: extent, size: size, flags: b[25], id: b[33 : 33+idLen]}, nil
}

// extentData returns the bytes of an extent, or an error if it lies outside
// the image.
func extentData(img []byte, r dirRec, what string) ([]byte, error) {
	if r.size == 0 {
		return []byte{}, nil
	}
	start := uint64(r.extent) * sectorSize
	end := start + uint64(r.size)
	// Extents cannot start in the system area or at the first descriptor.
	if r.extent <= pvdSector || end > uint64(len(img)) {
		return nil, fmt.Errorf("isofs: %s: extent at sector %d, %d bytes long, lies outside the data area of the %d-byte image", what, r.extent, r.size, len(img))
	}
	return img[start:end], nil
}

// Read parses an image made by Build, or any plain ISO 9660 image with files
// in the root directory only, and returns its label and files. Names are
// shown as Linux shows them: lower case, without ";1" and a trailing '.'.
func Read(img []byte) (label string, files map[string][]byte, err error) {
	pvd, err := findPVD(img)
	if err != nil {
		return "", nil, err
	}
	if bs, ok := both16(pvd[128:132]); !ok || bs != sectorSize {
		return "", nil, fmt.Errorf("isofs: logical block size is %d; only %d is supported", bs, sectorSize)
	}
	volumeSectors, ok := both32(pvd[80:88])
	if !ok {
		return "", nil, fmt.Errorf("isofs: little- and big-endian volume space size differ")
	}
	if uint64(volumeSectors)*sectorSize > uint64(len(img)) {
		return "", nil, fmt.Errorf("isofs: volume space size is %d sectors but the image holds only %d bytes", volumeSectors, len(img))
	}
	root, err := parseDirRecord(pvd[156:190], "root directory record")
	if err != nil {
		return "", nil, err
	}
	if root.flags&flagDirectory == 0 || len(root.id) != 1 || root.id[0] != 0 {
		return "", nil, fmt.Errorf("isofs: root directory record is not a directory named \\x00")
	}
	dir, err := extentData(img, root, "root directory")
	if err != nil {
		return "", nil, err
	}

	label = strings.TrimRight(string(pvd[40:72]), " \x00")
	files = map[string][]byte{}
	for off := 0; off < len(dir); {
		if dir[off] == 0 {
			// Zero padding: the next record starts in the next sector.
			off += sectorSize - off%sectorSize
			continue
		}
		end := min(len(dir), off+sectorSize-off%sectorSize) // records never cross sectors
		r, err := parseDirRecord(dir[off:end], fmt.Sprintf("root directory record at offset %d", off))
		if err != nil {
			return "", nil, err
		}
		off += int(r.length)
		if len(r.id) == 1 && (r.id[0] == 0 || r.id[0] == 1) {
			continue // "." and ".."
		}
		name := linuxName(r.id)
		switch {
		case r.flags&flagDirectory != 0:
			return "", nil, fmt.Errorf("isofs: %q is a directory; only files in the root directory are supported", name)
		case r.flags&flagMultiExtent != 0:
			return "", nil, fmt.Errorf("isofs: file %q spans several extents; that is not supported", name)
		}
		if _, dup := files[name]; dup {
			return "", nil, fmt.Errorf("isofs: file %q appears twice in the root directory", name)
		}
		data, err := extentData(img, r, fmt.Sprintf("file %q", name))
		if err != nil {
			return "", nil, err
		}
		files[name] = bytes.Clone(data)
	}
	return label, files, nil
}

// findPVD walks the volume descriptor set from sector 16; boot records or
// supplementary descriptors may precede the primary one in other images.
func findPVD(img []byte) ([]byte, error) {
	for n := pvdSector; ; n++ {
		if (n+1)*sectorSize > len(img) {
			return nil, fmt.Errorf("isofs: image is %d bytes; no primary volume descriptor found before its end", len(img))
		}
		d := sector(img, n)
		if string(d[1:6]) != "CD001" {
			return nil, fmt.Errorf("isofs: sector %d is not a volume descriptor (no \"CD001\" magic)", n)
		}
		if d[6] != 1 {
			return nil, fmt.Errorf("isofs: volume descriptor at sector %d has version %d; want 1", n, d[6])
		}
		switch d[0] {
		case 1:
			return d, nil
		case 255:
			return nil, fmt.Errorf("isofs: volume descriptor set ends at sector %d without a primary volume descriptor", n)
		}
	}
}

// linuxName maps an identifier the way Linux's iso9660 driver (map=normal)
// does: lower case, version suffix dropped, then a trailing '.' dropped.
func linuxName(id []byte) string {
	s := strings.ToLower(string(id))
	if i := strings.LastIndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSuffix(s, ".")
}
