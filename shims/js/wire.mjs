// wire.mjs: how the shim hands the port's objects to the harness (SPEC.md §6, "a shim adds
// nothing and cleans nothing"). The js port ships no serializer of its own, so its objects
// go through JavaScript's standard one, JSON.stringify, exactly as a js host would put
// them on the wire: no key renamed, reordered, added, defaulted or dropped by the shim.
// (JSON.stringify itself leaves out undefined-valued keys: that is the serializer's rule,
// the one every js host gets.) Its RunResult, stream and metric events already have the
// protocol's neutral camelCase names, so no mapping is needed either.
//
// tests/shims/test_shim_honesty.py feeds this module constructed port objects and checks
// that what it returns serializes to exactly what JSON.stringify gives for them.

/** The value as JSON.stringify writes it, taken now (a host serializes an event on arrival). */
export function snapshot(value) {
  return JSON.parse(JSON.stringify(value))
}

/** The client.run result: the port's RunResult, events, metrics, and the shim's executions. */
export function runResponse(result, events, metrics, executions) {
  return { result: snapshot(result), events, metrics, executions }
}
