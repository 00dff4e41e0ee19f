// neutral.go maps the port's non-wire values to the protocol's neutral shapes (SPEC §4):
// RunResult's summary fields, MetricEvent and StreamEvent (PascalCase structs without
// json tags). Wire data inside them — messages, the pending Request, a pending event's
// Request — is left as the port's own values, so encoding/json writes it with the port's
// own tags, exactly as a Go host would.
package main

import (
	"encoding/json"

	tn "github.com/muthuishere/toolnexus/golang"
)

func neutralResult(r tn.RunResult) map[string]any {
	calls := make([]map[string]any, 0, len(r.ToolCalls))
	for _, c := range r.ToolCalls {
		calls = append(calls, map[string]any{"name": c.Name, "args": c.Args, "output": c.Output, "isError": c.IsError})
	}
	out := map[string]any{
		"status":        r.Status,
		"text":          r.Text,
		"messages":      r.Messages,
		"model":         r.Model,
		"turns":         r.Turns,
		"toolCalls":     calls,
		"toolCallCount": r.ToolCallCount,
		"usage":         r.Usage,
	}
	if r.Limit != "" {
		out["limit"] = r.Limit
	}
	if r.Pending != nil {
		out["pending"] = r.Pending
	}
	return out
}

func neutralMetric(ev tn.MetricEvent) map[string]any {
	switch ev.Event {
	case "tool":
		m := map[string]any{"event": "tool", "tool": ev.Tool, "source": ev.Source, "isError": ev.IsError, "ms": ev.Ms}
		if ev.Pending {
			m["pending"] = true
		}
		return m
	case "llm":
		return map[string]any{"event": "llm", "model": ev.Model, "status": ev.Status, "ms": ev.Ms,
			"promptTokens": ev.PromptTokens, "completionTokens": ev.CompletionTokens}
	default:
		m := map[string]any{"event": ev.Event, "model": ev.Model, "turns": ev.Turns, "toolCalls": ev.ToolCalls,
			"totalTokens": ev.TotalTokens, "ms": ev.Ms}
		if ev.Error != "" {
			m["error"] = ev.Error
		}
		return m
	}
}

// neutralEvent maps one stream event and encodes it at once: the port may keep using
// the maps inside an event it has sent (a pending Request's data), and a host that
// forwards events serializes them when it receives them.
func neutralEvent(ev tn.StreamEvent) (json.RawMessage, error) {
	var m map[string]any
	switch ev.Type {
	case "text":
		m = map[string]any{"type": "text", "delta": ev.Delta}
	case "tool_call":
		args := ev.Args
		if args == nil {
			args = map[string]any{}
		}
		m = map[string]any{"type": "tool_call", "id": ev.ID, "name": ev.Name, "args": args}
	case "tool_result":
		m = map[string]any{"type": "tool_result", "id": ev.ID, "name": ev.Name, "output": ev.Output, "isError": ev.IsError}
	case "usage":
		m = map[string]any{"type": "usage", "usage": ev.Usage}
	case "pending":
		m = map[string]any{"type": "pending", "request": ev.Request}
	case "done":
		m = map[string]any{"type": "done", "result": neutralResult(*ev.Result)}
	default:
		m = map[string]any{"type": ev.Type}
	}
	return json.Marshal(m)
}
