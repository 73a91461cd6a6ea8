package registry

import (
	"context"
	"testing"
)

func TestSettingsPersist(t *testing.T) {
	r, path := newRegistry(t)
	ctx := context.Background()
	if _, ok, err := r.Setting(ctx, "ram_reserve"); err != nil || ok {
		t.Fatalf("unset setting: ok %v, %v; want not found", ok, err)
	}
	if err := r.SetSetting(ctx, "ram_reserve", "15"); err != nil {
		t.Fatal(err)
	}
	if err := r.SetSetting(ctx, "ram_reserve", "20"); err != nil {
		t.Fatal(err)
	}
	// a second Registry on the same file sees what the first wrote
	r2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	v, ok, err := r2.Setting(ctx, "ram_reserve")
	if err != nil || !ok || v != "20" {
		t.Errorf("got %q %v %v; want 20", v, ok, err)
	}
	all, err := r2.Settings(ctx)
	if err != nil || len(all) != 1 || all["ram_reserve"] != "20" {
		t.Errorf("settings %v %v; want ram_reserve=20 only", all, err)
	}
}
