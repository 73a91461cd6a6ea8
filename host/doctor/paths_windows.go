package doctor

// pathRisks: Windows directories carry ACLs, which doctor does not read.
func pathRisks(name, path string) []Finding { return nil }
