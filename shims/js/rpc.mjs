// rpc.mjs owns the JSON-RPC 2.0 channel over stdio (shim protocol v1 framing, SPEC.md §6):
// one compact JSON object per line each way, the shim's own host.* requests matched to
// their answers by id, and the dispatch of the harness's requests with the protocol's
// error codes. Nothing here knows the port; shim.mjs hands in the handlers.

import { createInterface } from "node:readline"

export const PROTOCOL_VERSION = 1
export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const METHOD_NOT_FOUND = -32601
export const INVALID_PARAMS = -32602
export const INTERNAL_ERROR = -32603
export const PORT_ERROR = -32001
export const UNSUPPORTED = -32002
export const VERSION_MISMATCH = -32003
const MAX_LINE_BYTES = 8 * 1024 * 1024

/** An error answer to one of the harness's requests: the protocol's code, message, data. */
export class RpcError extends Error {
  constructor(code, message, data) {
    super(message)
    this.code = code
    this.data = data
  }
}

/** The harness answered one of our host.* requests with an error (a waitFor that raises).
 * Inside the port it is the host's own callback failing; the run's outcome is the port's. */
export class HostError extends Error {}

export function portError(message, kind) {
  return new RpcError(PORT_ERROR, message, { kind })
}

export class Channel {
  constructor(out = process.stdout) {
    this.out = out
    this.nextId = 0
    this.waiting = new Map()
  }

  /** One message, one line. JSON.stringify never writes a raw newline; stdout keeps write order. */
  send(message, done) {
    this.out.write(JSON.stringify(message) + "\n", done)
  }

  /** Ask the harness (host.*) and wait for its answer; an error answer rejects with HostError. */
  request(method, params) {
    const id = `js-${++this.nextId}`
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject })
      this.send({ jsonrpc: "2.0", id, method, params })
    })
  }

  resolve(message) {
    const waiter = this.waiting.get(String(message.id))
    if (!waiter) {
      console.error(`js shim: response to unknown id ${JSON.stringify(message.id)}`)
      return
    }
    this.waiting.delete(String(message.id))
    if (message.error) {
      const { code, message: text } = message.error
      waiter.reject(new HostError(`host error ${code}: ${text ?? ""}`))
    } else {
      waiter.resolve(message.result)
    }
  }
}

/**
 * Read requests from stdin until `shutdown` or EOF. Each request runs as its own promise, so
 * host answers arrive while a client.run waits on them. `kindOf(error)` classifies an error
 * the port threw ("provider", "run", ...), or returns undefined for a bug of the shim.
 */
export function serve(channel, handlers, kindOf) {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
  lines.on("line", (line) => {
    if (!line.trim()) return
    if (Buffer.byteLength(line) > MAX_LINE_BYTES) {
      channel.send({ jsonrpc: "2.0", id: null, error: { code: INVALID_REQUEST, message: "message longer than 8 MiB" } })
      return
    }
    let message
    try {
      message = JSON.parse(line)
    } catch {
      channel.send({ jsonrpc: "2.0", id: null, error: { code: PARSE_ERROR, message: "parse error" } })
      return
    }
    if (message === null || typeof message !== "object" || Array.isArray(message)) {
      channel.send({ jsonrpc: "2.0", id: null, error: { code: INVALID_REQUEST, message: "invalid request" } })
    } else if (!("method" in message)) {
      channel.resolve(message)
    } else if (message.method === "shutdown") {
      channel.send({ jsonrpc: "2.0", id: message.id, result: {} }, () => process.exit(0))
    } else if (message.method === "$/cancel") {
      // The harness stops waiting and may restart the shim; a promise cannot be cancelled.
    } else if (message.id !== undefined) {
      dispatch(channel, handlers, message, kindOf)
    }
  })
  lines.on("close", () => process.exit(0))
}

async function dispatch(channel, handlers, message, kindOf) {
  const { id, method } = message
  let error
  try {
    const handler = handlers[method]
    if (!handler) throw new RpcError(METHOD_NOT_FOUND, `method not found: ${method}`)
    const result = await handler(message.params ?? {})
    channel.send({ jsonrpc: "2.0", id, result })
    return
  } catch (e) {
    error = errorObject(e, kindOf)
  }
  channel.send({ jsonrpc: "2.0", id, error })
}

function errorObject(e, kindOf) {
  if (e instanceof RpcError) {
    return e.data === undefined ? { code: e.code, message: e.message } : { code: e.code, message: e.message, data: e.data }
  }
  if (e instanceof HostError) {
    return { code: PORT_ERROR, message: `host callback failed: ${e.message}`, data: { kind: "run" } }
  }
  const kind = kindOf(e)
  if (kind === undefined) {
    console.error("js shim: internal error:", e)
    return { code: INTERNAL_ERROR, message: `shim internal error: ${e}` }
  }
  console.error(`js shim: port error (${kind}):`, e)
  return { code: PORT_ERROR, message: e instanceof Error ? e.message : String(e), data: { kind } }
}
