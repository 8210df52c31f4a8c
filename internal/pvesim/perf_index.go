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

// memo caches a pure function's results by key: the two package-level
// caches (not registries: what they hold depends only on the key).
type memo[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

func (c *memo[K, V]) get(k K, compute func() V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m[k]; ok {
		return v
	}
	if c.m == nil {
		c.m = map[K]V{}
	}
	v := compute()
	c.m[k] = v
	return v
}

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
	m, msg := parseFixedShared("stored-drive", cachedStoredDriveFormat(key), key, v)
	return drive(m), msg
}

// bootDiskSizes memoizes bootDiskSize by what it reads: the boot property
// and the drive entries. Every /cluster/resources row needs it.
var bootDiskSizes struct {
	sync.Mutex
	m map[string]int64
}

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
	ck := sb.String()
	bootDiskSizes.Lock()
	n, ok := bootDiskSizes.m[ck]
	bootDiskSizes.Unlock()
	if ok {
		return n
	}
	n = vm.bootDiskSize()
	bootDiskSizes.Lock()
	if bootDiskSizes.m == nil || len(bootDiskSizes.m) >= parsedStringsMax {
		bootDiskSizes.m = map[string]int64{}
	}
	bootDiskSizes.m[ck] = n
	bootDiskSizes.Unlock()
	return n
}

// memorySizes memoizes memoryMiB by the memory property.
var memorySizes struct {
	sync.Mutex
	m map[string]int64
}

func memoryMiBCached(v string) int64 {
	memorySizes.Lock()
	n, ok := memorySizes.m[v]
	memorySizes.Unlock()
	if ok {
		return n
	}
	n = memoryMiB(v)
	memorySizes.Lock()
	if memorySizes.m == nil || len(memorySizes.m) >= parsedStringsMax {
		memorySizes.m = map[string]int64{}
	}
	memorySizes.m[v] = n
	memorySizes.Unlock()
	return n
}
