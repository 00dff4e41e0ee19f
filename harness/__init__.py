"""The conformance harness: a pytest plugin that drives a port's shim over JSON-RPC on
stdio and checks it against SPEC.md's rules, the schemas and the reference's goldens."""
