// The js port's shim: shim protocol v1 (SPEC.md §6) over stdio, driving the toolnexus js
// port built from a checkout (toolnexus_conformance/builders/js_shim.py).
//
//   node shims/js/shim.mjs PATH/TO/BUILD/dist/index.js
//
// It only translates protocol params -> port calls (here and tools.mjs); the framing is
// rpc.mjs. The port's objects go out as the port holds them: its RunResult, stream events
// and metric events already have the protocol's neutral camelCase shapes, so they are
// handed to JSON.stringify untouched (wire.mjs). 0.16.0 has no relay tools and no
// runWithAnswer/askWithAnswer, and its streaming loop resolves suspensions one at a time
// (only run/ask call waitFor concurrently), so `relay`, `resume` and `concurrentWaitFor`
// are not declared. `register` (protocol v1.1) is toolkit.register (tools.mjs).

import { readFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { pathToFileURL } from "node:url"

import { Channel, HostError, INVALID_PARAMS, PROTOCOL_VERSION, RpcError, UNSUPPORTED, VERSION_MISMATCH, portError, serve } from "./rpc.mjs"
import { Recorder, buildToolkit, suspension } from "./tools.mjs"
import { runResponse, snapshot } from "./wire.mjs"

const CAPABILITIES = ["openai", "anthropic", "stream", "store", "hooks", "register", "resultMetadata"]

// stdout carries protocol lines only: anything the port logs goes to stderr.
console.log = console.error
console.info = console.error

const portModule = process.argv[2]
if (!portModule) {
  console.error("usage: node shim.mjs PATH/TO/toolnexus/js/dist/index.js")
  process.exit(2)
}
const tn = await import(pathToFileURL(resolve(portModule)).href)
const LIBRARY = { name: "toolnexus", version: portVersion(portModule) }

function portVersion(module) {
  // A checkout carries its package.json version; it may be ahead of that release.
  try {
    const pkg = JSON.parse(readFileSync(resolve(dirname(module), "..", "package.json"), "utf8"))
    return `${pkg.version}+checkout`
  } catch {
    return "checkout"
  }
}

function initialize(params) {
  if (params.protocolVersion !== PROTOCOL_VERSION) {
    throw new RpcError(VERSION_MISMATCH, `this shim speaks protocol ${PROTOCOL_VERSION}`, { supported: [PROTOCOL_VERSION] })
  }
  return { protocolVersion: PROTOCOL_VERSION, port: "js", language: "javascript", library: LIBRARY, capabilities: CAPABILITIES }
}

async function describe(params) {
  const toolkit = await toolkitOf(params.toolkit, new Recorder())
  try {
    return { openai: toolkit.toOpenAI(), anthropic: toolkit.toAnthropic(), gemini: toolkit.toGemini() }
  } finally {
    await toolkit.close()
  }
}

async function toolkitOf(spec, recorder) {
  try {
    return await buildToolkit(tn, spec ?? {}, recorder)
  } catch (e) {
    if (e instanceof RpcError) throw e
    throw portError(e instanceof Error ? e.message : String(e), "toolkit")
  }
}

function runner(channel) {
  return async function run(p) {
    if (p.entry === "runWithAnswer" || p.entry === "askWithAnswer") {
      throw new RpcError(UNSUPPORTED, `toolnexus js ${LIBRARY.version} has no ${p.entry}`, { capability: "resume" })
    }
    if (!["run", "ask", "stream"].includes(p.entry)) throw new RpcError(INVALID_PARAMS, `unknown entry ${p.entry}`)
    const recorder = new Recorder()
    const metrics = []
    const toolkit = await toolkitOf(p.toolkit, recorder)
    const options = {
      baseUrl: p.baseUrl,
      style: p.style,
      model: p.model,
      apiKey: p.apiKey,
      retries: 0,
      hooks: hooks(channel, recorder, p.hooks ?? []),
      onMetric: (ev) => metrics.push(snapshot(ev)),
    }
    if (p.maxTurns !== undefined) options.maxTurns = p.maxTurns
    if (p.systemPrompt !== undefined) options.systemPrompt = p.systemPrompt
    // A stream's waitFor tells the host whether the consumer got the pending event first.
    const seen = p.entry === "stream" ? sightings() : undefined
    if (p.waitFor) {
      options.waitFor = async (request) => {
        const params = seen ? { request, pendingEventSeen: await seen.waitSeen(request.id) } : { request }
        return (await channel.request("host.waitFor", params)).answer
      }
    }
    if (p.store) options.store = hostStore(channel)
    const client = tn.createClient(options)
    const events = []
    let result
    try {
      if (p.entry === "run") result = await client.run(p.prompt, { toolkit, history: p.history })
      else if (p.entry === "ask") result = await client.ask(p.prompt, { toolkit, id: p.id })
      else {
        for await (const ev of client.stream(p.prompt, { toolkit, id: p.id })) {
          // A host forwarding events serializes each as it arrives.
          events.push(snapshot(ev))
          if (ev.type === "pending") seen.saw(ev.request?.id)
          if (ev.type === "done") result = ev.result
        }
        if (result === undefined) throw portError("the stream ended without a done event", "run")
      }
    } finally {
      await toolkit.close()
    }
    return runResponse(result, events, metrics, recorder.executions)
  }
}

// How long a stream's waitFor waits for the consumer to receive the pending event of its
// Request before telling the host it did not (SPEC.md §6, host.waitFor pendingEventSeen).
const SIGHTING_WAIT_MS = 1000

/** The pending events a stream's consumer has received, by Request id. */
function sightings() {
  const flags = new Map()
  const flag = (id) => {
    if (!flags.has(id)) {
      let set
      const promise = new Promise((resolve) => (set = resolve))
      flags.set(id, { promise, set })
    }
    return flags.get(id)
  }
  return {
    saw: (id) => flag(id).set(true),
    waitSeen: (id) => {
      let timer
      const late = new Promise((resolve) => (timer = setTimeout(resolve, SIGHTING_WAIT_MS, false)))
      return Promise.race([flag(id).promise, late]).finally(() => clearTimeout(timer))
    },
  }
}

// beforeTool is always installed, to learn call ids (tools.mjs); it asks the host only when
// the scenario requested it, and otherwise returns nothing, which the port reads as no override.
function hooks(channel, recorder, names) {
  const forwardBefore = names.includes("beforeTool")
  const h = {
    async beforeTool(ev) {
      let override = null
      if (forwardBefore) {
        const event = { name: ev.name, args: ev.args, callId: ev.id }
        override = (await channel.request("host.hook", { name: "beforeTool", event }))?.override ?? null
      }
      // The args object the port hands execute next: a rewrite's, else its own (also on
      // the waitFor retry after a hook-raised suspension).
      recorder.noteCall(override?.args ?? ev.args, ev.id)
      if (override?.suspend) return { result: suspension(tn, override.suspend) }
      return override?.args ? { args: override.args } : undefined
    },
  }
  if (names.includes("afterTool")) {
    h.afterTool = async (ev) => {
      const event = { name: ev.name, args: ev.args, callId: ev.id, result: { output: ev.result.output, isError: ev.result.isError } }
      await channel.request("host.hook", { name: "afterTool", event })
      return undefined // afterTool overrides are not used in protocol v1
    }
  }
  return h
}

/** The port's ConversationStore, kept by the host so a transcript outlives the shim. */
function hostStore(channel) {
  return {
    async get(id) {
      const reply = await channel.request("host.store.get", { id })
      return reply?.messages ?? undefined // the port's interface says undefined for "none"
    },
    async save(id, messages) {
      await channel.request("host.store.save", { id, messages })
    },
  }
}

/** Any error out of a run is the port's: a provider error (its "LLM <status>" errors and
 * failed fetches), else a run error. */
function kindOf(e) {
  if (e instanceof HostError) return "run"
  const message = e instanceof Error ? e.message : String(e)
  return message.startsWith("LLM ") || message === "fetch failed" ? "provider" : "run"
}

const channel = new Channel()
serve(channel, { initialize, "toolkit.describe": describe, "client.run": runner(channel) }, kindOf)
