// Command binky-adapter-filestore is an adapter: a slice is <root>/<slice>/.
package main

import (
	"cmp"
	"context"
	"github.com/binkyhq/binky/sdk"
	"github.com/binkyhq/binky/sdk/names"
	"os"
	"path/filepath"
)

func in(f func(dir string) error) func(context.Context, sdk.Target) error {
	return func(_ context.Context, t sdk.Target) error { // f gets the slice's directory
		root, _ := t.Config["root"].(string)
		if root = cmp.Or(root, t.DataDir); !filepath.IsAbs(root) || !names.IsSlice(t.Slice) {
			return sdk.Errorf(sdk.CodeInvalid, "want an absolute root (got %q) and a slice name (got %q)", root, t.Slice)
		}
		return f(filepath.Join(root, t.Slice))
	}
}

func main() {
	mkdir := func(d string) error { return os.MkdirAll(d, 0o755) }
	sdk.Run(&sdk.Funcs{Name: "filestore", ProvisionFunc: in(mkdir), DestroyFunc: in(os.RemoveAll),
		ResolveFunc: func(ctx context.Context, t sdk.Target) (r *sdk.ResolveResponse, err error) {
			err = in(func(d string) error { r = &sdk.ResolveResponse{Address: "file://" + filepath.ToSlash(d)}; return nil })(ctx, t)
			return r, err
		}})
}
