package main

// request is what git.exe asks the runner to do.
type request struct {
	Dir  string   `json:"dir"`
	Args []string `json:"args"`
	Env  []string `json:"env"`
	// Ceiling is GIT_CEILING_DIRECTORIES: the prefix's drive_c.
	Ceiling string `json:"ceiling"`
}
