package admission

import (
	"context"
	"errors"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/binkyhq/binky/host/api"
)

// memSettings is Settings in memory.
type memSettings map[string]string

func (m memSettings) Settings(context.Context) (map[string]string, error) { return m, nil }
func (m memSettings) SetSetting(_ context.Context, k, v string) error     { m[k] = v; return nil }

// TestBoundsReserve: binky reserve refuses a bound out of range before
// writing anything, records the ones given, and reports every bound with
// where it comes from; a small disk caps the default headroom.
func TestBoundsReserve(t *testing.T) {
	ctx := context.Background()
	ram, neg, par := 25.0, -1.0, 3
	tooMuch := 100.0
	tests := []struct {
		name    string
		args    api.ReserveArgs
		wantErr string
		want    []api.ReserveValue
	}{
		{name: "defaults, a 20 GB disk", args: api.ReserveArgs{}, want: []api.ReserveValue{
			{Name: "max_parallel", Value: 0, Source: "default"},
			{Name: "ram_reserve", Value: DefaultRAMReserve, Unit: "%", Source: "default"},
			{Name: "disk_headroom", Value: 1, Unit: "GB", Source: "default"},
		}},
		{name: "ram and max parallel set", args: api.ReserveArgs{RAM: &ram, MaxParallel: &par}, want: []api.ReserveValue{
			{Name: "max_parallel", Value: 3, Source: "registry (binky reserve)"},
			{Name: "ram_reserve", Value: 25, Unit: "%", Source: "registry (binky reserve)"},
			{Name: "disk_headroom", Value: 1, Unit: "GB", Source: "default"},
		}},
		{name: "ram 100", args: api.ReserveArgs{RAM: &tooMuch}, wantErr: "--ram 100 is not a percentage: give 0 (no reserve) to 99"},
		{name: "negative disk", args: api.ReserveArgs{Disk: &neg}, wantErr: "--disk -1 is negative: give the GB of disk to keep free, 0 for none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := memSettings{}
			b := &Bounds{Settings: st, Source: fixedSource{Sample{DiskTotal: 20e9, DiskFree: 10e9}}, Logger: hclog.NewNullLogger()}
			err := b.Reserve(ctx, tt.args)
			if tt.wantErr != "" {
				var ae *api.Error
				if !errors.As(err, &ae) || ae.Code != api.CodeInvalid || ae.Message != tt.wantErr {
					t.Fatalf("Reserve = %v; want invalid %q", err, tt.wantErr)
				}
				if len(st) != 0 {
					t.Errorf("a refused reserve wrote %v; want nothing", st)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := b.Values()
			if len(got) != len(tt.want) {
				t.Fatalf("Values = %+v; want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("Values[%d] = %+v; want %+v", i, got[i], tt.want[i])
				}
			}
			if lim := b.Limits(); lim.MaxParallel != int(tt.want[0].Value) || lim.RAMReserve != tt.want[1].Value {
				t.Errorf("Limits = %+v; want the values reported", lim)
			}
		})
	}
}

// fixedSource samples the same every time.
type fixedSource struct{ s Sample }

func (f fixedSource) Sample(context.Context) (Sample, error) { return f.s, nil }
