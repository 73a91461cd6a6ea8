package golden

import (
	"fmt"
	"slices"
)

// Select finds what a rebuild or drop acts on: the template named name
// (its slice name, or the 8-digit short form of its key), or
// every template of project. An unknown name is an error that says where
// to look.
func Select(recs []*Record, name, project string) ([]*Record, error) {
	switch {
	case name != "" && project != "":
		return nil, fmt.Errorf("give a template name or --project, not both")
	case name == "" && project == "":
		return nil, fmt.Errorf("which template? give its name (binky golden list shows them) or --project")
	case project != "":
		var out []*Record
		for _, r := range recs {
			if r.Project == project {
				out = append(out, r)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("project %q has no templates (binky golden list shows every template)", project)
		}
		return out, nil
	}
	for _, r := range recs {
		if r.Slice == name {
			return []*Record{r}, nil
		}
	}
	var out []*Record
	for _, r := range recs {
		if r.Key != "" && Short(r.Key) == name {
			out = append(out, r)
		}
	}
	switch len(out) {
	case 1:
		return out, nil
	case 0:
		return nil, fmt.Errorf("no template named %q (binky golden list shows every template and its key)", name)
	}
	var names []string
	for _, r := range out {
		names = append(names, r.Slice)
	}
	slices.Sort(names)
	return nil, fmt.Errorf("key %q matches several templates (%v): give the template's full name", name, names)
}
