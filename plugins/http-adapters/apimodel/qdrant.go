package apimodel

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Qdrant models the Qdrant REST endpoints (v1.x):
//
//	GET    /collections                       {"result":{"collections":[{"name":…}]},"status":"ok","time":…}
//	GET    /collections/{name}                200 {"result":{…}}; 404 {"status":{"error":"Not found: Collection `x` doesn't exist!"}}
//	PUT    /collections/{name}                200 {"result":true}; 409 "Wrong input: Collection `x` already exists!"; 400/422 for a bad body
//	DELETE /collections/{name}                200 {"result":true}, or {"result":false} when it did not exist
//	PUT    /collections/{name}/points         200, upserting {"points":[{"id","vector","payload"}]} (?wait=true accepted)
//	GET    /collections/{name}/points/{id}    200 {"result":{"id","payload"}}; 404 when the collection or the point does not exist
//	POST   /collections/{name}/points/count   {"result":{"count":n}}
//
// With an API key set, every request needs it in the api-key header (or
// Authorization: Bearer), else 401 with a plain-text reason.
type Qdrant struct {
	APIKey string

	mu          sync.Mutex
	collections map[string]*qcollection
	deletes     []string
}

type qcollection struct {
	size     int
	distance string
	points   map[string]map[string]any // id → payload
}

// NewQdrant returns an empty server; key "" disables auth.
func NewQdrant(key string) *Qdrant {
	return &Qdrant{APIKey: key, collections: map[string]*qcollection{}}
}

// Collections lists the collection names, sorted.
func (m *Qdrant) Collections() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return sortedKeys(m.collections)
}

// Points is the number of points in a collection; -1 when it does not
// exist.
func (m *Qdrant) Points(name string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.collections[name]
	if !ok {
		return -1
	}
	return len(c.points)
}

// AddCollection creates a collection directly, as another tenant would.
func (m *Qdrant) AddCollection(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.collections[name] = &qcollection{size: 4, distance: "Cosine", points: map[string]map[string]any{}}
}

// Deletes lists the paths of every DELETE received.
func (m *Qdrant) Deletes() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.deletes...)
}

func qreply(w http.ResponseWriter, status int, result any) {
	writeJSON(w, status, map[string]any{"result": result, "status": "ok", "time": time.Millisecond.Seconds()})
}

func qerror(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"status": map[string]any{"error": msg}, "time": time.Millisecond.Seconds()})
}

func (m *Qdrant) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if m.APIKey != "" {
		key := r.Header.Get("api-key")
		if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && key == "" {
			key = b
		}
		if key == "" {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte("Must provide an API key or an Authorization bearer token"))
			return
		}
		if key != m.APIKey {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte("Invalid API key or JWT"))
			return
		}
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(parts) == 0 || parts[0] != "collections" {
		qerror(w, 404, "Not found")
		return
	}
	switch {
	case len(parts) == 1 && r.Method == http.MethodGet:
		list := []map[string]string{}
		for _, n := range sortedKeys(m.collections) {
			list = append(list, map[string]string{"name": n})
		}
		qreply(w, 200, map[string]any{"collections": list})
	case len(parts) == 2:
		m.collection(w, r, parts[1])
	case len(parts) == 3 && parts[2] == "points" && r.Method == http.MethodPut:
		c, ok := m.collections[parts[1]]
		if !ok {
			qerror(w, 404, "Not found: Collection `"+parts[1]+"` doesn't exist!")
			return
		}
		var body struct {
			Points []struct {
				ID      json.RawMessage `json:"id"`
				Vector  []float64       `json:"vector"`
				Payload map[string]any  `json:"payload"`
			} `json:"points"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			qerror(w, 400, "Format error in JSON body: "+err.Error())
			return
		}
		for _, p := range body.Points {
			if len(p.Vector) != c.size {
				qerror(w, 400, "Wrong input: Vector dimension error: expected dim: "+itoa(c.size)+", got "+itoa(len(p.Vector)))
				return
			}
			c.points[pointID(p.ID)] = p.Payload
		}
		qreply(w, 200, map[string]any{"operation_id": 0, "status": "completed"})
	case len(parts) == 4 && parts[2] == "points" && parts[3] == "count" && r.Method == http.MethodPost:
		c, ok := m.collections[parts[1]]
		if !ok {
			qerror(w, 404, "Not found: Collection `"+parts[1]+"` doesn't exist!")
			return
		}
		qreply(w, 200, map[string]any{"count": len(c.points)})
	case len(parts) == 4 && parts[2] == "points" && r.Method == http.MethodGet:
		c, ok := m.collections[parts[1]]
		if !ok {
			qerror(w, 404, "Not found: Collection `"+parts[1]+"` doesn't exist!")
			return
		}
		payload, ok := c.points[parts[3]]
		if !ok {
			qerror(w, 404, "Not found: No point with id "+parts[3]+" found")
			return
		}
		if payload == nil {
			payload = map[string]any{}
		}
		var id any = parts[3]
		if n, err := strconv.ParseUint(parts[3], 10, 64); err == nil {
			id = n
		}
		qreply(w, 200, map[string]any{"id": id, "payload": payload, "vector": nil})
	default:
		qerror(w, 404, "Not found")
	}
}

func (m *Qdrant) collection(w http.ResponseWriter, r *http.Request, name string) {
	c, exists := m.collections[name]
	switch r.Method {
	case http.MethodGet:
		if !exists {
			qerror(w, 404, "Not found: Collection `"+name+"` doesn't exist!")
			return
		}
		qreply(w, 200, map[string]any{"status": "green", "points_count": len(c.points),
			"config": map[string]any{"params": map[string]any{"vectors": map[string]any{"size": c.size, "distance": c.distance}}}})
	case http.MethodPut:
		var body struct {
			Vectors *struct {
				Size     int    `json:"size"`
				Distance string `json:"distance"`
			} `json:"vectors"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			qerror(w, 400, "Format error in JSON body: "+err.Error())
			return
		}
		if body.Vectors == nil || body.Vectors.Size < 1 {
			qerror(w, 422, "Validation error in JSON body: [vectors.size: value 0 invalid, must be 1 or larger]")
			return
		}
		switch body.Vectors.Distance {
		case "Cosine", "Euclid", "Dot", "Manhattan":
		default:
			qerror(w, 400, "Format error in JSON body: vectors.distance: unknown variant `"+body.Vectors.Distance+"`, expected one of `Cosine`, `Euclid`, `Dot`, `Manhattan`")
			return
		}
		if exists {
			qerror(w, 409, "Wrong input: Collection `"+name+"` already exists!")
			return
		}
		m.collections[name] = &qcollection{size: body.Vectors.Size, distance: body.Vectors.Distance, points: map[string]map[string]any{}}
		qreply(w, 200, true)
	case http.MethodDelete:
		m.deletes = append(m.deletes, r.URL.Path)
		delete(m.collections, name)
		qreply(w, 200, exists)
	default:
		qerror(w, 405, "Method Not Allowed")
	}
}

// pointID is a point id as a path segment names it: an integer as is, a
// UUID without its JSON quotes.
func pointID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// Payload is the payload of a point, and whether the point exists.
func (m *Qdrant) Payload(collection, id string) (map[string]any, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.collections[collection]
	if !ok {
		return nil, false
	}
	p, ok := c.points[id]
	return p, ok
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
