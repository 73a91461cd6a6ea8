package sdk

import "context"

// Funcs is an Adapter made of plain functions, for small adapters: give a
// name and the verbs you support. A nil CloneFunc makes describe say
// clone:false and clone reply CodeUnsupported; a nil ProvisionFunc or
// DestroyFunc succeeds without doing anything.
type Funcs struct {
	Name          string
	Aliases       []string
	ProvisionFunc func(ctx context.Context, t Target) error
	ResolveFunc   func(ctx context.Context, t Target) (*ResolveResponse, error)
	CloneFunc     func(ctx context.Context, t Target, source string) (*CloneResponse, error)
	DestroyFunc   func(ctx context.Context, t Target) error
}

// Describe implements Adapter.
func (f *Funcs) Describe(context.Context, *DescribeRequest) (*DescribeResponse, error) {
	return &DescribeResponse{Protocol: Protocol, Name: f.Name, Aliases: f.Aliases, Clone: f.CloneFunc != nil}, nil
}

// Provision implements Adapter.
func (f *Funcs) Provision(ctx context.Context, r *ProvisionRequest) (*ProvisionResponse, error) {
	if f.ProvisionFunc == nil {
		return &ProvisionResponse{}, nil
	}
	return &ProvisionResponse{}, f.ProvisionFunc(ctx, r.Target)
}

// Resolve implements Adapter.
func (f *Funcs) Resolve(ctx context.Context, r *ResolveRequest) (*ResolveResponse, error) {
	if f.ResolveFunc == nil {
		return nil, Errorf(CodeInternal, "adapter %s has no resolve", f.Name)
	}
	return f.ResolveFunc(ctx, r.Target)
}

// Clone implements Adapter.
func (f *Funcs) Clone(ctx context.Context, r *CloneRequest) (*CloneResponse, error) {
	if f.CloneFunc == nil {
		return nil, Errorf(CodeUnsupported, "adapter %s cannot clone a slice", f.Name)
	}
	return f.CloneFunc(ctx, r.Target, r.Source)
}

// Destroy implements Adapter.
func (f *Funcs) Destroy(ctx context.Context, r *DestroyRequest) (*DestroyResponse, error) {
	if f.DestroyFunc == nil {
		return &DestroyResponse{}, nil
	}
	return &DestroyResponse{}, f.DestroyFunc(ctx, r.Target)
}

var _ Adapter = (*Funcs)(nil)
