package pvesim

import (
	"maps"
	"regexp"
	"strings"
	"sync"
)

// Caches of what the simulator otherwise rebuilds per request: a plan of
// a few hundred VMs parses every VM's drives in each /cluster/resources
// row, and compiling a format's regexps dominated that.

// compiledPatterns holds the anchored regexps of psKey.matching by
// pattern; patterns are constants of the code, so the map stays small.
var compiledPatterns sync.Map // string -> *regexp.Regexp

func anchoredRegexp(re string) *regexp.Regexp {
	if v, ok := compiledPatterns.Load(re); ok {
		return v.(*regexp.Regexp)
	}
	c := regexp.MustCompile(`^(?:` + re + `)$`)
	v, _ := compiledPatterns.LoadOrStore(re, c)
	return v.(*regexp.Regexp)
}

// driveFormats holds driveFormat's result per bus (and for efidisk0 and
// tpmstate0, which have their own): it depends on nothing else, and
// parsePropertyString only reads it.
var driveFormats sync.Map // string -> psFormat

func cachedDriveFormat(key string) psFormat {
	ck := key
	if key != "efidisk0" && key != "tpmstate0" {
		bus, _ := splitIndexed(key)
		switch bus {
		case "ide", "sata", "scsi", "virtio":
			ck = bus
		default:
			return driveFormat(key) // not a drive key: not worth keeping
		}
	}
	if v, ok := driveFormats.Load(ck); ok {
		return v.(psFormat)
	}
	v, _ := driveFormats.LoadOrStore(ck, driveFormat(key))
	return v.(psFormat)
}

// parsedStrings memoizes parsePropertyString for formats that never
// change (package-level ones, or driveFormat's, which depends on the key
// alone): the same config values are parsed again by every read of every
// VM. Values are strings and ints, so a shallow copy keeps callers free to
// change what they get.
var parsedStrings struct {
	sync.Mutex
	m map[string]parsedString
}

type parsedString struct {
	m   map[string]any
	msg string
}

// parsedStringsMax bounds the cache; past it, it starts over.
const parsedStringsMax = 1 << 14

// parseFixedPropertyString is parsePropertyString(f, path, data) for a
// format f that tag names uniquely and that is never modified.
func parseFixedPropertyString(tag string, f psFormat, path, data string) (map[string]any, string) {
	m, msg := parseFixedShared(tag, f, path, data)
	return maps.Clone(m), msg
}

// parseFixedShared is parseFixedPropertyString without the copy: the
// caller must not change the map.
func parseFixedShared(tag string, f psFormat, path, data string) (map[string]any, string) {
	ck := tag + "\x00" + path + "\x00" + data
	parsedStrings.Lock()
	e, ok := parsedStrings.m[ck]
	parsedStrings.Unlock()
	if !ok {
		e.m, e.msg = parsePropertyString(f, path, data)
		parsedStrings.Lock()
		if parsedStrings.m == nil || len(parsedStrings.m) >= parsedStringsMax {
			parsedStrings.m = map[string]parsedString{}
		}
		parsedStrings.m[ck] = e
		parsedStrings.Unlock()
	}
	return e.m, e.msg
}

// parseDriveShared is parseDrive for callers that only read the drive.
func parseDriveShared(key, v string) (drive, string) {
	if strings.HasPrefix(key, "unused") {
		return parseDrive(key, v)
	}
	m, msg := parseFixedShared("drive", cachedDriveFormat(key), key, v)
	return drive(m), msg
}
