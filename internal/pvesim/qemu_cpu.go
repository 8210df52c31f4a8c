package pvesim

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The `cpu` option after qemu-server PVE/QemuServer/CPUConfig.pm and
// CPUFlags.pm: the property string of format pve-vm-cpu-conf, then its
// validator validate_vm_cpu_conf, whose die texts check_prop wraps as
// "invalid format - <text>".

// qemuCPUModels are the models of CPUConfig.pm's built-in list (the one
// used when QEMU ships no cpu-models-*.json), x86_64 and aarch64, and
// `host`, which exists for the host's architecture.
var qemuCPUModels = []string{
	"486", "pentium", "pentium2", "pentium3", "coreduo", "core2duo", "Conroe", "Penryn", "Nehalem",
	"Nehalem-IBRS", "Westmere", "Westmere-IBRS", "SandyBridge", "SandyBridge-IBRS", "IvyBridge",
	"IvyBridge-IBRS", "Haswell", "Haswell-IBRS", "Haswell-noTSX", "Haswell-noTSX-IBRS", "Broadwell",
	"Broadwell-IBRS", "Broadwell-noTSX", "Broadwell-noTSX-IBRS", "Skylake-Client", "Skylake-Client-IBRS",
	"Skylake-Client-noTSX-IBRS", "Skylake-Client-v4", "Skylake-Server", "Skylake-Server-IBRS",
	"Skylake-Server-noTSX-IBRS", "Skylake-Server-v4", "Skylake-Server-v5", "Cascadelake-Server",
	"Cascadelake-Server-v2", "Cascadelake-Server-noTSX", "Cascadelake-Server-v4", "Cascadelake-Server-v5",
	"Cooperlake", "Cooperlake-v2", "KnightsMill", "Icelake-Client", "Icelake-Client-noTSX", "Icelake-Server",
	"Icelake-Server-noTSX", "Icelake-Server-v3", "Icelake-Server-v4", "Icelake-Server-v5", "Icelake-Server-v6",
	"Icelake-Server-v7", "SapphireRapids", "SapphireRapids-v2", "SapphireRapids-v3", "SapphireRapids-v4",
	"GraniteRapids", "GraniteRapids-v2", "GraniteRapids-v3", "SierraForest", "SierraForest-v2",
	"SierraForest-v3", "ClearwaterForest",
	"athlon", "phenom", "Opteron_G1", "Opteron_G2", "Opteron_G3", "Opteron_G4", "Opteron_G5", "EPYC",
	"EPYC-IBPB", "EPYC-v3", "EPYC-v4", "EPYC-v5", "EPYC-Rome", "EPYC-Rome-v2", "EPYC-Rome-v3", "EPYC-Rome-v4",
	"EPYC-Rome-v5", "EPYC-Milan", "EPYC-Milan-v2", "EPYC-Milan-v3", "EPYC-Genoa", "EPYC-Genoa-v2", "EPYC-Turin",
	"kvm32", "kvm64", "qemu32", "qemu64", "max",
	"a64fx", "cortex-a35", "cortex-a53", "cortex-a55", "cortex-a57", "cortex-a710", "cortex-a72", "cortex-a76",
	"neoverse-n1", "neoverse-n2", "neoverse-v1",
	"host",
}

// qemuBuiltinCPUModels are the abstract x86-64-vN models ($builtin_models).
var qemuBuiltinCPUModels = []string{"x86-64-v2", "x86-64-v2-AES", "x86-64-v3", "x86-64-v4"}

// vmCPUFlags are the flags a VM-specific config may set
// ($supported_vm_specific_cpu_flags_by_arch); nested-virt came with
// qemu-server 9.0.27.
func vmCPUFlags(rel pveRelease) []string {
	f := []string{"aes", "amd-no-ssb", "amd-ssbd", "hv-evmcs", "hv-tlbflush", "ibpb", "md-clear", "pcid", "pdpe1gb", "spec-ctrl", "ssbd", "virt-ssbd"}
	if rel.atLeast9() {
		f = append(f, "nested-virt")
	}
	sort.Strings(f)
	return f
}

const cpuFlagAnyRE = `[+-][a-zA-Z0-9\-_\.]+`

// reportedModelEnum is the reported-model enum: every model, sorted
// case-insensitively.
func reportedModelEnum() []string {
	m := append([]string(nil), qemuCPUModels...)
	sort.SliceStable(m, func(i, j int) bool { return strings.ToLower(m[i]) < strings.ToLower(m[j]) })
	return m
}

var physBitsRE = regexp.MustCompile(`^\d{1,2}$`)

// parsePhysBits is parse_phys_bits.
func parsePhysBits(v string) string {
	const msg = "value must be an integer between 8 and 64 or 'host'"
	if v == "host" {
		return ""
	}
	if !physBitsRE.MatchString(v) {
		return msg
	}
	if n, _ := strconv.Atoi(v); n < 8 || n > 64 {
		return msg
	}
	return ""
}

func vmCPUFormat(rel pveRelease) psFormat {
	f := psFormat{
		"cputype":        {typ: tString, optional: true, defaultKey: true},
		"flags":          psOpt(tString).matching(cpuFlagAnyRE + `(;` + cpuFlagAnyRE + `)*`),
		"hidden":         psOpt(tBoolean),
		"hv-vendor-id":   psOpt(tString).matching(`[a-zA-Z0-9]{1,12}`),
		"phys-bits":      {typ: tString, optional: true, format: "pve-phys-bits", fn: parsePhysBits},
		"reported-model": psEnum(reportedModelEnum()...),
	}
	if rel.atLeast9() {
		f["guest-phys-bits"] = psOpt(tInteger).atLeast(32).atMost(64)
	}
	return f
}

// cpuParam is the `cpu` option: pve-vm-cpu-conf with validate_vm_cpu_conf.
// No custom model exists: the sim has no virtual-guest/cpu-models.conf,
// which PVE reads as an empty section config.
func cpuParam(rel pveRelease) param {
	f := vmCPUFormat(rel)
	flags := vmCPUFlags(rel)
	supported := regexp.MustCompile(`^[+-](?:` + strings.Join(quoteAll(flags), "|") + `)(?:;[+-](?:` + strings.Join(quoteAll(flags), "|") + `))*$`)
	known := map[string]bool{}
	for _, m := range append(append([]string(nil), qemuCPUModels...), qemuBuiltinCPUModels...) {
		known[m] = true
	}
	p := pFmt("pve-vm-cpu-conf")
	p.formatFn = func(v string) string {
		res, msg := parsePropertyString(f, "cpu", v)
		if msg != "" {
			return msg
		}
		cputype, _ := res["cputype"].(string)
		if cputype == "" {
			return "CPU is missing cputype"
		}
		if name, ok := strings.CutPrefix(cputype, "custom-"); ok {
			return fmt.Sprintf("Custom cputype '%s' not found", name)
		}
		if !known[cputype] {
			return fmt.Sprintf("Built-in cputype '%s' is not defined (missing 'custom-' prefix?)", cputype)
		}
		if fl, _ := res["flags"].(string); fl != "" && !supported.MatchString(fl) {
			return "VM-specific CPU flags must be a subset of: " + strings.Join(flags, ", ")
		}
		if _, ok := res["reported-model"]; ok {
			return "Property 'reported-model' not allowed in VM-specific CPU config."
		}
		return ""
	}
	return p
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = regexp.QuoteMeta(v)
	}
	return out
}
