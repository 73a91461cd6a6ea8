package tokens

import "strconv"

// Namespaces and fields of token names. A coordinates map uses the full
// names these build, without ${}.
const (
	// Self stands for the service whose string is being rendered.
	Self = "self"
	// Env prefixes a variable: ${env.NAME}.
	Env = "env"

	// WorktreeName, WorktreePath and ProjectName are the three fixed tokens.
	WorktreeName = "worktree.name"
	WorktreePath = "worktree.path"
	ProjectName  = "project.name"

	// Fields of a service: ${svc.port}, ${svc.ports.<name>}, ${svc.url},
	// ${svc.host}. Any other field is an adapter value (${db.prefix}).
	FieldPort  = "port"
	FieldPorts = "ports"
	FieldURL   = "url"
	FieldHost  = "host"

	// PortEnv is the environment variable every service with a port gets,
	// set to its first port (the one ${self.port} renders to), for
	// frameworks that read $PORT. The supervisor sets it; Render does not.
	PortEnv = "PORT"

	// DefaultPortName names the single port of a service that sets url
	// without ports.
	DefaultPortName = "http"
)

// Port is the name of ${svc.port}.
func Port(svc string) string { return svc + "." + FieldPort }

// NamedPort is the name of ${svc.ports.<port>}.
func NamedPort(svc, port string) string { return svc + "." + FieldPorts + "." + port }

// URL is the name of ${svc.url}.
func URL(svc string) string { return svc + "." + FieldURL }

// Host is the name of ${svc.host}.
func Host(svc string) string { return svc + "." + FieldHost }

// Value is the name of ${svc.<key>}, an adapter's resolved value.
func Value(svc, key string) string { return svc + "." + key }

// EnvVar is the name of ${env.NAME}.
func EnvVar(name string) string { return Env + "." + name }

// AddPorts records a service's ports in coords: ${svc.port} is the first,
// ${svc.ports.<name>} each one by name. names and ports pair up by index;
// extra entries of either are ignored.
func AddPorts(coords map[string]string, svc string, names []string, ports []int) {
	n := min(len(names), len(ports))
	for i := range n {
		p := strconv.Itoa(ports[i])
		if i == 0 {
			coords[Port(svc)] = p
		}
		coords[NamedPort(svc, names[i])] = p
	}
}
