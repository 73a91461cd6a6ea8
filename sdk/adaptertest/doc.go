// Package adaptertest is the conformance suite of the adapter protocol. It
// drives an adapter binary — written in any language — through both tiers
// and checks what every adapter must do: a well-formed describe; provision
// and destroy idempotent; resolve giving an address; clone working when
// describe says clone:true and replying code "unsupported" when it says
// false; malformed requests and newer protocols refused with code
// "invalid"; and, when describe says rpc:true, byte-identical replies over
// one-shot and RPC. Slices are named conformance_<random> and destroyed
// afterwards.
//
// An adapter module calls Test from its own test against its built binary
// and a live server; `binky adapter test NAME` calls Run against a
// discovered binary and prints one line per check.
package adaptertest
