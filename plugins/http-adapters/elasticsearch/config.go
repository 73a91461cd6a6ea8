package elasticsearch

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/binkyhq/binky/sdk"
)

// KeyIndices is the one config key: the indices provision creates, as a
// list of names or a table of name → {settings, mappings}; settings and
// mappings are tables or JSON strings. Names are under the slice's prefix.
const KeyIndices = "indices"

// index is one index provision creates.
type index struct {
	Name string         // without the prefix
	Body map[string]any // settings and mappings; nil for none
}

// parseConfig checks the config table. Its errors have code invalid.
func parseConfig(m map[string]any, prefix string) ([]index, error) {
	var out []index
	var unknown []string
	for k, v := range m {
		if k != KeyIndices {
			unknown = append(unknown, k)
			continue
		}
		var err error
		if out, err = parseIndices(v, prefix); err != nil {
			return nil, err
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, sdk.Errorf(sdk.CodeInvalid, "unknown config key %q for the elasticsearch adapter (known: %s)", strings.Join(unknown, `", "`), KeyIndices)
	}
	return out, nil
}

func parseIndices(v any, prefix string) ([]index, error) {
	var out []index
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			name, ok := e.(string)
			if !ok {
				return nil, sdk.Errorf(sdk.CodeInvalid, "config %s: each entry must be an index name; got %T", KeyIndices, e)
			}
			out = append(out, index{Name: name})
		}
	case []string:
		for _, name := range t {
			out = append(out, index{Name: name})
		}
	case map[string]any:
		for name, spec := range t {
			ix := index{Name: name}
			body, err := indexBody(name, spec)
			if err != nil {
				return nil, err
			}
			ix.Body = body
			out = append(out, ix)
		}
	default:
		return nil, sdk.Errorf(sdk.CodeInvalid, "config %s must be a list of index names or a table of name = { settings, mappings }; got %T", KeyIndices, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	for i, ix := range out {
		if err := checkIndexName(prefix, ix.Name); err != nil {
			return nil, err
		}
		if i > 0 && out[i-1].Name == ix.Name {
			return nil, sdk.Errorf(sdk.CodeInvalid, "config %s names index %q twice", KeyIndices, ix.Name)
		}
	}
	return out, nil
}

func indexBody(name string, spec any) (map[string]any, error) {
	m, ok := spec.(map[string]any)
	if !ok {
		return nil, sdk.Errorf(sdk.CodeInvalid, "config %s.%s must be a table with settings and/or mappings; got %T", KeyIndices, name, spec)
	}
	body := map[string]any{}
	for k, v := range m {
		if k != "settings" && k != "mappings" {
			return nil, sdk.Errorf(sdk.CodeInvalid, "config %s.%s has key %q; known: settings, mappings", KeyIndices, name, k)
		}
		switch t := v.(type) {
		case map[string]any:
			body[k] = t
		case string:
			var obj map[string]any
			if err := json.Unmarshal([]byte(t), &obj); err != nil {
				return nil, sdk.Errorf(sdk.CodeInvalid, "config %s.%s.%s is not a JSON object: %v", KeyIndices, name, k, err)
			}
			body[k] = obj
		default:
			return nil, sdk.Errorf(sdk.CodeInvalid, "config %s.%s.%s must be a table or a JSON object string; got %T", KeyIndices, name, k, v)
		}
	}
	if len(body) == 0 {
		return nil, nil
	}
	return body, nil
}

// checkIndexName applies Elasticsearch's index-name rules to prefix+name:
// lowercase, none of \ / * ? " < > | , # : or space, at most 255 bytes; the
// name itself is not empty and adds no wildcard.
func checkIndexName(prefix, name string) error {
	full := prefix + name
	switch {
	case name == "":
		return sdk.Errorf(sdk.CodeInvalid, "config %s has an empty index name", KeyIndices)
	case name == MarkerIndex:
		return sdk.Errorf(sdk.CodeInvalid, "config %s: index name %q is the adapter's own (it holds the slice's owner claim); choose another", KeyIndices, name)
	case len(full) > 255:
		return sdk.Errorf(sdk.CodeInvalid, "config %s: index %q is %d bytes with the prefix; Elasticsearch allows 255", KeyIndices, name, len(full))
	case strings.ToLower(name) != name:
		return sdk.Errorf(sdk.CodeInvalid, "config %s: index %q must be lowercase", KeyIndices, name)
	case strings.ContainsAny(name, "\\/*?\"<>|, #:\x00\t\r\n"):
		return sdk.Errorf(sdk.CodeInvalid, "config %s: index %q holds a character index names may not (\\ / * ? \" < > | , # : or whitespace)", KeyIndices, name)
	}
	return nil
}

func (ix index) String() string { return fmt.Sprintf("%s(%d keys)", ix.Name, len(ix.Body)) }
