// tools.mjs builds the port's Toolkit from a protocol <toolkit> (its v1.1 `register` tools
// added with toolkit.register): native tools as plain port `Tool` objects whose execute
// plays the scenario's behaviour vocabulary (reply / fail / suspend+then / alwaysSuspend /
// delayMs) and records each execution.
//
// Call ids: the port hands a tool no call id. The shim always installs a beforeTool hook
// (it returns no override unless the scenario asked for hooks), which sees the call id and
// the very args object the loop then passes to execute (and, on a waitFor retry, passes
// again). The recorder keys call ids by that object's identity, so nothing the port does
// changes and concurrent calls of one turn never mix.

import { RpcError, UNSUPPORTED } from "./rpc.mjs"

const NO_ARGUMENTS = () => ({ type: "object", properties: {}, additionalProperties: false })

export class Recorder {
  constructor() {
    this.executions = []
    this.callOfArgs = new WeakMap()
  }

  noteCall(args, callId) {
    if (args && typeof args === "object" && callId !== undefined) this.callOfArgs.set(args, callId)
  }

  executed(tool, args, answered) {
    const callId = (args && typeof args === "object" && this.callOfArgs.get(args)) || ""
    this.executions.push({ tool, callId, args, answered })
  }
}

/** The port's suspension helper, given the scenario's Request (its id kept). */
export function suspension(tn, request) {
  return tn.pending(request)
}

function nativeTool(tn, spec, recorder) {
  const behaviour = spec.behaviour ?? {}
  return {
    name: spec.name,
    description: spec.description ?? "",
    inputSchema: spec.schema ?? NO_ARGUMENTS(),
    source: "native",
    async execute(args, ctx) {
      const answer = ctx?.answer
      recorder.executed(spec.name, args, answer !== undefined)
      if (behaviour.delayMs) await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs))
      // A reply's or failure's own metadata rides along as scripted.
      const metadata = behaviour.metadata === undefined ? {} : { metadata: behaviour.metadata }
      if ("reply" in behaviour) return { output: behaviour.reply, isError: false, ...metadata }
      if ("fail" in behaviour) return { output: behaviour.fail, isError: true, ...metadata }
      if ("alwaysSuspend" in behaviour) return suspension(tn, behaviour.alwaysSuspend)
      if (answer === undefined) return suspension(tn, behaviour.suspend)
      const then = behaviour.then ?? {}
      if ("reply" in then) return { output: then.reply, isError: false }
      const output = answer.data?.output
      return { output: typeof output === "string" ? output : "", isError: false }
    },
  }
}

/**
 * The port's Toolkit for a protocol <toolkit>; protocol v1.1 `register` tools are then added
 * in one toolkit.register call. The port has no relay tools (0.16.0).
 */
export async function buildToolkit(tn, spec, recorder) {
  const toolkit = await tn.createToolkit({ builtins: Boolean(spec.builtins), extraTools: portTools(tn, spec.tools, recorder) })
  if (!spec.register?.length) return toolkit
  try {
    return toolkit.register(...portTools(tn, spec.register, recorder))
  } catch (e) {
    await toolkit.close()
    throw e
  }
}

function portTools(tn, specs, recorder) {
  return (specs ?? []).map((tool) => {
    if (tool.relay) {
      throw new RpcError(UNSUPPORTED, `the js port has no relay tools (tool ${tool.name})`, { capability: "relay" })
    }
    return nativeTool(tn, tool, recorder)
  })
}
