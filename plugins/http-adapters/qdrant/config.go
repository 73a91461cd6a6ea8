package qdrant

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/binkyhq/binky/sdk"
)

// KeyCollections is the one config key: a table of collection name (under
// the slice's prefix) → { size = <vector size>, distance = "Cosine" |
// "Euclid" | "Dot" | "Manhattan" }.
const KeyCollections = "collections"

// collection is one collection provision creates.
type collection struct {
	Name     string // without the prefix
	Size     int
	Distance string
}

var distances = []string{"Cosine", "Dot", "Euclid", "Manhattan"}

func parseConfig(m map[string]any, prefix string) ([]collection, error) {
	var out []collection
	var unknown []string
	for k, v := range m {
		if k != KeyCollections {
			unknown = append(unknown, k)
			continue
		}
		tbl, ok := v.(map[string]any)
		if !ok {
			return nil, sdk.Errorf(sdk.CodeInvalid, "config %s must be a table of name = { size, distance }; got %T", KeyCollections, v)
		}
		for name, spec := range tbl {
			c, err := parseCollection(prefix, name, spec)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, sdk.Errorf(sdk.CodeInvalid, "unknown config key %q for the qdrant adapter (known: %s)", strings.Join(unknown, `", "`), KeyCollections)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func parseCollection(prefix, name string, spec any) (collection, error) {
	c := collection{Name: name}
	full := prefix + name
	if name == "" || len(full) > 255 || strings.ContainsAny(name, "/\\*?,:<>|\"\x00\t\r\n ") || strings.HasPrefix(name, ".") {
		return c, sdk.Errorf(sdk.CodeInvalid, "config %s: %q is not a collection name (1 to %d bytes, none of / \\ * ? , : < > | \" or whitespace)", KeyCollections, clip(name), 255-len(prefix))
	}
	if name == MarkerCollection {
		return c, sdk.Errorf(sdk.CodeInvalid, "config %s: collection name %q is the adapter's own (it holds the slice's owner claim); choose another", KeyCollections, name)
	}
	m, ok := spec.(map[string]any)
	if !ok {
		return c, sdk.Errorf(sdk.CodeInvalid, "config %s.%s must be a table { size, distance }; got %T", KeyCollections, name, spec)
	}
	for k, v := range m {
		switch k {
		case "size":
			n, ok := toInt(v)
			if !ok || n < 1 || n > 65536 {
				return c, sdk.Errorf(sdk.CodeInvalid, "config %s.%s.size must be a vector size from 1 to 65536; got %v", KeyCollections, name, clip(fmt.Sprint(v)))
			}
			c.Size = n
		case "distance":
			s, _ := v.(string)
			for _, d := range distances {
				if strings.EqualFold(s, d) {
					c.Distance = d
				}
			}
			if c.Distance == "" {
				return c, sdk.Errorf(sdk.CodeInvalid, "config %s.%s.distance must be one of %s; got %q", KeyCollections, name, strings.Join(distances, ", "), clip(fmt.Sprint(v)))
			}
		default:
			return c, sdk.Errorf(sdk.CodeInvalid, "config %s.%s has key %q; known: size, distance", KeyCollections, name, clip(k))
		}
	}
	if c.Size == 0 || c.Distance == "" {
		return c, sdk.Errorf(sdk.CodeInvalid, "config %s.%s needs both size and distance", KeyCollections, name)
	}
	return c, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), n >= math.MinInt32 && n <= math.MaxInt32
	case float64:
		return int(n), n == math.Trunc(n) && n >= math.MinInt32 && n <= math.MaxInt32
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil && i >= math.MinInt32 && i <= math.MaxInt32
	}
	return 0, false
}
