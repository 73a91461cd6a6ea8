package apimodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path"
	"sort"
	"strings"
	"sync"
)

// Elasticsearch models the Elasticsearch 8 REST endpoints:
//
//	GET  /                              cluster info
//	HEAD /{index}                       200, or 404 with no body
//	PUT  /{index}                       200 {"acknowledged":true,…}; 400 resource_already_exists_exception; 400 invalid_index_name_exception
//	DELETE /{index}                     200 {"acknowledged":true}; 404 index_not_found_exception; 400 illegal_argument_exception for wildcards (action.destructive_requires_name, true by default since 8.0)
//	GET  /_cat/indices/{pattern}?format=json&h=index   [{"index":…}] (a wildcard matching nothing gives [])
//	GET  /{index}/_mapping              200 {"<index>":{"mappings":{…}}}; 404 index_not_found_exception
//	PUT  /{index}/_mapping              200 {"acknowledged":true}, merging properties and replacing _meta and the other top-level keys; 404 index_not_found_exception
//	POST /{index}/_doc                  201, creating the index when missing
//	GET  /{index}/_count                {"count":n}
//
// With a user set, every request needs that basic auth, else 401
// security_exception with a WWW-Authenticate header.
type Elasticsearch struct {
	User, Password string

	mu       sync.Mutex
	indices  map[string]int            // name → documents
	settings map[string]map[string]any // name → settings as created
	mappings map[string]map[string]any // name → mappings as created and updated
	deletes  []string                  // every DELETE path, as received
}

// NewElasticsearch returns an empty cluster; user "" disables auth.
func NewElasticsearch(user, password string) *Elasticsearch {
	return &Elasticsearch{User: user, Password: password, indices: map[string]int{},
		settings: map[string]map[string]any{}, mappings: map[string]map[string]any{}}
}

// Settings is the settings an index was created with (nil for none).
func (m *Elasticsearch) Settings(name string) map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.settings[name]
}

// Mapping is an index's mapping (nil for none).
func (m *Elasticsearch) Mapping(name string) map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mappings[name]
}

// Indices lists the cluster's index names, sorted.
func (m *Elasticsearch) Indices() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return sortedKeys(m.indices)
}

// Docs is the number of documents in an index; -1 when it does not exist.
func (m *Elasticsearch) Docs(name string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.indices[name]
	if !ok {
		return -1
	}
	return n
}

// AddIndex creates an index directly, as another tenant would.
func (m *Elasticsearch) AddIndex(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.indices[name] = 0
}

// Deletes lists the paths of every DELETE received.
func (m *Elasticsearch) Deletes() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.deletes...)
}

