package redisadapter

import (
	"fmt"
	"sort"
	"strings"

	"github.com/binkyhq/binky/sdk"
)

// Config keys a service may set in its config table.
const (
	// KeyACL (bool): true makes provision create an ACL user per slice and
	// fail where the server cannot; false never does, and resolve answers
	// the admin address. Absent: ACL users where the server has ACLs.
	KeyACL = "acl"
	// KeyMode (string): "prefix" (the default), a slice is the key prefix
	// <slice>:; or "db", a slice is a logical database of its own, for an
	// application that cannot prefix its keys (see dbmode.go).
	KeyMode = "mode"
	// KeyClientList (bool): let the slice's ACL user run CLIENT LIST, which
	// BullMQ's getWorkers and Sidekiq's process list need. It shows every
	// connection to the server (other slices' included): their addresses,
	// client names, user names and last command names, never keys or
	// values. Default false.
	KeyClientList = "client_list"
)

// The modes of KeyMode.
const (
	modePrefix = "prefix"
	modeDB     = "db"
)

// config is a service's config table, decoded.
type config struct {
	acl        *bool // nil: probe the server
	mode       string
	clientList bool
}

// parseConfig decodes a config table strictly: an unknown key or a value
// of the wrong shape is an invalid request, named.
func parseConfig(m map[string]any) (config, error) {
	c := config{mode: modePrefix}
	var unknown []string
	for k, v := range m {
		switch k {
		case KeyACL, KeyClientList:
			b, ok := v.(bool)
			if !ok {
				return c, sdk.Errorf(sdk.CodeInvalid, "config %s must be true or false; got %v (%T)", k, v, v)
			}
			if k == KeyACL {
				c.acl = &b
			} else {
				c.clientList = b
			}
		case KeyMode:
			s, ok := v.(string)
			if !ok || s != modePrefix && s != modeDB {
				return c, sdk.Errorf(sdk.CodeInvalid, "config %s must be %q (a key prefix per slice) or %q (a logical database per slice); got %s", k, modePrefix, modeDB, describe(v))
			}
			c.mode = s
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return c, sdk.Errorf(sdk.CodeInvalid, "unknown config key %q for the redis adapter (known: %s, %s, %s)",
			strings.Join(unknown, `", "`), KeyACL, KeyMode, KeyClientList)
	}
	if c.mode == modeDB {
		if c.acl != nil && *c.acl {
			return c, sdk.Errorf(sdk.CodeInvalid, "config acl = true does not work with mode = %q: a Redis ACL user cannot be kept to one logical database; drop acl (db mode uses the admin credentials) or use mode = %q", modeDB, modePrefix)
		}
		if c.clientList {
			return c, sdk.Errorf(sdk.CodeInvalid, "config client_list applies to ACL users, which mode = %q does not make (the admin credentials can run CLIENT LIST already)", modeDB)
		}
		no := false
		c.acl = &no
	}
	return c, nil
}

func describe(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%v (%T)", v, v)
}
