// Package compose turns a docker-compose project into a first binky.toml
// (binky init). It reads compose.yaml / docker-compose.yml and their
// override files with gopkg.in/yaml.v3 — no interpolation, no Docker — and
// the key names of .env, never its values, and renders a file that passes
// binky check.
//
// Two rules hold for every input: the rendered file has no config errors,
// and no value from environment:, .env or an env_file reaches it. A value
// becomes ${env.NAME} (or ${<svc>.url} when it is a URL naming one of the
// project's adapter services); commands and healthcheck tests are never
// copied, because compose runs them in a container and binky would need
// the command that runs the service on the host. A service binky cannot run
// from its image (build:, or an image no adapter serves) is written as a
// commented block with a TODO.
//
// Why yaml.v3 and not compose-spec/compose-go: init needs the services'
// shape only, with interpolation off, and compose-go brings a JSON-schema
// validator, docker/go-units and a dozen more modules into the core for
// that; yaml.v3 was already in go.sum and resolves anchors and merge keys
// (<<: *app), which is all the compose files in the wild lean on.
package compose
