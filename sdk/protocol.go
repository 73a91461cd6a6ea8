package sdk

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
)

// Protocol is the version of the adapter protocol this package speaks. A
// request that names a newer protocol is refused with both versions named.
const Protocol = 1

// MaxMessage bounds one JSON message in either direction (1 MiB).
const MaxMessage = 1 << 20

// Call names, as given on argv in the one-shot tier.
const (
	CallDescribe  = "describe"
	CallProvision = "provision"
	CallResolve   = "resolve"
	CallClone     = "clone"
	CallDestroy   = "destroy"
	// CallSize is optional: an adapter answers it when it implements
	// Sizer (and says so in DescribeResponse.Size); any other adapter
	// replies with code unsupported, or, built before the call existed,
	// invalid ("unknown call").
	CallSize = "size"
)

// Calls lists every call name in protocol order.
var Calls = []string{CallDescribe, CallProvision, CallResolve, CallClone, CallDestroy, CallSize}

// Adapter is what an adapter author implements: one Go type serves both
// tiers. The four verbs act on one slice and are idempotent: provisioning a
// slice that exists, or destroying one that is gone, succeeds.
//
// Return an *Error (see Errorf) to choose the reply's code; any other error
// is reported with CodeInternal.
type Adapter interface {
	Describe(ctx context.Context, req *DescribeRequest) (*DescribeResponse, error)
	Provision(ctx context.Context, req *ProvisionRequest) (*ProvisionResponse, error)
	Resolve(ctx context.Context, req *ResolveRequest) (*ResolveResponse, error)
	Clone(ctx context.Context, req *CloneRequest) (*CloneResponse, error)
	Destroy(ctx context.Context, req *DestroyRequest) (*DestroyResponse, error)
}

// Sizer is the optional call an Adapter may also implement: how much a
// slice takes on its server. The SDK answers size for an adapter that
// does not implement it with code unsupported, and sets
// DescribeResponse.Size for one that does, so a host asks only those.
type Sizer interface {
	Size(ctx context.Context, req *SizeRequest) (*SizeResponse, error)
}

// Header is carried by every request.
type Header struct {
	// Protocol is the protocol version the caller speaks.
	Protocol int `json:"protocol"`
	// Adapter is the name the host used to find this binary; it may be an
	// alias (valkey for the redis adapter).
	Adapter string `json:"adapter,omitempty"`
}

// Target is carried by the four verbs: which slice, of which project, with
// which settings.
type Target struct {
	// Slice is the slice name chosen by the host (see package names); the
	// adapter maps it onto its backend's identifier rules.
	Slice string `json:"slice"`
	// Project is the binky.toml project name.
	Project string `json:"project,omitempty"`
	// AdminURL is the service's admin_url with tokens and ${env.*}
	// resolved. It may hold a credential: never log it.
	AdminURL string `json:"admin_url,omitempty"`
	// DataDir is a directory the host owns for this adapter's local state
	// ($BINKY_HOME/data/<adapter>); adapters that keep files use it.
	DataDir string `json:"data_dir,omitempty"`
	// Config is the service's config table, passed verbatim.
	Config map[string]any `json:"config,omitempty"`
	// Owner is the stable id of the binky home asking (see Claim). An
	// adapter that claims slices records it on the server when it makes
	// or adopts a slice, and refuses with CodeConflict any call on a
	// slice another owner claimed. Empty: a host that predates claims;
	// nothing is recorded or checked.
	Owner string `json:"owner,omitempty"`
	// OwnerLabel says in words which home Owner is (its directory and
	// user), for the claim's text and the refusal another home reads. It
	// is never compared.
	OwnerLabel string `json:"owner_label,omitempty"`
}

// DescribeRequest asks an adapter who it is.
type DescribeRequest struct {
	Header
}

// DescribeResponse is the handshake reply.
type DescribeResponse struct {
	Protocol int      `json:"protocol"`
	Name     string   `json:"name"`
	Aliases  []string `json:"aliases,omitempty"`
	// Clone says whether Clone can copy a slice server-side.
	Clone bool `json:"clone"`
	// RPC says whether the binary also serves the go-plugin RPC tier.
	RPC bool `json:"rpc"`
	// Version is the adapter's own version, free-form.
	Version string `json:"version,omitempty"`
	// Claims says the adapter records each slice's owner on the server
	// and refuses another owner's slice (see Target.Owner and Claim).
	Claims bool `json:"claims,omitempty"`
	// Size says the adapter answers the optional size call (see Sizer).
	// The SDK sets it for an adapter that implements Sizer.
	Size bool `json:"size,omitempty"`
}

// ProvisionRequest asks for a slice to exist.
type ProvisionRequest struct {
	Header
	Target
}

// ProvisionResponse says whether the slice was there already.
type ProvisionResponse struct {
	// Existed reports that the slice existed before this call (true) or was
	// created by it (false). The host provisions a slice it recorded as made
	// on every up to learn whether it vanished meanwhile (dropped by hand,
	// a server reset); nil means the adapter does not tell, and the host
	// trusts its record.
	Existed *bool `json:"existed,omitempty"`
}

