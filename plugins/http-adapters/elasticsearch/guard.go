package elasticsearch

import (
	"fmt"
	"strings"

	"github.com/binkyhq/binky/sdk"
)

// checkPrefix refuses a prefix destroy could not safely list and delete
// under: empty, or holding a wildcard, a comma (a list of index
// expressions), a leading '-' (an exclusion) or anything Elasticsearch
// reads as an expression. Slice prefixes ([a-z0-9_]+'-') always pass.
func checkPrefix(prefix string) error {
	if len(prefix) < 2 || !strings.HasSuffix(prefix, "-") {
		return sdk.Errorf(sdk.CodeInvalid, "refusing index prefix %q: it must be a slice name followed by '-'", prefix)
	}
	for i := 0; i < len(prefix)-1; i++ {
		c := prefix[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return sdk.Errorf(sdk.CodeInvalid, "refusing index prefix %q: it may hold only [a-z0-9_] before its '-', never a wildcard or comma", prefix)
		}
	}
	return nil
}

// deletable is what destroy deletes of the names a listing returned: each
// that starts with prefix and is a concrete index name (no wildcard,
// comma or leading '-'), in order, without duplicates. A listed name
// outside the prefix is an error: the listing was not what was asked for,
// so nothing is deleted.
func deletable(prefix string, listed []string) ([]string, error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, n := range listed {
		if !strings.HasPrefix(n, prefix) || len(n) == len(prefix) {
			return nil, fmt.Errorf("the server listed index %q for the pattern %s*; deleting nothing", n, prefix)
		}
		if strings.ContainsAny(n, "*?,") || strings.HasPrefix(n, "-") || strings.ContainsAny(n, "/\\ ") {
			return nil, fmt.Errorf("the server listed %q, which is not a concrete index name; deleting nothing", n)
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}
