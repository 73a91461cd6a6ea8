package world

import "testing"

// TestCostsForgetRemovedWorlds: readings of a world no longer listed go,
// unless a measure of it still runs.
func TestCostsForgetRemovedWorlds(t *testing.T) {
	var c costs
	c.of(1)
	c.of(2)
	c.of(3).slicesBusy = true
	c.keepOnly(map[int64]bool{1: true})
	if _, ok := c.worlds[2]; ok {
		t.Error("world 2 (removed) is still kept")
	}
	if _, ok := c.worlds[1]; !ok {
		t.Error("world 1 (listed) was forgotten")
	}
	if _, ok := c.worlds[3]; !ok {
		t.Error("world 3 (removed, measure running) was forgotten under its measure")
	}
}