// Provisioned is the ProvisionResponse of a slice that existed before the
// call (existed) or was created by it.
func Provisioned(existed bool) *ProvisionResponse { return &ProvisionResponse{Existed: &existed} }

// ResolveRequest asks where a slice lives.
type ResolveRequest struct {
	Header
	Target
}

// ResolveResponse gives the slice's address (what ${svc.url} becomes) and
// optional extra values (${svc.<key>}).
type ResolveResponse struct {
	Address string            `json:"address"`
	Values  map[string]string `json:"values,omitempty"`
	// Secret lists the keys of Values that hold a credential (a
	// password, a key): the host masks those values in every log, event
	// and status. A key listed here must be in Values. The address's own
	// credentials need no listing: the host finds them in the URL.
	Secret []string `json:"secret,omitempty"`
}

// SetValue sets the value key, creating Values when needed.
func (r *ResolveResponse) SetValue(key, value string) {
	if r.Values == nil {
		r.Values = map[string]string{}
	}
	r.Values[key] = value
}

// SetSecret sets the value key and lists it in Secret (once).
func (r *ResolveResponse) SetSecret(key, value string) {
	r.SetValue(key, value)
	if !slices.Contains(r.Secret, key) {
		r.Secret = append(r.Secret, key)
	}
}

// Connection-part value keys: what SQL and URL adapters resolve beside the
// address, so a binky.toml can build the URL a framework wants
// (mysql2://${db.user}:${db.password}@${db.host}:${db.port}/${db.database}).
const (
	ValueUser     = "user"
	ValuePassword = "password" // always listed in Secret
	ValueHost     = "host"
	ValuePort     = "port"
	ValueDatabase = "database"
)

// SetConnParts sets the values user, password (a secret), host and port
// from a server URL: user and password are the URL's (empty when it has
// none, so a token built from them still renders), host is its host name
// (an IPv6 address without brackets) and port its port, or defaultPort
// when it names none. A URL without a host sets neither host nor port.
func (r *ResolveResponse) SetConnParts(u *url.URL, defaultPort string) {
	var user, pw string
	if u.User != nil {
		user = u.User.Username()
		pw, _ = u.User.Password()
	}
	r.SetValue(ValueUser, user)
	r.SetSecret(ValuePassword, pw)
	if h := u.Hostname(); h != "" {
		r.SetValue(ValueHost, h)
		port := u.Port()
		if port == "" {
			port = defaultPort
		}
		if port != "" {
			r.SetValue(ValuePort, port)
		}
	}
}

// CloneRequest asks for Slice to become a copy of Source.
type CloneRequest struct {
	Header
	Target
	Source string `json:"source"`
}

// CloneResponse says how the copy was made (for example "file_copy,
// copy-on-write" or "wal_log"), for the event log and the golden record.
type CloneResponse struct {
	Method string `json:"method,omitempty"`
	// SourceBytes is the source's size on its server, when the adapter
	// can tell (0: unknown): `binky golden list` shows it as the
	// template's size.
	SourceBytes int64 `json:"source_bytes,omitempty"`
}

// SizeRequest asks how much a slice takes.
type SizeRequest struct {
	Header
	Target
}

// SizeResponse is a slice's footprint on its server. A slice that does
// not exist is 0 bytes, not an error.
type SizeResponse struct {
	// Bytes is what the slice takes: its files on disk, its database's
	// size, its keys' memory.
	Bytes int64 `json:"bytes"`
	// Shared is the part of Bytes whose blocks the filesystem shares with
	// another file (a reflink or copy-on-write clone): the host counts
	// them once, with the slice they came from, and says so. 0: none, or
	// the adapter cannot tell.
	Shared int64 `json:"shared_bytes,omitempty"`
	// Approximate says Bytes is an estimate (sampled memory, a scan that
	// stopped at its bound).
	Approximate bool `json:"approximate,omitempty"`
	// Note says in words how the figure was taken or what it leaves out.
	Note string `json:"note,omitempty"`
}

// DestroyRequest asks for a slice to be gone.
type DestroyRequest struct {
	Header
	Target
}

// DestroyResponse is empty today; fields may grow.
type DestroyResponse struct{}

// Code classifies a failed call.
type Code string

// The error codes a reply may carry.
const (
	CodeInvalid     Code = "invalid"     // the request is malformed or its config is wrong
	CodeUnreachable Code = "unreachable" // the server could not be reached
	CodeAuth        Code = "auth"        // the server refused the credentials
	CodeUnsupported Code = "unsupported" // this adapter cannot do that (clone)
	CodeConflict    Code = "conflict"    // the slice is in a state that forbids the call
	CodeInternal    Code = "internal"    // anything else, including a panic
)

// Valid reports whether c is one of the documented codes.
func (c Code) Valid() bool {
	switch c {
	case CodeInvalid, CodeUnreachable, CodeAuth, CodeUnsupported, CodeConflict, CodeInternal:
		return true
	}
	return false
}

// Error is a failed call: a code and a message for people.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"error"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Errorf builds an *Error with the given code.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the code of err: the code of the *Error it wraps, or
// CodeInternal.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) && e.Code.Valid() {
		return e.Code
	}
	return CodeInternal
}