func esError(w http.ResponseWriter, status int, typ, reason, index string) {
	cause := map[string]any{"type": typ, "reason": reason}
	if index != "" {
		cause["index"] = index
		cause["index_uuid"] = "_na_"
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="security" charset="UTF-8"`)
		cause["header"] = map[string]any{"WWW-Authenticate": `Basic realm="security" charset="UTF-8"`}
	}
	body := map[string]any{"root_cause": []any{cause}}
	for k, v := range cause {
		body[k] = v
	}
	writeJSON(w, status, map[string]any{"error": body, "status": status})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// validIndexName applies the documented index-name rules.
func validIndexName(n string) string {
	switch {
	case n == "" || n == "." || n == "..":
		return "must not be empty, '.' or '..'"
	case strings.ToLower(n) != n:
		return "must be lowercase"
	case strings.ContainsAny(n, "\\/*?\"<>| ,#:"):
		return `must not contain the following characters [ , ", *, \, <, |, ,, >, /, ?, #, :]`
	case strings.IndexAny(n[:1], "-_+") == 0:
		return "must not start with '_', '-', or '+'"
	case len(n) > 255:
		return "index name is too long"
	}
	return ""
}

func (m *Elasticsearch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if m.User != "" {
		u, p, ok := r.BasicAuth()
		if !ok {
			esError(w, http.StatusUnauthorized, "security_exception", "missing authentication credentials for REST request ["+r.URL.Path+"]", "")
			return
		}
		if u != m.User || p != m.Password {
			esError(w, http.StatusUnauthorized, "security_exception", "unable to authenticate user ["+u+"] for REST request ["+r.URL.Path+"]", "")
			return
		}
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case r.URL.Path == "/" && r.Method == http.MethodGet:
		writeJSON(w, 200, map[string]any{"name": "apimodel", "cluster_name": "apimodel", "version": map[string]any{"number": "8.15.0", "distribution": "apimodel"}, "tagline": "You Know, for Search"})
	case len(parts) == 3 && parts[0] == "_cat" && parts[1] == "indices" && r.Method == http.MethodGet:
		var rows []map[string]string
		wild := false
		for _, pat := range strings.Split(parts[2], ",") {
			wild = wild || strings.Contains(pat, "*")
			for _, n := range sortedKeys(m.indices) {
				if ok, _ := path.Match(pat, n); ok {
					rows = append(rows, map[string]string{"index": n})
				}
			}
			if !wild && len(rows) == 0 {
				esError(w, 404, "index_not_found_exception", "no such index ["+pat+"]", pat)
				return
			}
		}
		if rows == nil {
			rows = []map[string]string{}
		}
		writeJSON(w, 200, rows)
	case len(parts) == 1 && parts[0] != "" && !strings.HasPrefix(parts[0], "_"):
		m.index(w, r, parts[0])
	case len(parts) == 2 && parts[1] == "_doc" && r.Method == http.MethodPost:
		if why := validIndexName(parts[0]); why != "" {
			esError(w, 400, "invalid_index_name_exception", "Invalid index name ["+parts[0]+"], "+why, parts[0])
			return
		}
		var doc map[string]any
		if err := json.NewDecoder(r.Body).Decode(&doc); err != nil {
			esError(w, 400, "document_parsing_exception", "failed to parse", parts[0])
			return
		}
		m.indices[parts[0]]++
		writeJSON(w, 201, map[string]any{"_index": parts[0], "_id": fmt.Sprint(m.indices[parts[0]]), "result": "created"})
	case len(parts) == 2 && parts[1] == "_mapping" && !strings.HasPrefix(parts[0], "_"):
		m.mapping(w, r, parts[0])
	case len(parts) == 2 && parts[1] == "_count" && r.Method == http.MethodGet:
		n, ok := m.indices[parts[0]]
		if !ok {
			esError(w, 404, "index_not_found_exception", "no such index ["+parts[0]+"]", parts[0])
			return
		}
		writeJSON(w, 200, map[string]any{"count": n})
	default:
		esError(w, 405, "illegal_argument_exception", "Incorrect HTTP method for uri ["+r.URL.Path+"] and method ["+r.Method+"]", "")
	}
}

func (m *Elasticsearch) index(w http.ResponseWriter, r *http.Request, name string) {
	_, exists := m.indices[name]
	switch r.Method {
	case http.MethodHead:
		if exists {
			w.WriteHeader(200)
		} else {
			w.WriteHeader(404)
		}
	case http.MethodPut:
		if why := validIndexName(name); why != "" {
			esError(w, 400, "invalid_index_name_exception", "Invalid index name ["+name+"], "+why, name)
			return
		}
		if exists {
			esError(w, 400, "resource_already_exists_exception", "index ["+name+"/_na_] already exists", name)
			return
		}
		var body map[string]json.RawMessage
		if b, _ := io.ReadAll(r.Body); len(strings.TrimSpace(string(b))) > 0 {
			if err := json.Unmarshal(b, &body); err != nil {
				esError(w, 400, "parse_exception", "request body is required to be a JSON object", "")
				return
			}
			for k := range body {
				if k != "settings" && k != "mappings" && k != "aliases" {
					esError(w, 400, "parse_exception", "unknown key ["+k+"] for create index", "")
					return
				}
			}
		}
		var settings, mappings map[string]any
		if err := unmarshalObject(body["settings"], &settings); err != nil {
			esError(w, 400, "parse_exception", "settings must be an object", "")
			return
		}
		if err := unmarshalObject(body["mappings"], &mappings); err != nil {
			esError(w, 400, "mapper_parsing_exception", "mappings must be an object", "")
			return
		}
		m.indices[name] = 0
		m.settings[name] = settings
		m.mappings[name] = mappings
		writeJSON(w, 200, map[string]any{"acknowledged": true, "shards_acknowledged": true, "index": name})
	case http.MethodDelete:
		m.deletes = append(m.deletes, r.URL.Path)
		if strings.ContainsAny(name, "*,") || name == "_all" {
			esError(w, 400, "illegal_argument_exception", "Wildcard expressions or all indices are not allowed", "")
			return
		}
		if !exists {
			esError(w, 404, "index_not_found_exception", "no such index ["+name+"]", name)
			return
		}
		delete(m.indices, name)
		delete(m.settings, name)
		delete(m.mappings, name)
		writeJSON(w, 200, map[string]any{"acknowledged": true})
	default:
		esError(w, 405, "illegal_argument_exception", "Incorrect HTTP method for uri [/"+name+"] and method ["+r.Method+"]", "")
	}
}

// mapping serves GET and PUT /{index}/_mapping.
func (m *Elasticsearch) mapping(w http.ResponseWriter, r *http.Request, name string) {
	if _, ok := m.indices[name]; !ok {
		esError(w, 404, "index_not_found_exception", "no such index ["+name+"]", name)
		return
	}
	switch r.Method {
	case http.MethodGet:
		mp := m.mappings[name]
		if mp == nil {
			mp = map[string]any{}
		}
		writeJSON(w, 200, map[string]any{name: map[string]any{"mappings": mp}})
	case http.MethodPut:
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body == nil {
			esError(w, 400, "parse_exception", "request body is required", "")
			return
		}
		mp := map[string]any{}
		for k, v := range m.mappings[name] {
			mp[k] = v
		}
		for k, v := range body {
			if k == "properties" {
				props, _ := mp[k].(map[string]any)
				merged := map[string]any{}
				for pk, pv := range props {
					merged[pk] = pv
				}
				add, ok := v.(map[string]any)
				if !ok {
					esError(w, 400, "mapper_parsing_exception", "properties must be an object", name)
					return
				}
				for pk, pv := range add {
					merged[pk] = pv
				}
				v = merged
			}
			mp[k] = v
		}
		m.mappings[name] = mp
		writeJSON(w, 200, map[string]any{"acknowledged": true})
	default:
		esError(w, 405, "illegal_argument_exception", "Incorrect HTTP method for uri ["+r.URL.Path+"] and method ["+r.Method+"]", "")
	}
}

// unmarshalObject decodes raw (absent: nothing) into a JSON object.
func unmarshalObject(raw json.RawMessage, out *map[string]any) error {
	if len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, out)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
