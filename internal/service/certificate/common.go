package certificate

import "regexp"

var (
	nodeNameRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$`)
	configIDRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]+$`)
	emailRE    = regexp.MustCompile(`^[\w+\-~]+(?:\.[\w+\-~]+)*@[a-zA-Z0-9\-]+(?:\.[a-zA-Z0-9\-]+)*$`)
	domainRE   = regexp.MustCompile(`^(?i:[a-z0-9][a-z0-9_-]*(?:\.[a-z0-9][a-z0-9_-]*)+)$`)
	aliasRE    = regexp.MustCompile(`^(?i:[a-z0-9_][a-z0-9_-]*(?:\.[a-z0-9_][a-z0-9_-]*)+)$`)
)

var directoryRE = regexp.MustCompile(`^https?://.+`)
