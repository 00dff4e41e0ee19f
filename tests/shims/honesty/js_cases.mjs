// Port objects shaped as the js port builds them (client.ts, types.ts), sent through the
// shim's wire module (argv[2]) and through JSON.stringify. Prints one JSON line per case:
// {"case", "shim", "serializer"}, both as the exact strings that go on the wire.
//
//   node js_cases.mjs PATH/TO/wire.mjs

import { resolve } from "node:path"
import { pathToFileURL } from "node:url"

const wire = await import(pathToFileURL(resolve(process.argv[2])).href)

// A Request as the port's pending() builds it: {...request, id}, with an undefined url.
const request = { kind: "approval", prompt: "Allow?", url: undefined, data: {}, id: "req-1" }
const runResult = {
  text: "",
  messages: [
    { role: "user", content: "go" },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "" } }] },
    { role: "tool", tool_call_id: "c1", content: "" },
  ],
  toolCalls: [
    { name: "t", args: {}, output: "Allow?", isError: true, metadata: { pending: request } },
    { name: "u", args: { empty: null, list: [] }, output: "", isError: false, metadata: undefined },
  ],
  toolCallCount: 2,
  turns: 1,
  usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
  model: "m",
  status: "pending",
  pending: request,
}
const events = [
  { type: "text", delta: "" },
  { type: "tool_call", id: "c1", name: "t", args: {} },
  { type: "tool_result", id: "c1", name: "t", output: "", isError: false },
  { type: "usage", usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 } },
  { type: "pending", request },
  { type: "done", result: runResult },
]
const metrics = [
  { event: "llm", model: "m", status: "ok", ms: 0, promptTokens: 0, completionTokens: 0 },
  { event: "tool", tool: "t", source: "native", isError: false, ms: 0, pending: true },
  { event: "run", model: "m", turns: 1, toolCalls: 2, totalTokens: 0, ms: 0, error: "" },
]

function emit(name, shim, port) {
  console.log(JSON.stringify({ case: name, shim: JSON.stringify(shim), serializer: JSON.stringify(port) }))
}

const response = wire.runResponse(runResult, events.map(wire.snapshot), metrics.map(wire.snapshot), [])
emit("RunResult", response.result, runResult)
events.forEach((ev, i) => emit(`stream event ${ev.type}`, response.events[i], ev))
metrics.forEach((ev, i) => emit(`metric ${ev.event}`, response.metrics[i], ev))
