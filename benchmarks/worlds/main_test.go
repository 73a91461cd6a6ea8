package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestParseSweep(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{in: "1,2,4,8", want: []int{1, 2, 4, 8}},
		{in: "8, 1,4 ,2,4", want: []int{1, 2, 4, 8}},
		{in: "3", want: []int{3}},
		{in: "0,1", wantErr: true},
		{in: "1,,2", wantErr: true},
		{in: "-1", wantErr: true},
		{in: "65", wantErr: true},
		{in: "two", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseSweep(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseSweep(%q) error %v; want error %v", tt.in, err, tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("parseSweep(%q) = %v; want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		args     []string
		wantArms []string
		wantRows int
		wantErr  bool
	}{
		{args: nil, wantArms: []string{"a", "b"}, wantRows: 200000},
		{args: []string{"--arms", "b,A,b", "--rows", "10"}, wantArms: []string{"a", "b"}, wantRows: 10},
		{args: []string{"--arms", "b"}, wantArms: []string{"b"}, wantRows: 200000},
		{args: []string{"--arms", "d"}, wantErr: true},
		{args: []string{"--arms", "c", "--cow-sizes", "100,x"}, wantErr: true},
		{args: []string{"--arms", "c", "--cow-worlds", "0"}, wantErr: true},
		{args: []string{"--rows", "0"}, wantErr: true},
		{args: []string{"extra"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			o, err := parseFlags(tt.args, &bytes.Buffer{})
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseFlags(%q) error %v; want error %v", tt.args, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if !slices.Equal(o.arms, tt.wantArms) || o.rows != tt.wantRows {
				t.Errorf("parseFlags(%q): arms %v rows %d; want arms %v rows %d", tt.args, o.arms, o.rows, tt.wantArms, tt.wantRows)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	arm := func(name string, mib, sec float64) armResult {
		return armResult{Arm: name, Worlds: []world{{N: 1}, {N: 2, MarginalMiB: mib, Seconds: sec, WholeMarginalMiB: mib}}}
	}
	tests := []struct {
		name             string
		a, b             armResult
		sweep            []int
		wantTargets      bool
		wantMem, wantDur bool
	}{
		{name: "both met", a: arm("a", 100, 10), b: arm("b", 10, 2), sweep: []int{1, 2}, wantTargets: true, wantMem: true, wantDur: true},
		{name: "memory missed", a: arm("a", 100, 10), b: arm("b", 10.5, 1), sweep: []int{1, 2}, wantTargets: true, wantDur: true},
		{name: "time missed", a: arm("a", 100, 10), b: arm("b", 1, 2.5), sweep: []int{1, 2}, wantTargets: true, wantMem: true},
		{name: "arm B stopped early", a: arm("a", 100, 10), b: armResult{Arm: "b", Worlds: []world{{N: 1}}}, sweep: []int{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &report{Sweep: tt.sweep, Arms: []armResult{tt.a, tt.b}, WholeMemory: true}
			r.compare()
			if (r.Targets != nil) != tt.wantTargets {
				t.Fatalf("targets %+v; want present %v", r.Targets, tt.wantTargets)
			}
			if r.Targets == nil {
				return
			}
			if r.Targets.Memory.Met != tt.wantMem || r.Targets.Time.Met != tt.wantDur {
				t.Errorf("memory met %v, time met %v; want %v, %v", r.Targets.Memory.Met, r.Targets.Time.Met, tt.wantMem, tt.wantDur)
			}
			if r.Targets.MemoryWhole == nil || r.Targets.MemoryWhole.Met != tt.wantMem {
				t.Errorf("whole memory ratio %+v; want met %v", r.Targets.MemoryWhole, tt.wantMem)
			}
		})
	}
}

func TestRatioWithoutDenominator(t *testing.T) {
	r := newRatio(5, -1, memoryTarget)
	if r.Value != nil || r.Met {
		t.Errorf("newRatio(5, -1) = %+v; want no value and not met", r)
	}
	if got := verdict(r); got != "cannot tell" {
		t.Errorf("verdict = %q; want cannot tell", got)
	}
}

func TestWriteTable(t *testing.T) {
	r := &report{
		Rows: 10, Sweep: []int{1, 2}, WholeMemory: true, Complete: true,
		Arms: []armResult{
			{Arm: "a", Worlds: []world{{N: 1, MarginalMiB: 30, PSSMiB: 30, Seconds: 2}, {N: 2, MarginalMiB: 20, PSSMiB: 50, Seconds: 3}}},
			{Arm: "b", Worlds: []world{{N: 1, MarginalMiB: 100, PSSMiB: 100, Seconds: 1}}},
		},
	}
	var b bytes.Buffer
	r.writeTable(&b)
	out := b.String()
	for _, want := range []string{
		"|   N | A marginal MiB |",
		"|   2 |          +20.0 |         3.00 |        50.0 |      0.00 |              - |",
		"shared memory segment counted at its whole resident size",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "world 2, Binky vs") {
		t.Errorf("table judges the targets without arm B's world 2:\n%s", out)
	}
}
