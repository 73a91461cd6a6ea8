// Package compose turns a docker-compose project into a first binky.toml
// (binky init). It reads compose.yaml / docker-compose.yml and their
// override files with gopkg.in/yaml.v3 — no interpolation, no Docker — and
// the key names of .env, never its values, and renders a file that passes
// binky check. Files with version: "2"/"3" are today's format; compose's
// first format (services at the top level) is read too; a project with no
// service is ErrNoServices, never an empty file.
//
// Two rules hold for every input: the rendered file has no config errors,
// and no secret reaches it. Of environment: values, only plain ones are
// kept (interp.go splits compose's ${VAR…} forms; secret.go says what is a
// secret by name or value, a wider rule than host/config's, which a test
// holds it to). A secret, and each variable compose interpolates, becomes
// ${env.NAME} (the variable compose reads); a URL or host naming one of the
// project's adapter services becomes its ${<svc>.url} / .host / .port.
// Commands and healthcheck tests are never copied, because compose runs
// them in a container and binky would need the command that runs the
// service on the host. A service binky cannot run from its image (build:,
// or an image no adapter serves) is written as a commented block with a
// TODO. docs/config.md ("binky init: what it writes") is the user's view.
//
// Why yaml.v3 and not compose-spec/compose-go: init needs the services'
// shape only, with interpolation off, and compose-go brings a JSON-schema
// validator, docker/go-units and a dozen more modules into the core for
// that; yaml.v3 was already in go.sum and resolves anchors and merge keys
// (<<: *app), which is all the compose files in the wild lean on.
package compose
