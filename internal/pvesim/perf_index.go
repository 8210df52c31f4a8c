package pvesim

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Caches of what the simulator otherwise rebuilds per request: a plan of
// a few hundred VMs parses every VM's drives in each /cluster/resources
// row, and compiling a format's regexps dominated that.

// compiledPatterns holds the anchored regexps of psKey.matching by
// pattern; patterns are constants of the code, so the map stays small.
var compiledPatterns memo[string, *regexp.Regexp]

func anchoredRegexp(re string) *regexp.Regexp {
	return compiledPatterns.get(re, func() *regexp.Regexp { return regexp.MustCompile(`^(?:` + re + `)$`) })
}

// memo caches a pure function's results by key (not a registry: what it
// holds depends only on the key). max bounds it: past it, it starts over;
// 0 leaves it unbounded for keys that are constants of the code. compute
// runs outside the lock, so it may use other memos, or this one.
type memo[K comparable, V any] struct {
	mu  sync.Mutex
	m   map[K]V
	max int
}

func (c *memo[K, V]) get(k K, compute func() V) V {
	c.mu.Lock()
	v, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return v
	}
	v = compute()
	c.mu.Lock()
	if c.m == nil || (c.max > 0 && len(c.m) >= c.max) {
		c.m = map[K]V{}
	}
	c.m[k] = v
	c.mu.Unlock()
	return v
}

// memoMax bounds the memos whose keys come from configs.
const memoMax = 1 << 14

// driveFormats holds driveFormat's result per bus (and for efidisk0 and
// tpmstate0, which have their own): it depends on nothing else, and
// parsePropertyString only reads it.
var driveFormats memo[string, psFormat]

func cachedDriveFormat(key string) psFormat { return cachedFormatOf(key, "", driveFormat) }

// cachedStoredDriveFormat is storedDriveFormat, kept per bus the same way.
func cachedStoredDriveFormat(key string) psFormat {
	return cachedFormatOf(key, "stored/", storedDriveFormat)
}

func cachedFormatOf(key, prefix string, build func(string) psFormat) psFormat {
	ck := key
	if key != "efidisk0" && key != "tpmstate0" {
		bus, _ := splitIndexed(key)
		switch bus {
		case "ide", "sata", "scsi", "virtio":
			ck = bus
		default:
			return build(key) // not a drive key: not worth keeping
		}
	}
	return driveFormats.get(prefix+ck, func() psFormat { return build(key) })
}

// parsedStrings memoizes parsePropertyString for formats that never
// change (package-level ones, or driveFormat's, which depends on the key
// alone): the same config values are parsed again by every read of every
// VM. Values are strings and ints, so a shallow copy keeps callers free to
// change what they get.
var parsedStrings = memo[string, parsedString]{max: memoMax}

type parsedString struct {
	m   map[string]any
	msg string
}

// parseFixedPropertyString is parsePropertyString(f, path, data) for a
// format f that tag names uniquely and that is never modified.
func parseFixedPropertyString(tag string, f psFormat, path, data string) (map[string]any, string) {
	m, msg := parseFixedShared(tag, f, path, data)
	return maps.Clone(m), msg
}

// parseFixedShared is parseFixedPropertyString without the copy: the
// caller must not change the map.
func parseFixedShared(tag string, f psFormat, path, data string) (map[string]any, string) {
	e := parsedStrings.get(tag+"\x00"+path+"\x00"+data, func() parsedString {
		m, msg := parsePropertyString(f, path, data)
		return parsedString{m, msg}
	})
	return e.m, e.msg
}

// parseDriveShared is parseDrive for callers that only read the drive.
func parseDriveShared(key, v string) (drive, string) {
	if strings.HasPrefix(key, "unused") {
		return parseDrive(key, v)
	}
	m, msg := parseFixedShared("stored-drive", cachedStoredDriveFormat(key), key, v)
	return drive(m), msg
}

// bootDiskSizes memoizes bootDiskSize by what it reads: the boot property
// and the drive entries. Every /cluster/resources row needs it.
var bootDiskSizes = memo[string, int64]{max: memoMax}

// bootDiskSizeCached is vm.bootDiskSize().
func (vm *qemuVM) bootDiskSizeCached() int64 {
	conf := vm.Config
	keys := make([]string, 0, 8)
	for k := range conf {
		if isDriveKey(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var sb strings.Builder
	// Length-prefixed, so that no two configs give the same key.
	put := func(s string) {
		sb.WriteString(strconv.Itoa(len(s)))
		sb.WriteByte(':')
		sb.WriteString(s)
	}
	put(conf["boot"])
	put(conf["bootdisk"])
	for _, k := range keys {
		put(k)
		put(conf[k])
	}
	return bootDiskSizes.get(sb.String(), vm.bootDiskSize)
}

// memorySizes memoizes memoryMiB by the memory property.
var memorySizes = memo[string, int64]{max: memoMax}

func memoryMiBCached(v string) int64 {
	return memorySizes.get(v, func() int64 { return memoryMiB(v) })
}
